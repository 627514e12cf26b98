"""The public match recap (``/match/<code>/recap/``, frontend/recap.py): Django test-client tests
of what it shows and, above all, what it never shows before the reveal (the text and answer line
of a tossup not ended, a bonus part not ruled, anything not read), and a real-Chromium test of its
layout at 390×844 and 1366×768 (no horizontal overflow, headings, WCAG AA, no request off the
server). Screenshots: tests/artifacts/screenshots/recap-390x844.png and recap-1366x768.png.

Matches are played through the service layer (``store.apply_command`` and the commands of
``competition.game``) with explicit times, so every ruling is deterministic."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from competition import game, services
from competition.live import store
from competition.models import Match, Player
from tests.frontend.room import LAPTOP, PHONE, axe_violations, describe_violations, shot
from tests.support.browser import chromium
from tests.support.factories import make_match
from tests.support.live import live_server, manage

T0 = 1_700_000_000.0
WHY = "moby dick is on the answer line"
# Where ``play`` stops: in the lobby, while bonus 1's third part is read, while tossup 2 is read
# (after a neg on it), or with the match ended during bonus 2's second part.
STAGES = ("lobby", "bonus", "reading", "end")


def run(match: Match, command: object, now: float, actor: str = "moderator") -> None:
    store.apply_command(match_id=match.id, command=command, actor=actor, now=now)


def live(match: Match) -> dict:
    return Match.objects.get(pk=match.pk).state


def buzz_in(match: Match, who: Player, index: int, at: float, guess: str, ruling: str) -> None:
    """``who`` buzzes on the newest word revealed at ``at`` on tossup ``index`` (0-based), wins the
    race, says ``guess`` and the moderator rules (``accept`` / ``reject``)."""
    question_id = match.tossup_ids[index]
    run(match, game.Tick(), at, actor="driver")
    token = live(match)["tossup"]["revealed"] - 1
    services.buzz(
        match_id=match.id,
        player_id=who.id,
        question_id=question_id,
        token_index=token,
        client_time=None,
        corrected_press_at=None,
        now=at,
    )
    run(match, game.Tick(), at + 0.25, actor="driver")  # past the collection window: the race is won
    services.answer(match_id=match.id, player_id=who.id, question_id=question_id, text=guess, now=at + 0.4)
    run(match, game.Rule(ruling), at + 0.5)


def bonus_part(match: Match, who: Player, index: int, part: int, at: float, guess: str, ruling: str) -> None:
    """``who`` answers ``part`` (0-based) of bonus ``index``; the moderator rules."""
    services.bonus_answer(
        match_id=match.id, player_id=who.id, bonus_id=match.bonus_ids[index], part=part, text=guess, now=at
    )
    run(match, game.Rule(ruling), at + 0.2)


def play(until: str = "end") -> Match:
    """A moderated match (the factories' packet: tossup answers Moby-Dick, Magna Carta,
    mitochondria; tokens ``clue<i>w<k>``, the power mark after 8 words; bonus parts ``Part k.``,
    answers ``bonusanswer<k>``) played up to ``until`` (one of STAGES):

    * tossup 1: bob (Blue) buzzes on word 3 with "moby dick", rejected (−5); the moderator
      corrects it to correct (``WHY``): a power, 15, the tossup ends; Blue's bonus: part 1
      accepted, part 2 rejected, part 3 times out (``bonus``: stops while part 3 is read);
    * tossup 2: amy (Red) is rejected and the moderator undoes it; bob negs with "habeas
      corpus" (``reading``: stops here, the tossup still read); alice answers "magna carta";
      Red's bonus: part 1 accepted, then the match ends while part 2 is read (``end``).
    Tossup 3 is never read."""
    match = make_match(config={"auto_rule": False}, bots=False, n_tossups=3, n_bonuses=2)
    seat = {p.name: p for p in match.players.all()}
    if until == "lobby":
        return match
    run(match, game.Start(), T0)
    buzz_in(match, seat["bob"], 0, T0 + 0.25, "moby dick", "reject")
    run(match, game.CorrectRuling(0, "correct", WHY), T0 + 1.0)
    bonus_part(match, seat["bob"], 0, 0, T0 + 2.0, "bonusanswer0", "accept")
    bonus_part(match, seat["bob"], 0, 1, T0 + 3.0, "no idea", "reject")
    if until == "bonus":
        return match
    run(match, game.Tick(), live(match)["bonus"]["deadline"] + 0.01, actor="driver")  # part 3 times out
    start = live(match)["between_deadline"] + 0.01
    run(match, game.Tick(), start, actor="driver")  # tossup 2
    assert live(match)["tossup_index"] == 1
    buzz_in(match, seat["amy"], 1, start + 0.3, "the great charter", "reject")
    run(match, game.Undo(), start + 0.9)
    buzz_in(match, seat["bob"], 1, start + 1.5, "habeas corpus", "reject")
    if until == "reading":
        return match
    buzz_in(match, seat["alice"], 1, start + 2.5, "magna carta", "accept")
    bonus_part(match, seat["alice"], 1, 0, start + 4.0, "bonusanswer0", "accept")
    run(match, game.End(), start + 5.0)
    return match


def recap_html(client: Client, match: Match) -> str:
    response = client.get(reverse("frontend:recap", args=[match.join_code]))
    assert response.status_code == 200
    return response.content.decode()


def tossup_sections(html: str) -> list[str]:
    """The HTML of each tossup card, in page order."""
    return html.split('<article class="card rc-tossup')[1:]


@pytest.mark.django_db
def test_an_unknown_join_code_is_a_404_and_the_dashboard_links_the_recap(client: Client, organiser: Client):
    assert client.get("/match/NOSUCH/recap/").status_code == 404
    match = play("lobby")
    url = f"/match/{match.join_code}/recap/"
    assert reverse("frontend:recap", args=[match.join_code]) == url
    assert client.get(url.lower()).status_code == 200  # codes are typed in any case
    dashboard = organiser.get(f"/moderator/{match.join_code}/").content.decode()
    assert f'<a id="recap-link" href="{url}">' in dashboard


@pytest.mark.django_db
@pytest.mark.parametrize("until", ["lobby", "bonus", "reading"])
def test_a_match_in_progress_never_shows_what_was_not_revealed(client: Client, until: str):
    match = play(until)
    html = recap_html(client, match)
    assert "In progress" in html and "Standings so far" in html
    # Never read, or being read: no answer line and no word of the text.
    for secret in ("Magna Carta", "mitochondria", "clue1w", "clue2w"):
        assert secret not in html, (until, secret)
    if until == "lobby":
        assert "Moby-Dick" not in html and "clue0w" not in html and "bonusanswer" not in html
        assert "No tossup has been read to the end yet." in html
        return
    (first,) = tossup_sections(html)  # tossup 1 ended: it is there, the one being read is not
    assert "clue0w0" in first and "Moby-Dick" in first
    if until == "bonus":
        # Parts 1 and 2 were ruled; part 3 is being read: neither its text nor its answer.
        assert "bonusanswer0" in first and "bonusanswer1" in first and "Part 1." in first
        assert "bonusanswer2" not in html and "Part 2." not in html
        assert "The tossup being read now" not in html
    else:
        # Part 3 timed out: its answer was read out then.
        assert re.findall(r'<li value="(\d)" class="rc-part', first) == ["1", "2", "3"]
        assert "habeas corpus" not in html  # the buzzes on the tossup being read wait with it
        assert "The tossup being read now is shown here once it ends." in html


@pytest.mark.django_db
def test_ended_tossups_show_text_answer_buzzes_and_the_read_bonus_parts(client: Client):
    match = play("end")
    html = recap_html(client, match)
    assert "Final" in html and "Final standings" in html
    first, second = tossup_sections(html)
    assert "Tossup 1 <span" in first and "· Literature" in first and "Tossup 2 <span" in second
    # The whole question, the power mark after word 8, a mark after the word of each buzz.
    assert "clue0w0" in first and "clue0w19" in first
    assert 'clue0w7 <span class="rc-power">(*)</span>' in first
    mark = '<span class="rc-mark rc-ok"><span class="sr-only">buzz 1:</span>✓ bob 15</span>'
    assert re.search(rf"clue0w2 {re.escape(mark)}", first), first
    assert "<b><u>Moby-Dick</u></b>" in first and "<b><u>Magna Carta</u></b>" in second
    # Tossup 2's buzzes: a ruling undone, a neg that stands, the correct answer.
    buzzes = re.findall(r'<li class="rc-buzz.*?</li>', second, re.S)
    assert len(buzzes) == 3
    assert "rc-void" in buzzes[0] and "amy" in buzzes[0] and "rejected, then undone" in buzzes[0]
    assert '<span class="rc-pts">0</span>' in buzzes[0]
    assert "bob" in buzzes[1] and "“habeas corpus”" in buzzes[1] and "rejected</span>" in buzzes[1]
    assert '<span class="rc-pts rc-no">−5</span>' in buzzes[1]
    assert (
        "alice" in buzzes[2]
        and "“magna carta”" in buzzes[2]
        and '— <span class="rc-ruling">accepted</span>' in buzzes[2]
    )
    assert '<span class="rc-pts rc-ok">10</span>' in buzzes[2]
    # Bonus 1: every part was read (the third timed out); bonus 2: only its first part.
    parts1 = re.findall(r'<li value="(\d)" class="rc-part', first)
    parts2 = re.findall(r'<li value="(\d)" class="rc-part', second)
    assert parts1 == ["1", "2", "3"] and parts2 == ["1"]
    assert "Part 0." in second and "Part 1." not in second and "bonusanswer1" not in second
    assert "timed out" in first and 'Bonus to Blue · <span class="rc-pts">10</span> points' in first
    # Never read: tossup 3.
    assert "mitochondria" not in html and "clue2w" not in html
    # Standings: Blue 15 + 10 − 5 and Red 10 + 10 (alice buzzed after the power mark): a tie.
    standings = html.split('class="card rc-standings"')[1].split("</table>")[0]
    rows = re.findall(r'<td>(\d+=?)</td><td>(\w+)</td><td class="num">(−?\d+)</td>', standings)
    assert rows == [("1=", "Blue", "20"), ("1=", "Red", "20")]
    assert sorted(live(match)["scores"].values()) == [20, 20]


@pytest.mark.django_db
def test_a_corrected_ruling_shows_the_correction_and_its_reason(client: Client):
    match = play("bonus")
    (first,) = tossup_sections(recap_html(client, match))
    (buzz,) = re.findall(r'<li class="rc-buzz.*?</li>', first, re.S)
    assert 'class="rc-buzz rc-corrected"' in buzz and "“moby dick”" in buzz
    assert f'<span class="rc-ruling">rejected, then accepted by the moderator: {WHY}</span>' in buzz
    assert '<span class="rc-pts rc-ok">15</span>' in buzz  # what stands: a power, not the neg
    assert "−5" not in first


@pytest.mark.django_db
def test_a_reading_cut_short_by_a_replay_shows_its_buzzes_but_never_its_text(client: Client):
    """Tossup 1 is replayed while read, after a neg: the first reading revealed nothing, and the
    second is being read. An adjustment on the way is listed with its reason."""
    match = make_match(config={"auto_rule": False}, bots=False, n_tossups=2, n_bonuses=1)
    bob = match.players.get(name="bob")
    run(match, game.Start(), T0)
    buzz_in(match, bob, 0, T0 + 0.25, "moby dick", "reject")
    run(match, game.Adjust(bob.team_id, 5, "a protest upheld"), T0 + 0.8)
    run(match, game.ReplayTossup(), T0 + 1.0)
    run(match, game.Tick(), T0 + 1.5, actor="driver")
    html = recap_html(client, match)
    (first,) = tossup_sections(html)
    assert "Tossup 1 <span" in first and "· replayed" in first
    assert "clue0w" not in html and "Moby-Dick" not in html and "Magna Carta" not in html
    assert "the tossup was replayed and read again" in first
    (buzz,) = re.findall(r'<li class="rc-buzz.*?</li>', first, re.S)
    assert "rc-void" in buzz and "rejected, reversed when the tossup was replayed" in buzz
    assert '<span class="rc-pts">0</span>' in buzz
    assert "Adjustment: Blue +5 (a protest upheld)" in first
    assert "The tossup being read now is shown here once it ends." in html


# -- real Chromium ------------------------------------------------------------------------------

PLAY_SCRIPT = "from tests.frontend.test_recap import play; print(play('end').join_code)"


@pytest.fixture(scope="module")
def recap_url(tmp_path_factory: pytest.TempPathFactory, redis_url: str) -> Iterator[str]:
    """A real server whose database holds one match played to its end (``play``)."""
    played: list[str] = []

    def setup(env: dict[str, str]) -> None:
        played.append(manage(env, "shell", "-c", PLAY_SCRIPT).split()[-1])

    with live_server(Path(tmp_path_factory.mktemp("recap")), redis_url, setup) as (url, _):
        yield f"{url}/match/{played[0]}/recap/"


@pytest.mark.browser
@pytest.mark.parametrize("viewport", [PHONE, LAPTOP], ids=["phone", "laptop"])
def test_the_recap_reads_on_a_phone_and_a_laptop(recap_url: str, viewport: dict[str, int]) -> None:
    from playwright.sync_api import expect

    origin = recap_url.split("/match/")[0]
    errors: list[str] = []
    foreign: list[str] = []
    with chromium() as browser:
        page = browser.new_context(viewport=viewport).new_page()
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("request", lambda r: None if r.url.startswith(origin) else foreign.append(r.url))
        assert page.goto(recap_url).status == 200
        page.bring_to_front()
        expect(page.locator("h1")).to_contain_text("Match recap")
        expect(page.locator("h2")).to_have_text(["Final standings", "Tossups"])
        expect(page.locator("h3.rc-qhead")).to_have_count(2)
        expect(page.locator(".rc-answer").first).to_be_visible()
        width = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert width[0] <= width[1], width
        # The players' table may scroll inside its box on a phone, never the page.
        violations = axe_violations(page)
        assert not violations, describe_violations(violations)
        shot(page, f"recap-{viewport['width']}x{viewport['height']}", full_page=True)
    assert not errors, errors
    assert not foreign, foreign  # no CDN: every request goes to Tossup
