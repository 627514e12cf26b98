"""A hybrid team on real tablets (HYBRID.md), in Chromium against a real server: the team's
semi-autonomous AI wants to buzz and a player confirms it on the tablet; on the bonus the captain
asks to see the AI's answer (guess, confidence, explanation), consults it, and the part scores
with the qanta26 consult deflation; the other team's tablet never shows the AI's suggestion.
Screenshots: tests/artifacts/screenshots/tablet-confirm-bot.png, tablet-bonus-consult.png."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.frontend.room import IPAD, Room, join, moderate, room_server, shot
from tests.support.browser import chromium
from tests.support.live import manage

pytestmark = pytest.mark.browser

# The bot's seat, driven over its own play socket from a page: `open` connects, `send` resolves
# with the ack (or rejects with the error frame) of one frame.
BOT_JS = """([code, token, frame]) => {
  const bot = window.__bot || (window.__bot = { frames: [], waiting: {} });
  const ready = bot.ready || (bot.ready = new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://${location.host}/ws/match/${code}/play/?token=${encodeURIComponent(token)}`);
    bot.ws = ws;
    ws.onmessage = (msg) => {
      const f = JSON.parse(msg.data);
      bot.frames.push(f);
      if (f.type === "snapshot") resolve();
      const w = f.ref != null && bot.waiting[f.ref];
      if (w) { delete bot.waiting[f.ref]; f.type === "ack" ? w.resolve(f) : w.reject(new Error(JSON.stringify(f))); }
    };
    ws.onerror = () => reject(new Error("bot socket failed"));
  }));
  if (!frame) return ready.then(() => null);
  return ready.then(() => new Promise((resolve, reject) => {
    const ref = "b" + bot.frames.length + Math.random();
    bot.waiting[ref] = { resolve, reject };
    bot.ws.send(JSON.stringify({ ...frame, ref }));
    setTimeout(() => reject(new Error("no answer to " + JSON.stringify(frame))), 10000);
  }));
}"""


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory, redis_url: str) -> Iterator[Room]:
    with room_server(Path(tmp_path_factory.mktemp("room")), redis_url) as r:
        yield r


def hybrid_match(room: Room, bot: str = "Robo@Team A:mid:semi_autonomous") -> dict[str, Any]:
    config = {"wpm": 150, "answer_window": 20, "bonus_part_window": 60, "confirm_window": 30}
    out = manage(
        room.env,
        "create_match",
        "--teams",
        "Team A,Team B",
        "--tossups",
        "1",
        "--preset",
        "qanta26",
        "--team-bot",
        bot,
        "--config",
        json.dumps(config),
        "--json",
        "--base-url",
        room.url,
    )
    return dict(json.loads(out))


def bot_send(page: Any, match: dict[str, Any], frame: dict[str, Any] | None) -> Any:
    bot = match["bots"][0]
    return page.evaluate(BOT_JS, [match["code"], bot["token"], frame])


def bot_event(page: Any, name: str, nth: int = 0) -> dict[str, Any]:
    """The data of the ``nth`` ``name`` event the bot's socket received (waits for it)."""
    events = "(window.__bot.frames || []).filter((f) => f.type === 'event' && f.event === name)"
    page.wait_for_function(f"([name, nth]) => {events}.length > nth", arg=[name, nth])
    return dict(page.evaluate(f"([name, nth]) => {events}[nth].data", [name, nth]))


def test_a_captain_confirms_the_ais_buzz_and_consults_it_on_a_bonus_part(room: Room) -> None:
    from playwright.sync_api import expect

    match = hybrid_match(room)
    errors: list[str] = []
    with chromium() as browser:
        captain = browser.new_context(viewport=IPAD, has_touch=True).new_page()
        rival = browser.new_context(viewport=IPAD, has_touch=True).new_page()
        desk = browser.new_page()  # the moderator's commands and the bot's socket
        for page in (captain, rival):
            page.on("pageerror", lambda exc: errors.append(str(exc)))
        join(captain, room.url, match["code"], "Ada", "Team A")
        join(rival, room.url, match["code"], "Bea", "Team B")
        desk.goto(room.url)
        bot_send(desk, match, None)
        moderate(desk, match, name="start")
        expect(captain.locator("#q-text .w").nth(2)).to_be_visible(timeout=15_000)
        qid = bot_event(desk, "tossup_started")["question_id"]

        # The AI would buzz: its team's tablet asks for a confirmation; the other team sees nothing.
        bot_send(desk, match, {"type": "buzz", "question_id": qid, "token_index": 2})
        prompt = captain.locator("#confirm")
        expect(prompt).to_be_visible()
        expect(prompt).to_contain_text("Robo would buzz at word")
        expect(rival.locator("#confirm")).to_be_hidden()
        shot(captain, "tablet-confirm-bot")
        captain.get_by_role("button", name="Confirm buzz").tap()
        expect(prompt).to_be_hidden()
        expect(captain.locator("#banner")).to_contain_text("Robo (Team A) buzzed")
        bot_send(desk, match, {"type": "answer", "question_id": qid, "text": "a guess"})
        moderate(desk, match, name="rule", verdict="accept")  # the moderator rules it right

        # The bonus: the captain's tablet offers the AI's answer on request, then the choice.
        part = bot_event(desk, "bonus_part")
        consult = captain.locator("#consult")
        expect(consult).to_be_visible(timeout=10_000)
        expect(captain.locator("#consult-suggestion")).to_be_hidden()
        expect(captain.get_by_role("button", name="Consult the AI")).to_be_disabled()  # no suggestion yet
        suggestion = {
            "type": "bonus_suggestion",
            "bonus_id": part["bonus_id"],
            "part": part["part"],
            "guess": "Hamlet",
            "confidence": 0.9,
            "explanation": "Yorick's skull and Rosencrantz point to the Danish prince.",
        }
        bot_send(desk, match, suggestion)
        captain.get_by_role("button", name="Show the AI's answer").tap()
        shown = captain.locator("#consult-suggestion")
        expect(shown).to_be_visible()
        expect(shown.locator(".ai-guess")).to_have_text("Hamlet")
        expect(shown.locator(".ai-confidence")).to_have_text("(90% confident)")
        expect(shown.locator(".ai-explanation")).to_contain_text("Yorick's skull")
        expect(captain.locator("#consult-who")).to_have_text("You are the captain: choose.")
        # The other team's tablet shows the bonus, never the AI's suggestion.
        expect(rival.locator("#bonus")).to_be_visible()
        expect(rival.locator("#consult")).to_be_hidden()
        assert "Hamlet" not in rival.content()
        shot(captain, "tablet-bonus-consult")

        captain.get_by_role("button", name="Consult the AI").tap()
        expect(captain.locator("#consult-who")).to_have_text("Decision: consult the AI")
        expect(captain.locator("#bonus-form")).to_be_hidden()  # the AI's answer is the team's
        moderate(desk, match, name="rule", verdict="accept")
        # qanta26: a correct consult of a mid AI scores 10 − 2.
        expect(captain.locator("#bonus-result")).to_have_text("Part 1: correct (+8) — consult the AI")
        expect(rival.locator("#bonus-result")).to_have_text("Part 1: correct (+8) — consult the AI")
        expect(captain.locator("#consult")).to_be_visible()  # part 2: a new choice
        captain.get_by_role("button", name="Abstain").tap()
        expect(captain.locator("#bonus-result")).to_have_text("Part 2: abstained (+1) — abstain")
    assert errors == []


def test_the_moderator_delegates_an_answer_to_the_teams_ai_from_the_dashboard_and_reverts(room: Room) -> None:
    from playwright.sync_api import expect

    match = hybrid_match(room, "Robo@Team A:mid")
    errors: list[str] = []
    with chromium() as browser:
        captain = browser.new_context(viewport=IPAD, has_touch=True).new_page()
        dashboard = browser.new_page()
        helper = browser.new_page()  # the bot's socket
        for page in (captain, dashboard):
            page.on("pageerror", lambda exc: errors.append(str(exc)))
        join(captain, room.url, match["code"], "Ada", "Team A")
        dashboard.goto(match["dashboard_url"])
        helper.goto(room.url)
        bot_send(helper, match, None)
        moderate(helper, match, name="start")
        expect(captain.locator("#q-text .w").nth(1)).to_be_visible(timeout=15_000)
        captain.locator("#buzz").tap()
        expect(captain.locator("#answer-input")).to_be_visible()

        tools = dashboard.locator("#hybrid-tools")
        tools.get_by_role("button", name="Delegate to Robo").click()
        delegated = bot_event(helper, "answer_delegated")
        assert delegated["answerer_id"] == match["bots"][0]["player_id"]
        expect(captain.locator("#banner")).to_have_text("The moderator gave the answer to Robo")
        tools.get_by_role("button", name="Revert to Ada").click()
        assert bot_event(helper, "answer_delegated", 1)["answerer_id"] == delegated["player_id"]
        expect(captain.locator("#banner")).to_have_text("Ada answers again")
        tools.get_by_role("button", name="Delegate to Robo").click()
        bot_event(helper, "answer_delegated", 2)
        qid = delegated["question_id"]
        bot_send(helper, match, {"type": "answer", "question_id": qid, "text": "Moby Dick"})
        dashboard.locator("#ruling button[data-rule=accept]").click()
        ruled = bot_event(helper, "buzz_ruled")
        assert (ruled["player_id"], ruled["answerer_id"], ruled["points"]) == (
            delegated["player_id"],
            delegated["answerer_id"],
            12,  # a power (15) answered by a mid AI: × 0.8
        )
    assert errors == []
