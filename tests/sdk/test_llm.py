"""``tossup_bot.llm.ChatGuesser`` against a local chat-completions server (``tests.support.fake_llm``:
``http.server`` on 127.0.0.1 speaking the OpenAI API): JSON, fenced, loose-text, slow, malformed and
failing replies; tokens and cost; and a slow endpoint inside a scripted match never holding it up."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from tossup_bot import BonusPart, TossupPrefix, load_guesser, run_bot
from tossup_bot.llm import GRACE, ChatGuesser, parse_reply

from tests.bots.fake_server import ME, MY_TEAM, Session, play, snapshot, until
from tests.support.fake_llm import FakeLLM, completion, fake_llm, prompt_of

SLOW = 3.0  # seconds the "slow" model takes: over the budgets used below
COMPLETION_TOKENS = 12


def content_for(model: str, prompt: str) -> str:
    """What the fake model says: it knows one novel by its ship."""
    known = "Pequod" in prompt
    answer = {
        "guess": "Moby-Dick" if known else "Hamlet",
        "confidence": 0.95 if known else 0.1,
        "explanation": "the Pequod is Ahab's ship" if known else "a guess",
    }
    if model == "fenced":
        return f"Sure! Here it is:\n```json\n{json.dumps(answer)}\n```\nGood luck."
    if model == "loose":
        return f"**Answer:** {answer['guess']}\nConfidence: {round(answer['confidence'] * 100)}%\n"
    return json.dumps(answer)


def by_model(body: dict[str, Any]) -> tuple[int, bytes]:
    """The model name picks the behaviour; the prompt's words are its prompt tokens."""
    model, prompt = body["model"], prompt_of(body)
    if model == "slow":
        time.sleep(SLOW)
    if model == "error":
        return 500, b'{"error": {"message": "overloaded"}}'
    if model == "malformed":
        return 200, b"<html>not a completion</html>"
    if model == "nochoices":
        return 200, json.dumps({"object": "chat.completion", "choices": []}).encode()
    return 200, completion(content_for(model, prompt), len(prompt.split()), COMPLETION_TOKENS, model)


@pytest.fixture
def llm_server() -> Iterator[FakeLLM]:
    with fake_llm(by_model) as server:
        yield server


def prefix(text: str, qid: int = 1, count: int = 40) -> TossupPrefix:
    return TossupPrefix(qid, 0, tuple(text.split()), count, "Literature")


MOBY = "This novel's harpooneers include Queequeg. A doubloon is nailed to the mast of the Pequod"


def test_parse_reply_reads_json_fences_prose_and_loose_text() -> None:
    assert parse_reply('{"guess": "Paris", "confidence": 0.7}') == ("Paris", 0.7, "")
    assert parse_reply('I think {"answer": "Paris", "confidence": "85%", "reason": "capital"} ok') == (
        "Paris",
        0.85,
        "capital",
    )
    assert parse_reply('```json\n{"guess": "Oslo", "confidence": 80}\n```') == ("Oslo", 0.8, "")
    assert parse_reply("Answer: Oslo\nConfidence: 0.4\nExplanation: fjords") == ("Oslo", 0.4, "fjords")
    assert parse_reply("Lima") == ("Lima", 0.0, "")  # a bare answer: never confident enough to buzz
    assert parse_reply('{"guess": "", "confidence": 0.9}') == ("", 0.0, "")
    assert parse_reply('{"guess": "X", "confidence": "very"}') == ("X", 0.0, "")
    assert parse_reply("") == ("", 0.0, "")


def test_json_reply_gives_guess_confidence_buzz_tokens_and_cost(llm_server: FakeLLM) -> None:
    guesser = ChatGuesser(
        url=llm_server.url, model="json", api_key="sk-test", price_in="1.5", price_out="2", min_tokens="0"
    )
    guess = guesser.guess_tossup(prefix(MOBY))
    assert (guess.guess, guess.confidence, guess.buzz) == ("Moby-Dick", 0.95, True)
    request = llm_server.requests[0]
    assert request["path"] == "/v1/chat/completions" and request["auth"] == "Bearer sk-test"
    assert request["body"]["model"] == "json" and MOBY in request["body"]["messages"][1]["content"]
    prompt_tokens = len(request["body"]["messages"][1]["content"].split())
    assert guess.cost == pytest.approx((prompt_tokens * 1.5 + COMPLETION_TOKENS * 2) / 1e6)
    assert (
        guesser.usage.prompt_tokens == prompt_tokens and guesser.usage.completion_tokens == COMPLETION_TOKENS
    )
    not_sure = guesser.guess_tossup(prefix("This play's title character", qid=2))
    assert (not_sure.guess, not_sure.buzz) == ("Hamlet", False)
    assert guesser.usage.requests == 2 and guesser.usage.failures == 0
    assert guesser.usage.cost == pytest.approx(guess.cost + not_sure.cost)


@pytest.mark.parametrize("model", ["fenced", "loose"])
def test_fenced_and_loose_text_replies_are_read(llm_server: FakeLLM, model: str) -> None:
    guesser = ChatGuesser(url=llm_server.url, model=model, min_tokens=0, threshold=0.9)
    guess = guesser.guess_tossup(prefix(MOBY))
    assert (guess.guess, guess.confidence, guess.buzz) == ("Moby-Dick", 0.95, True)


@pytest.mark.parametrize("model", ["malformed", "nochoices", "error"])
def test_unusable_replies_are_a_silent_non_buzz(llm_server: FakeLLM, model: str) -> None:
    guesser = ChatGuesser(url=llm_server.url, model=model, min_tokens=0)
    guess = guesser.guess_tossup(prefix(MOBY))
    assert (guess.guess, guess.confidence, guess.buzz) == ("", 0.0, False)
    assert guesser.usage.requests == 1 and guesser.usage.failures == 1
    why = {"malformed": "not JSON", "nochoices": "no choices[0].message.content", "error": "HTTP 500"}[model]
    assert why in guesser.usage.last_failure


def test_a_slow_reply_is_abandoned_soon_after_the_budget(llm_server: FakeLLM) -> None:
    guesser = ChatGuesser(url=llm_server.url, model="slow", budget="0.4", min_tokens=0)
    started = time.monotonic()
    guess = guesser.guess_tossup(prefix(MOBY))
    assert time.monotonic() - started < 0.4 + GRACE + 0.5 < SLOW
    assert (guess.guess, guess.buzz) == ("", False) and guesser.usage.failures == 1


def test_throttling_min_tokens_and_every(llm_server: FakeLLM) -> None:
    guesser = ChatGuesser(url=llm_server.url, model="json", min_tokens=3, every=5)
    words = MOBY.split()
    asked = []
    for seen in range(1, len(words) + 1):
        before = len(llm_server.requests)
        guesser.guess_tossup(TossupPrefix(1, 0, tuple(words[:seen]), len(words)))
        if len(llm_server.requests) > before:
            asked.append(seen)
    assert asked == [3, 8, 13, len(words)]  # from min_tokens, every 5 new words, and on the last word


def test_bonus_part_gets_the_explanation(llm_server: FakeLLM) -> None:
    guesser = ChatGuesser(url=llm_server.url, model="json", bonus_prompt="{leadin} | {number}: {text}")
    guess = guesser.guess_bonus(BonusPart(3, 1, "Name these novels.", "Its ship is the Pequod.", 10))
    assert (guess.guess, guess.explanation) == ("Moby-Dick", "the Pequod is Ahab's ship")
    sent = llm_server.requests[0]["body"]["messages"][1]["content"]
    assert sent == "Name these novels. | 2: Its ship is the Pequod."


def test_options_from_the_environment_and_bad_options(
    llm_server: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ValueError, match="needs url and model"):
        ChatGuesser()
    monkeypatch.setenv("TOSSUP_LLM_URL", llm_server.url + "/chat/completions")
    monkeypatch.setenv("TOSSUP_LLM_MODEL", "json")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    guesser = ChatGuesser(min_tokens=0)
    assert guesser.endpoint == llm_server.url + "/chat/completions"
    assert guesser.guess_tossup(prefix(MOBY)).guess == "Moby-Dick"
    assert llm_server.requests[0]["auth"] == "Bearer sk-env"
    with pytest.raises(ValueError, match="budget must be a number"):
        ChatGuesser(budget="soon")
    with pytest.raises(ValueError, match="unknown or malformed field"):
        ChatGuesser(tossup_prompt="{question}")


async def test_a_slow_endpoint_never_holds_the_match_up(llm_server: FakeLLM) -> None:
    """Loaded as ``tossup-bot`` loads it (string options). While the slow model thinks, heartbeats are
    answered at once; its replies come after the budget and are dropped, so it never buzzes late."""
    options = {"url": llm_server.url, "model": "slow", "budget": "0.3", "min_tokens": "1"}
    guesser = load_guesser("tossup_bot.llm:ChatGuesser", options)

    async def script(s: Session) -> None:
        await s.ws.send(snapshot())
        await s.event("tossup_started", index=0, question_id=5, token_count=30, category="Literature")
        await s.words(5, 0, *MOBY.split())
        await until(lambda: len(llm_server.requests) >= 1)
        sent = time.monotonic()
        server_time = await s.heartbeat()
        await until(lambda: server_time in s.heartbeat_acks)
        assert time.monotonic() - sent < 0.2  # answered while the model is still thinking
        await s.quiet(0.8)  # the reply was over budget: no buzz
        await s.event("match_ended", scores={})

    stats, _ = await play(script, lambda url: run_bot(url, guesser))
    assert stats["late"] >= 1 and stats["buzzes"] == 0 and stats["guesses"] == 0


async def test_a_fast_endpoint_buzzes_answers_and_explains_a_bonus(llm_server: FakeLLM) -> None:
    guesser = ChatGuesser(url=llm_server.url, model="json", min_tokens=1, price_in=1, price_out=1)
    lines: list[str] = []
    costs: list[float] = []

    async def script(s: Session) -> None:
        await s.ws.send(snapshot())
        await s.event("tossup_started", index=0, question_id=6, token_count=30, category="Literature")
        await s.words(6, 0, *MOBY.split())
        buzz = await s.expect("buzz")
        assert (buzz["question_id"], buzz["token_index"]) == (6, len(MOBY.split()) - 1)
        costs.append(buzz["cost"])  # the guess's own cost, declared for the race's tie-break
        await s.event("buzz", question_id=6, player_id=ME, team_id=MY_TEAM, kind="bot", token_index=5)
        assert (await s.expect("answer"))["text"] == "Moby-Dick"
        await s.event("buzz_ruled", question_id=6, player_id=ME, team_id=MY_TEAM, ruling="correct", points=10)
        await s.event("bonus_started", bonus_id=8, team_id=MY_TEAM, leadin="Name these.", parts=1)
        await s.event("bonus_part", bonus_id=8, part=0, text="The Pequod.", value=10, answer_deadline=0)
        answer = await s.expect("bonus_answer")
        assert (answer["bonus_id"], answer["part"], answer["text"]) == (8, 0, "Moby-Dick")
        await s.event("match_ended", scores={})

    stats, _ = await play(script, lambda url: run_bot(url, guesser, log=lines.append))
    assert stats["buzzes"] == 1 and stats["correct"] == 1 and stats["bonus_answers"] == 1
    assert stats["cost"] == pytest.approx(guesser.usage.cost) and stats["cost"] > 0
    assert len(costs) == 1 and 0 < costs[0] < stats["cost"]  # one prefix's cost, not the match's
    assert any("the Pequod is Ahab's ship" in line for line in lines)  # the bonus explanation
