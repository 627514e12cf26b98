"""The workshop's analysis (``buzzer.bots.workshop``) with a bot trained in the test: buzz points and
where the top guess is first right, leave-one-sentence-out, term weights, occlusion, the target state,
the predictions a version keeps and how a buzz moves between versions, and the bad input. The LLM
bot against a scripted stand-in endpoint (``tests.support.fake_llm``): its buzz from a few prefixes
asked at once, its cost, and an endpoint that fails."""

from __future__ import annotations

import json
import threading
from typing import Any

import numpy as np
import pytest
from tossup_bot.llm import ChatGuesser

from buzzer.bots import workshop
from tests.bots.workshop_fixture import (
    ANSWER_LINE,
    GIVEAWAY,
    LLM_COMPLETION_TOKENS,
    VAGUE,
    curie_llm,
    fixture_bot,
)
from tests.support.fake_llm import completion, fake_llm, prompt_of


@pytest.fixture(scope="module")
def bot() -> workshop.TfidfBot:
    return fixture_bot()


def test_the_giveaway_moved_later_moves_the_buzz_later(bot) -> None:
    early = workshop.analyse([bot], GIVEAWAY + VAGUE, ANSWER_LINE, "Science")
    late = workshop.analyse([bot], VAGUE + GIVEAWAY, ANSWER_LINE, "Science")
    e, la = early["bots"][0], late["bots"][0]
    assert e["buzz"] is not None and e["buzz"]["correct"] and e["buzz"]["answer"] == "Marie Curie"
    assert la["buzz"] is not None and la["buzz"]["correct"]
    n_vague = len(VAGUE.split())
    assert e["buzz"]["index"] < len(GIVEAWAY.split())  # within the giveaway sentence at the start
    assert la["buzz"]["index"] >= n_vague  # not before the giveaway is read
    assert e["earliest_right"] <= e["buzz"]["index"] and la["earliest_right"] >= n_vague - 1
    assert early["target"]["state"] == "giveaway_early"
    assert late["target"]["state"] == "stumps_bots"
    assert e["guesses"][0] == {**e["guesses"][0], "answer": "Marie Curie", "verdict": "correct"}
    assert "confidence" in e["guesses"][0]


def test_leave_one_sentence_out_names_the_giveaway_sentence(bot) -> None:
    result = workshop.analyse([bot], VAGUE + GIVEAWAY, ANSWER_LINE, "")["bots"][0]
    drops = result["sentences"]
    assert len(drops) == 3
    assert max(drops, key=lambda s: s["drop"])["start"] == len(VAGUE.split())  # the last sentence
    assert drops[-1]["drop"] > 0.2


def test_term_weights_highlight_the_giveaway_words(bot) -> None:
    result = workshop.analyse([bot], VAGUE + GIVEAWAY, ANSWER_LINE, "")["bots"][0]
    words = {d["word"].strip(".").lower() for d in result["drivers"]}
    assert {"polonium", "radium"} <= words
    assert all(d["weight"] > 0 for d in result["drivers"]) and len(result["drivers"]) <= workshop.TOP_DRIVERS


def test_occlusion_is_the_score_drop_without_each_word() -> None:
    def score(texts):
        return np.array([t.split().count("key") * 1.0 + 0.1 * len(t.split()) for t in texts])

    weights = workshop.occlusion(score, ["a", "key", "b"])
    assert weights.tolist() == pytest.approx([0.1, 1.1, 0.1])


def test_a_prompt_and_a_wrong_guess_are_judged_as_such(bot) -> None:
    result = workshop.analyse(
        [bot], "This city on the Seine has the Louvre.", "Madame Curie [prompt on Paris]", ""
    )
    top = result["bots"][0]["guesses"][0]
    assert (top["answer"], top["verdict"]) == ("Paris", "prompt")
    other = workshop.analyse([bot], "This city on the Seine has the Louvre.", "Marie Curie", "")
    assert other["bots"][0]["guesses"][0]["verdict"] == "wrong"


def test_predict_is_the_analysis_buzz_and_shift_says_how_it_moved(bot) -> None:
    before = workshop.predict([bot], GIVEAWAY + VAGUE, ANSWER_LINE)
    after = workshop.predict([bot], VAGUE + GIVEAWAY, ANSWER_LINE)
    analysed = workshop.analyse([bot], VAGUE + GIVEAWAY, ANSWER_LINE)["bots"][0]["buzz"]
    assert after["tfidf"] == {"buzz_index": analysed["index"], "answer": "Marie Curie", "correct": True}
    moved = after["tfidf"]["buzz_index"] - before["tfidf"]["buzz_index"]
    assert workshop.buzz_shift(before, after) == {
        "tfidf": f"buzzed {moved} words later than the last version"
    }
    never = {"tfidf": {"buzz_index": None, "answer": "", "correct": False}}
    assert workshop.buzz_shift(after, never)["tfidf"].startswith("no longer buzzes")


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ("", "the answer line is empty"),
        ("Curie [accept Maria", "unclosed '[' opened at character 7"),
        ("Curie] [prompt on Madame]", "unmatched ']' at character 6"),
        ("[accept Curie]", "no main answer before the directives"),
    ],
)
def test_bad_answer_lines_are_named(bot, line: str, error: str) -> None:
    assert any(e.startswith(error) for e in workshop.answer_line_errors(line))
    with pytest.raises(workshop.WorkshopError) as raised:
        workshop.analyse([bot], VAGUE, line)
    assert raised.value.code == "bad_answer_line"


def test_html_answer_lines_parse() -> None:
    assert workshop.answer_line_errors(ANSWER_LINE) == []
    assert workshop.answer_line_errors("<b><u>Paris</u></b> (accept Lutetia)") == []


def test_a_20000_word_paste_is_refused_with_the_limit(bot) -> None:
    with pytest.raises(workshop.WorkshopError) as raised:
        workshop.analyse([bot], "word " * 20_000, ANSWER_LINE)
    assert raised.value.code == "text_too_long" and "20,000 words" in raised.value.message


def test_prefixes_every_word_then_in_steps() -> None:
    assert workshop.prefix_lengths(5, 2) == [2, 3, 4, 5]
    long = workshop.prefix_lengths(900)
    assert len(long) <= workshop.EVERY_WORD_UP_TO + 1 and long[-1] == 900
    assert workshop.sentence_spans(["A", "bb.", "J.", "Smith", "wrote", "cc!", "D"]) == [
        (0, 2),
        (2, 6),
        (6, 7),
    ]


def test_no_buzz_before_the_bots_minimum_words(bot) -> None:
    short = "Polonium radium Pierre."  # 3 words: the fixture bot waits for 3
    assert workshop.predict([bot], short, ANSWER_LINE)["tfidf"]["buzz_index"] == 2
    bot.min_tokens = 4
    try:
        assert workshop.predict([bot], short, ANSWER_LINE)["tfidf"] == {
            "buzz_index": None,
            "answer": "Marie Curie",
            "correct": True,
        }
        assert workshop.analyse([bot], short, ANSWER_LINE)["bots"][0]["buzz"] is None
    finally:
        bot.min_tokens = 3


class KeywordNeural:
    """A stand-in for ``NeuralGuesser`` (its ``answers``, ``top_classes``, ``probabilities``): a softmax
    over keyword counts, so occlusion has a known answer."""

    answers = ["Marie Curie", "Paris"]
    keys = ({"polonium", "radium"}, {"seine", "louvre"})

    def probabilities(self, texts):
        counts = np.array(
            [[sum(w.strip(".").lower() in k for w in t.split()) for k in self.keys] for t in texts]
        )
        e = np.exp(2.0 * counts)
        return e / e.sum(axis=1, keepdims=True)

    def top_classes(self, texts, k):
        p = self.probabilities(texts)
        order = np.argsort(-p, axis=1)[:, :k]
        return order, np.take_along_axis(p, order, axis=1)


def test_the_neural_guesser_buzzes_on_its_softmax_and_explains_by_occlusion() -> None:
    bot = workshop.NeuralBot(KeywordNeural())
    result = workshop.analyse([bot], VAGUE + GIVEAWAY, ANSWER_LINE)["bots"][0]
    n_vague = len(VAGUE.split())
    assert result["buzz"]["answer"] == "Marie Curie" and result["buzz"]["index"] >= n_vague
    assert result["method"] == "occlusion"
    assert {d["word"].strip(".") for d in result["drivers"]} == {"polonium", "radium"}
    # without the giveaway sentence: no keyword left, P(Curie) from 1 / (1 + e^-4) to 1/2
    assert result["sentences"][-1]["drop"] == pytest.approx(1 / (1 + np.exp(-4)) - 0.5, abs=1e-3)
    assert [s["drop"] for s in result["sentences"][:-1]] == [0.0, 0.0]


def llm_bot(url: str, model: str = "curie", max_prefixes: int = 6, **options: Any) -> workshop.LlmBot:
    guesser = ChatGuesser(
        url=url, model=model, api_key="sk-workshop-test", threshold=0.8, min_tokens=1, **options
    )
    return workshop.LlmBot(guesser, "llm:Fake", "Fake LLM", max_prefixes, cost_per_prefix=0.001)


def test_the_llm_buzzes_at_the_first_asked_prefix_it_is_sure_of() -> None:
    with fake_llm(curie_llm) as llm:
        bot = llm_bot(llm.url)
        early = workshop.analyse([bot], GIVEAWAY + VAGUE, ANSWER_LINE, "Science")
        assert len(llm.requests) == 3  # the three sentence ends, the last the whole text
        late = workshop.analyse([bot], VAGUE + GIVEAWAY, ANSWER_LINE, "Science")
        predicted = workshop.predict([llm_bot(llm.url)], VAGUE + GIVEAWAY, ANSWER_LINE)
    e, la = early["bots"][0], late["bots"][0]
    n, end_of_giveaway = len(early["words"]), len(GIVEAWAY.split()) - 1
    assert e["buzz"] == {
        "index": end_of_giveaway,
        "answer": "Marie Curie",
        "confidence": 0.9,
        "verdict": "correct",
        "correct": True,
    }
    assert e["earliest_right"] == end_of_giveaway and early["target"]["state"] == "giveaway_early"
    assert e["llm"]["prefixes"] == [end_of_giveaway, end_of_giveaway + 14, n - 1]  # VAGUE: 14 + 20 words
    assert la["buzz"]["index"] == la["earliest_right"] == n - 1 and late["target"]["state"] == "stumps_bots"
    assert la["llm"]["requests"] == 3 and len(llm.requests) == 6 + 3  # each analysis reports its own
    assert e["guesses"] == [{"answer": "Marie Curie", "score": 0.9, "verdict": "correct", "confidence": 0.9}]
    # Nothing it cannot score honestly: no sentence drops, no driver words.
    assert (e["sentences"], e["drivers"], e["method"]) == ([], [], "not available")
    assert predicted == {"llm:Fake": {"buzz_index": n - 1, "answer": "Marie Curie", "correct": True}}


def test_the_llm_is_asked_on_at_most_its_prefixes_and_its_cost_is_tokens_times_prices() -> None:
    text = " ".join(f"Clue number {k} here." for k in range(1, 11))  # 10 sentences of 4 words
    with fake_llm(curie_llm) as llm:
        bot = llm_bot(llm.url, max_prefixes=4, price_in=2, price_out=10)
        result = workshop.analyse([bot], text, ANSWER_LINE)["bots"][0]
        asked = [prompt_of(r["body"]) for r in llm.requests]
    assert len(asked) == 4 and sum(text in prompt for prompt in asked) == 1  # the whole text once
    assert result["llm"]["prefixes"] == [3, 19, 35, 39]  # sentences 1, 5, 9 (evenly spaced) and the end
    prompt_tokens = sum(len(prompt.split()) for prompt in asked)
    assert result["llm"] == {
        **result["llm"],
        "requests": 4,
        "failures": 0,
        "prompt_tokens": prompt_tokens,
        "completion_tokens": 4 * LLM_COMPLETION_TOKENS,
        "cost_per_prefix": 0.001,
        "error": None,
    }
    assert result["llm"]["cost"] == pytest.approx((prompt_tokens * 2 + 4 * LLM_COMPLETION_TOKENS * 10) / 1e6)


def test_the_llms_prefixes_are_asked_at_once() -> None:
    """Each reply waits until all three prefixes were asked: asked one after another, the first would
    time out."""
    together = threading.Barrier(3, timeout=20)

    def reply(body: dict[str, Any]) -> tuple[int, bytes]:
        together.wait()
        return 200, completion(json.dumps({"guess": "Marie Curie", "confidence": 0.9}), 10, 1)

    with fake_llm(reply) as llm:
        result = workshop.analyse([llm_bot(llm.url, budget=30)], VAGUE + GIVEAWAY, ANSWER_LINE)["bots"][0]
    assert result["llm"]["requests"] == 3 and result["llm"]["failures"] == 0
    assert result["buzz"]["correct"]


def test_a_failing_endpoint_gives_its_card_the_failure_and_the_other_bots_their_results(bot) -> None:
    with fake_llm(curie_llm) as llm:
        broken = llm_bot(llm.url, model="error")
        analysis = workshop.analyse([bot, broken], GIVEAWAY + VAGUE, ANSWER_LINE, at_once=True)
    tfidf, failed = analysis["bots"]
    assert tfidf["buzz"]["correct"] and tfidf["guesses"][0]["answer"] == "Marie Curie"
    assert failed["buzz"] is None and failed["guesses"] == [] and failed["earliest_right"] is None
    assert failed["llm"]["failures"] == failed["llm"]["requests"] == 3
    assert (
        failed["llm"]["error"].startswith("HTTP 500 from the endpoint")
        and "overloaded" in failed["llm"]["error"]
    )
    assert llm.url not in json.dumps(analysis)


def test_the_api_key_is_never_in_the_llms_report() -> None:
    def refuse(body: dict[str, Any]) -> tuple[int, bytes]:  # some APIs echo the key they refuse
        return 401, b'{"error": "invalid key sk-workshop-test"}'

    with fake_llm(refuse) as llm:
        result = workshop.analyse([llm_bot(llm.url)], VAGUE, ANSWER_LINE)["bots"][0]
        assert {r["auth"] for r in llm.requests} == {"Bearer sk-workshop-test"}
    assert "HTTP 401" in result["llm"]["error"] and "[key]" in result["llm"]["error"]
    assert "sk-workshop-test" not in json.dumps(result)
