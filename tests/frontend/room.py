"""What the room tests share: a real server (uvicorn over a migrated scratch database with the
demo packet and an organiser), matches made with ``create_match``, moderator commands sent
over the moderator websocket from a browser page, layout facts measured in the page, and
axe-core (the copy ``axe-playwright-python`` ships) run with the WCAG 2.1 A/AA rules.

Screenshots go to ``tests/artifacts/screenshots/`` (docs/DEVELOPMENT.md "Screenshots"; CI keeps the folder)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.support.live import BASE_DIR, live_server, manage

SCREENSHOTS = BASE_DIR / "tests" / "artifacts" / "screenshots"
ORGANISER = ("org", "room-test-password")
AA_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]

LAPTOP = {"width": 1366, "height": 768}
PROJECTOR = {"width": 1920, "height": 1080}
IPAD = {"width": 820, "height": 1180}
IPAD_LANDSCAPE = {"width": 1180, "height": 820}
PHONE = {"width": 390, "height": 844}


class Room:
    """A running server: ``url`` to browse, ``env`` for ``manage.py`` on its database."""

    def __init__(self, url: str, env: dict[str, str]) -> None:
        self.url = url
        self.env = env

    def create_match(self, tossups: int = 1, teams: str = "Team A,Team B", **config: Any) -> dict[str, Any]:
        """A lobby match on the demo packet's first ``tossups`` (``create_match --json``'s
        answer); ``config``: MatchConfig overrides (``wpm``, ``answer_window``, ``auto_rule``…)."""
        args = ["--teams", teams, "--tossups", str(tossups), "--config", json.dumps(config)]
        out = manage(self.env, "create_match", *args, "--json", "--base-url", self.url)
        return dict(json.loads(out))


@contextlib.contextmanager
def room_server(tmp: Path, redis_url: str) -> Iterator[Room]:
    """A live server over a scratch database with the demo packet and an organiser."""

    def demo_with_organiser(env: dict[str, str]) -> None:
        manage(env, "import_questions", "--demo")
        manage(env, "create_organiser", ORGANISER[0], "--password-stdin", stdin=ORGANISER[1] + "\n")

    with live_server(tmp, redis_url, demo_with_organiser) as (url, env):
        yield Room(url, env)


# A moderator command over /ws/match/<code>/moderate/: resolves with the ack, rejects with the error frame.
MODERATE_JS = """([code, token, command]) => new Promise((resolve, reject) => {
  const ws = new WebSocket(`ws://${location.host}/ws/match/${code}/moderate/?token=${encodeURIComponent(token)}`);
  const timer = setTimeout(() => reject(new Error("no answer to " + JSON.stringify(command))), 10000);
  ws.onmessage = (msg) => {
    const f = JSON.parse(msg.data);
    if (f.type === "snapshot") ws.send(JSON.stringify({ type: "command", ...command, ref: "t1" }));
    if (f.ref === "t1") {
      clearTimeout(timer);
      ws.close();
      f.type === "ack" ? resolve(f) : reject(new Error(JSON.stringify(f)));
    }
  };
  ws.onerror = () => reject(new Error("moderator socket failed"));
})"""


def moderate(page: Any, match: dict[str, Any], **command: Any) -> None:
    """Send one moderator ``command`` (e.g. ``name="start"``) from ``page`` (on the server's origin)."""
    page.evaluate(MODERATE_JS, [match["code"], match["moderator_token"], command])


def join(page: Any, url: str, code: str, name: str, team: str) -> None:
    """Take a seat on the player page and wait for the live socket."""
    from playwright.sync_api import expect

    page.goto(f"{url}/play/?code={code}")
    expect(page.locator("#join-team option", has_text=team)).to_have_count(1)
    page.fill("#join-name", name)
    page.select_option("#join-team", team)
    page.click("#join-form button[type=submit]")
    expect(page.locator("#conn")).to_have_text("live")


# Where `selector` shows after scrolling it into view, against the BUZZ bar and the window.
LAYOUT_JS = """(selector) => {
  const el = document.querySelector(selector);
  el.scrollIntoView({ block: "nearest" });
  const box = (r) => ({ top: r.top, bottom: r.bottom, left: r.left, right: r.right, height: r.height });
  const r = el.getBoundingClientRect();
  const clip = document.getElementById("game-scroll").getBoundingClientRect();
  const top = Math.max(r.top, clip.top), bottom = Math.min(r.bottom, clip.bottom);
  const x = (Math.max(r.left, clip.left) + Math.min(r.right, clip.right)) / 2;
  const hit = bottom > top ? document.elementFromPoint(x, (top + bottom) / 2) : null;
  return {
    el: box(r), visible: { top, bottom }, scroller: box(clip), buzz: box(document.getElementById("buzz").getBoundingClientRect()),
    hitInside: !!hit && (el === hit || el.contains(hit)), innerHeight: window.innerHeight,
  };
}"""


def assert_buzz_clear_of(page: Any, selector: str) -> dict[str, Any]:
    """The element is on screen above the BUZZ bar, not under it, and the bar is inside the window."""
    fact = page.evaluate(LAYOUT_JS, selector)
    buzz = fact["buzz"]
    assert fact["visible"]["bottom"] > fact["visible"]["top"], (selector, fact)
    assert fact["visible"]["bottom"] <= buzz["top"] + 0.5, (selector, fact)
    assert fact["scroller"]["bottom"] <= buzz["top"] + 0.5, fact  # nothing scrolls under the bar
    assert fact["hitInside"], (selector, fact)  # what is drawn there is the element itself
    assert buzz["top"] >= 0 and buzz["bottom"] <= fact["innerHeight"] + 0.5, fact
    return dict(fact)


def axe_violations(page: Any) -> list[dict[str, Any]]:
    """axe-core's WCAG 2.0/2.1 level A and AA violations on the page as it is now."""
    from axe_playwright_python.sync_playwright import Axe

    # Words fade in (a .15 s animation): measure colours once they are drawn as they stay.
    page.evaluate(
        "Promise.all(document.getAnimations()"
        ".filter((a) => a.effect && a.effect.getComputedTiming().endTime !== Infinity).map((a) => a.finished.catch(() => null)))"
    )
    options = {"runOnly": {"type": "tag", "values": AA_TAGS}, "resultTypes": ["violations"]}
    results = Axe().run(page, options=options)
    return list(results.response["violations"])


def describe_violations(violations: list[dict[str, Any]]) -> str:
    return "\n".join(
        f"{v['id']} ({v['impact']}): {v['help']} at "
        + "; ".join(f"{n['target']} {n.get('failureSummary', '')!r}" for n in v["nodes"][:5])
        for v in violations
    )


def shot(page: Any, name: str, full_page: bool = False) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=full_page)
