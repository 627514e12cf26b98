"""The reducer contract's fixture: recorded event streams and the snapshots each must produce.

Three clients rebuild a match from its events: the engine's own reducer
(``competition.game.view.apply_event``), the pages' ``applyEvent`` (``frontend/static/frontend/match.js``)
and the bot SDK's (``sdk/tossup_bot/client.py``). This script plays scripted matches through the pure
engine (fixed clock from ``T0``, fixed ids, no database) and writes every event each emits with the
``view`` of every watching audience at labelled points, to ``tests/contract/reducer_streams.json``;
tests/contract/ checks that each reducer, fed the events a viewer receives from one checkpoint's
snapshot, arrives at the next checkpoint's snapshot. A change to an event's shape or to the view
changes this file: the freshness test fails until it is regenerated, then each reducer's test until
that reducer follows.

File shape: ``{"about", "streams": [{"name", "about", "viewers": [{"audience", "receives"}],
"events": [{"seq", "event", "audience", "data"}], "checkpoints": [{"label", "after_seq",
"snapshots": {audience: view}}]}]}``. ``seq`` counts from 1 in each stream; a checkpoint falls between
two commands (``after_seq``: the last event before it; 0: before any) and holds the snapshot of every
viewer that is connected by then (a seat joins with its ``player_joined``). ``receives``: the event
audiences delivered to that viewer (``competition.game.event_audiences``). A command that undoes or
corrects a ruling is always followed by a checkpoint (``RESYNC_EVENTS``): a client may rebuild from a
fresh snapshot there instead of applying the event.

    python -m tools.reducer_fixtures            # write the fixture
    python -m tools.reducer_fixtures --check    # exit 1 if the committed fixture is stale
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from competition.game import (
    AddBuzz,
    AddTeam,
    Adjust,
    Answer,
    BonusAnswer,
    BonusPartSpec,
    BonusSpec,
    BonusSuggestion,
    Buzz,
    CallTimeout,
    Command,
    ConfirmBuzz,
    CorrectRuling,
    DecideBonus,
    Delegate,
    End,
    Event,
    EventName,
    MatchConfig,
    MatchState,
    Next,
    Pause,
    PlayerSpec,
    Protest,
    Rename,
    ReplaceQuestion,
    ReplayTossup,
    Resume,
    Reveal,
    ReviewRuling,
    Rule,
    SeatPlayer,
    SetPace,
    SetSpeed,
    Skip,
    Start,
    Substitute,
    TeamSpec,
    Tick,
    Undo,
    UndoTimeout,
    apply,
    event_audiences,
    new_match,
    tokenize_tossup,
    view,
)
from scoring.rules import load_preset

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "contract" / "reducer_streams.json"
T0 = 1_767_225_600.0  # 2026-01-01T00:00:00Z: the match starts here; times below are offsets from it
# Events after which a client may ask for a fresh snapshot instead of applying them: the command
# that emits one is always followed by a checkpoint.
RESYNC_EVENTS = frozenset(
    {
        EventName.RULING_UNDONE,
        EventName.RULING_CORRECTED,
        EventName.QUESTION_REPLACED,
        EventName.RULING_REVIEWED,
        EventName.BUZZ_ADDED,
    }
)

# Seats: team A (humans 11, 12), team B (human 21), the bots' team (31); with hybrid seats a
# semi-autonomous bot on A (32), a muted bot (33) and an autonomous one from token 2 (34) on B.
TEAM_A, TEAM_B, TEAM_BOT = 1, 2, 3
ANN, ABE, BEA, ROBO = 11, 12, 21, 31
SEMI, MUTE, AUTO = 32, 33, 34
IMAGE = hashlib.sha256(b"a red square").hexdigest()
AUDIO = hashlib.sha256(b"a bell").hexdigest()
# One token a second at 60 wpm: 0 w0, 1 w1, 2 image (lockout 2 s), 3 w3, power mark, 4 w4,
# 5 delay 3 s, 6 w6, 7 audio, 8 w8, 9 w9.
MEDIA_TEXT = (
    f"w0 w1 [[image:sha256:{IMAGE}|a red square|lockout=2|mime=image/png]] w3 (*) w4 [[delay:3]] "
    f"w6 [[audio:sha256:{AUDIO}|a bell rings|mime=audio/ogg]] w8 w9"
)
# A bonus whose lead-in holds a delay and whose second part an image (shown when that part is read).
MEDIA_BONUS = (
    "lead-in [[delay:1]] here",
    ["part 0", f"part 1 [[image:sha256:{IMAGE}|a red square|mime=image/png]] this", "part 2"],
)


def match(
    preset: str = "naqt",
    tossups: int = 3,
    bonuses: int = 3,
    hybrid: bool = False,
    texts: list[str] | None = None,
    bonus_texts: tuple[str, list[str]] | None = None,
    **config: Any,
) -> MatchState:
    """A match in its lobby at 60 wpm: question ids 100+i with answer lines ANSWER-LINE-<i>, 8
    words with the power mark after the fourth (or ``texts``); bonus ids 500+i of three parts (or
    each the lead-in and part texts ``bonus_texts``)."""
    config.setdefault("between_questions", 2.0)
    cfg = MatchConfig(preset=load_preset(preset), wpm=60, **config)
    teams = [TeamSpec(TEAM_A, "Alpha", "human"), TeamSpec(TEAM_B, "Beta", "human")]
    teams.append(TeamSpec(TEAM_BOT, "Robots", "bot"))
    players = [
        PlayerSpec(ANN, TEAM_A, "ann", "human"),
        PlayerSpec(ABE, TEAM_A, "abe", "human"),
        PlayerSpec(BEA, TEAM_B, "bea", "human"),
        PlayerSpec(ROBO, TEAM_BOT, "robo", "bot", "mid"),
    ]
    if hybrid:
        players += [
            PlayerSpec(SEMI, TEAM_A, "semi", "bot", "light", "semi_autonomous"),
            PlayerSpec(MUTE, TEAM_B, "mute", "bot", "heavy", "muted"),
            PlayerSpec(AUTO, TEAM_B, "auto", "bot", "mid", "autonomous", 2),
        ]
    texts = texts or [f"t{i}w0 t{i}w1 t{i}w2 t{i}w3 (*) t{i}w4 t{i}w5 t{i}w6 t{i}w7" for i in range(tossups)]
    qs = [tokenize_tossup(100 + i, text, f"ANSWER-LINE-{i}", "Science") for i, text in enumerate(texts)]
    leadins = [bonus_texts[0] if bonus_texts else f"lead-in {i}" for i in range(bonuses)]
    parts = bonus_texts[1] if bonus_texts else [f"part {k}" for k in range(3)]
    bs = [
        BonusSpec(
            500 + i, leadins[i], [BonusPartSpec(text, f"BONUS-LINE-{i}-{k}") for k, text in enumerate(parts)]
        )
        for i in range(bonuses)
    ]
    return new_match(cfg, teams, players, qs, bs)


class Recorder:
    """Plays one stream: commands at offsets from ``T0``, every event kept with its seq, and
    checkpoints of every viewer's snapshot."""

    def __init__(self, name: str, about: str, state: MatchState, viewers: list[str]) -> None:
        self.name, self.about, self.state, self.viewers = name, about, state, viewers
        self.events: list[dict[str, Any]] = []
        self.checkpoints: list[dict[str, Any]] = []
        self.check("start")

    def do(self, cmd: Command, at: float, expect: str = "") -> list[Event]:
        """Tick at each deadline due by ``T0 + at`` (a punctual driver), then apply ``cmd`` then.
        ``expect``: event names (space-separated) the command must emit, so a script that no
        longer does what it says fails here rather than covering less."""
        self.until(at)
        return self._apply(cmd, at, expect)

    def late(self, at: float, expect: str = "") -> list[Event]:
        """One Tick at ``T0 + at`` however many deadlines passed (a late driver: words batch)."""
        return self._apply(Tick(), at, expect)

    def until(self, at: float) -> None:
        while (due := self.state.next_deadline) is not None and due <= T0 + at:
            self._apply(Tick(), due - T0, "")

    def _apply(self, cmd: Command, at: float, expect: str) -> list[Event]:
        self.state, events = apply(self.state, cmd, T0 + at)
        names = [e.event for e in events]
        missing = [name for name in expect.split() if name not in names]
        if missing:
            raise AssertionError(f"{self.name}: {cmd!r} at +{at} emitted {names}, not {missing}")
        for e in events:
            self.events.append({"seq": len(self.events) + 1, **e.to_dict()})
        if RESYNC_EVENTS & set(names):
            self.check(f"after {type(cmd).__name__} at +{at:g}")
        return events

    def check(self, label: str) -> None:
        snapshots = {a: view(self.state, a) for a in self.viewers if self._connected(a)}
        self.checkpoints.append({"label": label, "after_seq": len(self.events), "snapshots": snapshots})

    def _connected(self, audience: str) -> bool:
        return not audience.startswith("player:") or self.state.player(int(audience[7:])) is not None

    def to_dict(self) -> dict[str, Any]:
        self.check("end")
        return {
            "name": self.name,
            "about": self.about,
            "viewers": [{"audience": a, "receives": sorted(self._receives(a))} for a in self.viewers],
            "events": [{k: e[k] for k in ("seq", "event", "audience", "data")} for e in self.events],
            "checkpoints": self.checkpoints,
        }

    def _receives(self, audience: str) -> frozenset[str]:
        seat = self.state.player(int(audience[7:])) if audience.startswith("player:") else None
        return event_audiences(audience, seat.team_id if seat is not None else None)


def lobby_and_clock() -> Recorder:
    r = Recorder(
        "lobby_and_clock",
        "Seats and a team join the lobby and are renamed; the clock pauses, resumes and changes "
        "speed while reading and between questions; a dead tossup, the moderator's pace and Next, "
        "a reveal, a skip of the last tossup ends the match.",
        match(tossups=3, auto_advance=True),
        ["moderator", "all", f"player:{ANN}", "player:41"],
    )
    r.do(SeatPlayer(13, TEAM_A, "cal"), -60, "player_joined")
    r.do(AddTeam(4, "Late robots"), -50, "team_added")
    r.do(SeatPlayer(41, 4, "late bot", "bot", "heavy"), -49, "player_joined")
    r.do(Rename("Owls", team_id=TEAM_A), -40, "renamed")
    r.do(Rename("Annie", player_id=ANN), -39, "renamed")
    r.check("lobby full")
    r.do(Start(), 0, "match_started tossup_started tossup_answer words")
    r.do(Pause(), 2.5, "paused")
    r.check("paused while reading")
    r.do(Resume(), 10, "resumed")
    r.do(SetSpeed(120), 11, "speed_changed")
    r.until(16)  # every word read: dead time
    r.check("dead time")
    r.until(17.6)  # dead at +17.5: the next tossup is due after the pace
    r.check("between questions")
    r.do(Pause(), 18, "paused")
    r.do(Resume(), 19, "resumed")
    r.do(SetPace(None), 19.5, "pace_changed")
    r.do(Next(), 30, "tossup_started")
    r.late(31.6, "words")  # a late driver reveals several words in one event
    r.check("words in a batch")
    r.do(Reveal(), 32, "tossup_revealed tossup_ended between_questions")
    r.do(SetPace(4.0), 40, "pace_changed")
    r.check("paced again")
    r.do(Skip(), 46, "tossup_ended match_ended")
    return r


def tossup_rulings() -> Recorder:
    r = Recorder(
        "tossup_rulings",
        "The moderator rules: a power after a prompt (the clock paused while answering), a bonus "
        "with a correct, a prompted then wrong and a timed-out part (paused on a part); a race lost inside the "
        "collection window, a neg, the bots' team's fully-read miss, a correct buzz in dead time "
        "and its bonus skipped while an answer waits; an answer that times out; the match ended while an answer waits.",
        match(tossups=4, bonuses=2, collection_window=0.15),
        ["moderator", "all", f"player:{ANN}", f"player:{BEA}"],
    )
    r.do(Start(), 0)
    r.do(Buzz(ANN, 100, 2, corrected_press_at=T0 + 2.05), 2.05, "buzz_received")
    r.until(2.2)
    r.check("buzz won")
    r.do(Answer(ANN, 100, "Curie", "prompt", "ambiguous", "Which Curie?"), 3, "answer_given awaiting_ruling")
    r.check("awaiting the ruling")
    r.do(Rule("prompt", "Which Curie?"), 3.5, "prompt")
    r.check("prompted")
    r.do(Pause(), 4, "paused")
    r.do(Resume(), 6, "resumed")
    r.check("resumed while answering")
    r.do(Answer(ANN, 100, "Marie Curie", "accept", "exact"), 7, "answer_given")
    r.check("the answer to the prompt waits")
    r.do(Rule("accept"), 7.5, "buzz_ruled tossup_ended bonus_started bonus_answer_lines bonus_part")
    r.check("bonus open")
    r.do(BonusAnswer(ABE, 500, 0, "one", "accept"), 9, "bonus_answer_given awaiting_ruling")
    r.check("bonus answer waiting")
    r.do(Rule("accept"), 9.5, "bonus_part_ruled bonus_part")
    r.do(Pause(), 10, "paused")
    r.do(Resume(), 10.5, "resumed")
    r.check("resumed on a bonus part")
    r.do(BonusAnswer(ANN, 500, 1, "two", "prompt", "partial", "More specific?"), 11)
    r.do(Rule("prompt", "More specific?"), 11.5, "bonus_prompt")
    r.check("bonus prompt")
    r.do(BonusAnswer(ANN, 500, 1, "two too", "reject"), 12)
    r.do(Rule("reject"), 12.5, "bonus_part_ruled bonus_part")
    r.until(23)  # part 2 times out: the bonus is over
    r.check("bonus over")
    # Tossup 1 from +24.5 (the pace is 2 s): bea and ann buzz on the same word, bea first.
    r.do(Buzz(BEA, 101, 2, corrected_press_at=T0 + 27.0), 27.05, "buzz_received")
    r.do(Buzz(ANN, 101, 2, corrected_press_at=T0 + 27.1), 27.1, "buzz_received")
    r.until(27.3)
    r.check("race lost")
    r.do(Answer(BEA, 101, "Bohr", "reject"), 28, "answer_given")
    r.do(Rule("reject"), 28.5, "buzz_ruled reading_resumed")
    r.check("after a neg")
    r.until(33)  # every word read
    r.do(Buzz(ROBO, 101, 7), 33, "buzz_received")
    r.until(33.6)
    r.do(Answer(ROBO, 101, "Fermi", "reject"), 34)
    r.do(Rule("reject"), 34.5, "buzz_ruled reading_resumed")
    r.do(Buzz(ABE, 101, 7), 35, "buzz_received")
    r.until(35.3)
    r.do(Answer(ABE, 101, "Meitner", "accept"), 36)
    r.do(Rule("accept"), 36.5, "buzz_ruled tossup_ended bonus_started")
    r.do(BonusAnswer(ABE, 501, 0, "one", "accept"), 37, "awaiting_ruling")
    r.do(Skip(), 38, "bonus_ended between_questions")  # the answer waiting for its ruling goes too
    r.check("bonus skipped")
    r.do(Buzz(BEA, 102, 1), 42, "buzz_received")  # tossup 2 from +40
    r.until(50.5)  # no answer: the buzz times out
    r.check("answer timed out")
    r.until(60)
    r.do(Buzz(ANN, 103, 1), 62.5, "buzz_received")  # tossup 3 from +61.15
    r.until(62.8)
    r.do(Answer(ANN, 103, "Dirac", "needs_moderator", "unsure"), 63, "awaiting_ruling")
    r.do(End(), 64, "match_ended")
    return r


def corrections() -> Recorder:
    r = Recorder(
        "corrections",
        "Undo of a neg on the live tossup and of the correct buzz whose bonus is being read; a "
        "protest, upheld by an adjustment; a neg corrected to correct (the tossup ends, its bonus "
        "starts), a bonus part corrected, then the buzz corrected back to wrong (its bonus "
        "withdrawn); a tossup replayed, and replayed again while a buzz is being answered.",
        match(tossups=3, bonuses=3, collection_window=0.0, auto_advance=False),
        ["moderator", "all", f"player:{ANN}", f"player:{BEA}"],
    )
    r.do(Start(), 0)
    r.do(Buzz(BEA, 100, 1), 1.5, "buzz")
    r.do(Answer(BEA, 100, "no", "reject"), 2)
    r.do(Rule("reject"), 2.5, "buzz_ruled reading_resumed")
    r.do(Undo(), 3, "ruling_undone")  # bea's team may buzz again
    r.do(Buzz(BEA, 100, 3), 3.5, "buzz")
    r.do(Answer(BEA, 100, "yes", "accept"), 4)
    r.do(Rule("accept"), 4.5, "bonus_started bonus_part")
    r.do(BonusAnswer(BEA, 500, 0, "one", "accept"), 5)
    r.do(Rule("accept"), 5.5, "bonus_part_ruled")
    r.check("a part ruled")
    r.do(Undo(), 6, "ruling_undone")  # the part's points back; the part stays ruled
    r.do(Undo(), 6.5, "ruling_undone bonus_withdrawn")  # the correct buzz: its bonus goes
    r.do(Protest("a word was misread", TEAM_A), 7, "protest_marked")
    r.check("protest open")
    r.do(Adjust(TEAM_A, 5, "protest upheld", 1), 8, "protest_resolved points_adjusted")
    r.do(Adjust(TEAM_B, -5, "a neg missed"), 8.5, "points_adjusted")
    r.do(Next(), 9, "tossup_started")
    r.do(Buzz(ANN, 101, 2), 11.5, "buzz")
    r.do(Answer(ANN, 101, "Curie", "reject"), 12)
    r.do(Rule("reject"), 12.5, "buzz_ruled")
    r.do(CorrectRuling(3, "correct", "misheard"), 13, "ruling_corrected tossup_ended bonus_started")
    r.do(BonusAnswer(ANN, 501, 0, "one", "reject"), 14)
    r.do(Rule("reject"), 14.5, "bonus_part_ruled")
    r.do(CorrectRuling(4, "correct", "accepted on review"), 15, "ruling_corrected")
    r.do(CorrectRuling(3, "wrong", "the first ruling stood"), 16, "ruling_corrected bonus_withdrawn")
    r.do(ReplayTossup(), 17, "tossup_replayed tossup_started")
    r.do(Buzz(BEA, 101, 1), 19, "buzz")
    r.check("replayed tossup, buzzed")
    r.do(ReplayTossup(), 20, "ruling_undone tossup_replayed tossup_started")
    r.do(Buzz(ANN, 101, 4), 25.5, "buzz")
    r.do(Answer(ANN, 101, "Curie", "accept"), 26)
    r.do(Rule("accept"), 26.5, "bonus_started")
    r.do(Skip(), 27)
    r.do(End(), 28, "match_ended")
    return r


def hybrid_seats() -> Recorder:
    r = Recorder(
        "hybrid_seats",
        "qanta26 with bot seats on the human teams: a semi-autonomous bot's buzz declined, "
        "proposed again through a pause and confirmed by the moderator; a muted bot's buzz; the "
        "captain consults the AI, abstains and answers on the bonus parts; a proposal that "
        "lapses; an answer delegated to the team's AI, reverted and delegated again, then prompted; a "
        "consult the judge cannot decide; a proposal closed by the end of its tossup.",
        match("qanta26", tossups=3, bonuses=3, hybrid=True, collection_window=0.0),
        ["moderator", "all", f"player:{ANN}", f"player:{SEMI}", f"player:{BEA}", f"player:{AUTO}"],
    )
    r.do(Start(), 0)
    r.do(Buzz(SEMI, 100, 1), 1.2, "buzz_proposed")
    r.check("proposal pending")
    r.do(ConfirmBuzz(SEMI, False, ABE), 1.5, "proposal_closed buzz_lost")
    r.do(Buzz(MUTE, 100, 1), 1.6, "muted_buzz")
    r.do(Buzz(SEMI, 100, 2), 2.1, "buzz_proposed")
    r.do(Pause(), 2.5, "paused")
    r.check("proposal paused")
    r.do(Resume(), 4, "resumed")
    r.check("proposal resumed")
    r.do(ConfirmBuzz(SEMI, True, None), 4.2, "proposal_closed buzz_received buzz")
    r.do(Answer(SEMI, 100, "Curie", "accept"), 5)
    r.do(Rule("accept"), 5.5, "buzz_ruled bonus_started bonus_part")
    r.do(BonusSuggestion(SEMI, 500, 0, "Curie", 0.8, "she won two Nobels"), 6, "bonus_suggestion")
    r.check("suggestion")
    r.do(DecideBonus(500, 0, "consult", ANN, verdict="accept"), 7, "bonus_decision bonus_answer_given")
    r.do(Rule("accept"), 7.5, "bonus_part_ruled bonus_part")
    r.do(DecideBonus(500, 1, "abstain", ANN), 8, "bonus_decision bonus_part_ruled bonus_part")
    r.do(DecideBonus(500, 2, "own", ANN), 9, "bonus_decision")
    r.check("own answer decided")
    r.do(BonusAnswer(ABE, 500, 2, "mine", "reject"), 9.5)
    r.do(Rule("reject"), 10, "bonus_part_ruled bonus_ended between_questions")
    # Tossup 1 from +12: semi's proposal lapses; bea buzzes, the moderator hands the answer to auto.
    r.do(Buzz(SEMI, 101, 0), 12.2, "buzz_proposed")
    r.until(15.5)
    r.check("proposal lapsed")
    r.do(Buzz(BEA, 101, 3), 15.6, "buzz")
    r.do(Delegate(AUTO), 16, "answer_delegated")
    r.check("answer delegated")
    r.do(Delegate(None), 16.5, "answer_delegated")
    r.do(Delegate(AUTO), 17, "answer_delegated")
    r.do(Answer(AUTO, 101, "Bohr", "prompt"), 17.5)
    r.do(Rule("prompt", "Which Bohr?"), 17.8, "prompt")  # to the delegate, who answers again
    r.check("the delegate prompted")
    r.do(Answer(AUTO, 101, "Niels Bohr", "accept"), 18)
    r.do(Rule("accept"), 18.5, "buzz_ruled bonus_started")
    r.do(BonusSuggestion(AUTO, 501, 0, "Bohr", 0.4, "a guess"), 19, "bonus_suggestion")
    r.do(BonusSuggestion(AUTO, 501, 0, "Niels Bohr", 0.6, "a better guess"), 19.5, "bonus_suggestion")
    r.do(DecideBonus(501, 0, "consult", None, verdict="needs_moderator"), 20, "awaiting_ruling")
    r.check("consult waits for the moderator")
    r.do(Rule("accept"), 21, "bonus_part_ruled")
    r.do(Skip(), 22, "bonus_ended")
    r.do(Buzz(SEMI, 102, 1), 25.5, "buzz_proposed")  # tossup 2 from +24
    r.do(Buzz(BEA, 102, 1), 25.6, "buzz")
    r.do(Answer(BEA, 102, "Fermi", "accept"), 26)
    r.do(Rule("accept"), 26.5, "proposal_closed tossup_ended")
    r.do(End(), 27, "match_ended")
    return r


def media_and_auto_rule() -> Recorder:
    r = Recorder(
        "media_and_auto_rule",
        "Image, delay and audio tokens (an image's lockout); the judge's verdicts ruled at once: a "
        "prompt then a correct answer, a bonus part prompted then right, a part timed out; the "
        "bonus's lead-in holds a delay and its second part an image; the bots' team's buzz held for "
        "its reaction delay; a dead tossup ends the match.",
        match(
            "hvc",
            tossups=2,
            bonuses=1,
            texts=[MEDIA_TEXT, MEDIA_TEXT],
            bonus_texts=MEDIA_BONUS,
            auto_rule=True,
        ),
        ["moderator", "all", f"player:{ROBO}"],
    )
    r.do(Start(), 0)
    r.until(2.5)
    r.check("image revealed")
    r.do(Buzz(ANN, 100, 3, corrected_press_at=T0 + 4.1), 4.1, "buzz_received")
    r.until(4.3)
    r.do(Answer(ANN, 100, "red", "prompt", "partial", "What shade?"), 5, "prompt")
    r.check("prompted by the judge")
    r.do(Answer(ANN, 100, "scarlet", "accept"), 6, "buzz_ruled tossup_ended bonus_started")
    r.do(BonusAnswer(ANN, 500, 0, "x", "prompt", "partial", "More?"), 7, "bonus_prompt")
    r.do(BonusAnswer(ANN, 500, 0, "xx", "accept"), 8, "bonus_part_ruled bonus_part")
    r.check("bonus part with an image read")
    r.do(BonusAnswer(ABE, 500, 1, "y", "reject"), 9, "bonus_part_ruled bonus_part")
    r.until(20)  # part 2 times out; the next tossup starts after the pace
    r.check("second tossup")
    r.do(Buzz(ROBO, 101, 1), 22.1, "buzz_received")
    r.check("bot buzz held")
    r.until(23)
    r.do(Answer(ROBO, 101, "blue", "reject"), 23.5, "buzz_ruled reading_resumed")
    r.until(40)
    return r


def lineups_and_periods() -> Recorder:
    state = match(tossups=4, bonuses=4, auto_advance=False)
    fmt = {"players_per_team": 1, "tossups_per_half": 1, "timeouts": 1, "overtime_tossups": 0}
    state = replace(state, config=replace(state.config, preset=replace(state.config.preset, **fmt)))
    r = Recorder(
        "lineups_and_periods",
        "NAQT's format with one player a team, one-tossup halves and sudden death: the initial lineup set "
        "in the lobby, halftime, a timeout paused and resumed (its countdown stands still), undone (a "
        "mis-click) and called again, a substitution at halftime, a bot joining a full team (the "
        "bench), regulation ending tied, an overtime tossup answered without a bonus ends the match.",
        state,
        ["moderator", "all", f"player:{ANN}", f"player:{ABE}", f"player:{ROBO}", "player:41"],
    )
    r.do(Substitute(TEAM_A, ABE, ANN), -10, "lineup_changed")
    r.do(Substitute(TEAM_A, ANN, ABE), -9, "lineup_changed")
    r.check("initial lineup")
    r.do(Start(), 0, "match_started")
    r.do(Skip(), 2, "tossup_ended halftime between_questions")
    r.check("halftime")
    r.do(CallTimeout(TEAM_B), 3, "timeout_called")
    r.check("timeout")
    r.do(Pause(), 3.2, "paused")
    r.check("timeout paused")
    r.do(Resume(), 3.5, "resumed")
    r.do(UndoTimeout(), 3.6, "timeout_undone")
    r.check("timeout undone")
    r.do(CallTimeout(TEAM_B), 3.8, "timeout_called")
    r.do(Substitute(TEAM_A, ABE, ANN), 4, "lineup_changed")
    r.do(SeatPlayer(41, TEAM_BOT, "late bot", "bot", "heavy"), 4.5, "player_joined")
    r.do(Next(), 5, "tossup_started")
    r.check("second half")
    r.do(Skip(), 7, "tossup_ended overtime_started between_questions")
    r.check("overtime")
    r.do(Next(), 8, "tossup_started")
    r.do(Buzz(BEA, 102, 1), 9.5, "buzz_received")
    r.do(Answer(BEA, 102, "Fermi", "accept"), 10)
    r.do(Rule("accept"), 10.5, "buzz_ruled tossup_ended match_ended")
    return r


def spares_and_review() -> Recorder:
    r = Recorder(
        "spares_and_review",
        "A bonus thrown out after a part was ruled and replaced by a spare for the same team; a "
        "tossup thrown out while a neg stood, its spare read next; then the scoresheet reviewed: "
        "the first tossup credited to another seat (by the control desk), then ruled wrong; the "
        "next tossup read out dead, and a buzz the moderator missed added to it.",
        match(tossups=4, bonuses=3, collection_window=0.0, auto_advance=False),
        ["moderator", "all", f"player:{ANN}", f"player:{BEA}"],
    )
    spare_tossup = tokenize_tossup(190, "s0 s1 s2 s3 (*) s4 s5 s6 s7", "SPARE-LINE", "History")
    spare_bonus = BonusSpec(
        590, "spare lead-in", [BonusPartSpec(f"spare {k}", f"SPARE-{k}") for k in range(3)]
    )
    r.do(Start(), 0)
    r.do(Buzz(ANN, 100, 5), 5.5, "buzz")
    r.do(Answer(ANN, 100, "yes", "accept"), 6)
    r.do(Rule("accept"), 6.5, "bonus_started")
    r.do(BonusAnswer(ANN, 500, 0, "one", "accept"), 7)
    r.do(Rule("accept"), 7.5, "bonus_part_ruled")
    r.do(
        ReplaceQuestion("bonus", "a part had two answers", spare_bonus),
        8,
        "ruling_undone question_replaced bonus_started",
    )
    r.do(Skip(), 9, "bonus_ended")
    r.do(Next(), 10, "tossup_started")
    r.do(Buzz(BEA, 101, 2), 12.5, "buzz")
    r.do(Answer(BEA, 101, "no", "reject"), 13)
    r.do(Rule("reject"), 13.5, "buzz_ruled")
    r.do(
        ReplaceQuestion("tossup", "the reader misread it", spare_tossup),
        14,
        "question_replaced tossup_started",
    )
    r.do(Buzz(BEA, 190, 3), 17.5, "buzz")
    r.do(Answer(BEA, 190, "yes", "accept"), 18)
    r.do(Rule("accept"), 18.5, "bonus_started")
    r.do(Skip(), 19, "bonus_ended")
    r.do(Next(), 20, "tossup_started")
    r.do(ReviewRuling(0, "it was abe who buzzed", player_id=ABE, by="organiser:td"), 21, "ruling_reviewed")
    r.do(ReviewRuling(0, "the answer was wrong", ruling="wrong", by="moderator"), 22, "ruling_reviewed")
    r.do(AddBuzz(3, ANN, "correct", "the reader missed ann", 1, by="organiser:td"), 60, "buzz_added")
    r.do(End(), 61, "match_ended")
    return r


STREAMS = (
    lobby_and_clock,
    tossup_rulings,
    corrections,
    hybrid_seats,
    media_and_auto_rule,
    lineups_and_periods,
    spares_and_review,
)


def fixture() -> str:
    """The fixture file's text (deterministic: the same engine gives the same bytes)."""
    streams = [build().to_dict() for build in STREAMS]
    return "\n".join(
        [
            "{",
            f'"about": {_line(ABOUT)},',
            '"streams": [',
            ",\n".join(_stream(s) for s in streams),
            "]}",
            "",
        ]
    )


ABOUT = "Generated by `python -m tools.reducer_fixtures` from the pure engine; do not edit."


def _line(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _stream(s: dict[str, Any]) -> str:
    """One stream with an event or a snapshot a line (a diff shows which changed)."""
    head = _line({k: s[k] for k in ("name", "about", "viewers")})[:-1]
    events = ",\n".join(_line(e) for e in s["events"])
    checkpoints = ",\n".join(
        _line({"label": c["label"], "after_seq": c["after_seq"]})[:-1]
        + ', "snapshots": {\n'
        + ",\n".join(f"{_line(a)}: {_line(v)}" for a, v in c["snapshots"].items())
        + "}}"
        for c in s["checkpoints"]
    )
    return f'{head},\n"events": [\n{events}],\n"checkpoints": [\n{checkpoints}]}}'


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=FIXTURE)
    parser.add_argument("--check", action="store_true", help="exit 1 if --out differs from a fresh fixture")
    args = parser.parse_args(argv)
    text = fixture()
    if args.check:
        stale = not args.out.exists() or args.out.read_text(encoding="utf-8") != text
        print(f"{args.out}: {'stale: run python -m tools.reducer_fixtures' if stale else 'up to date'}")
        return int(stale)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out} ({len(text.encode()):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
