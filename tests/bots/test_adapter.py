"""The bot adapter's run_bot (buzzer.bots.adapter) against a scripted fake server speaking
docs/PROTOCOL.md over a real websocket on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import threading
import time

from buzzer.bots.adapter import run_bot
from tests.bots.fake_server import ME, MY_TEAM, THEIR_TEAM, THEM, Session, play, snapshot, until


class ScriptedGuesser:
    """Confident (0.9) once ``trigger`` is among the revealed words, else 0.1; records what it was shown."""

    def __init__(self, trigger: str = "gamma", answer: str = "Alpha Centauri", delay: float = 0.0) -> None:
        self.trigger, self.answer, self.delay = trigger, answer, delay
        self.seen: list[int] = []  # number of words in each guessed text
        self.lock = threading.Lock()

    def guess(self, text_so_far: str) -> tuple[str, float]:
        time.sleep(self.delay)
        with self.lock:
            self.seen.append(len(text_so_far.split()))
        return self.answer, 0.9 if self.trigger in text_so_far.split() else 0.1

    def bonus_guess(self, leadin: str, part_text: str) -> str:
        return f"bonus answer to {part_text}"


async def test_full_match_buzz_answer_prompt_lockout_bonus() -> None:
    guesser = ScriptedGuesser()

    async def script(s: Session) -> None:
        await s.ws.send(snapshot())
        await s.event("match_started")
        await s.event("tossup_started", index=0, question_id=11, token_count=6, category="Science")
        for i, word in enumerate(["alpha", "beta", "gamma"]):
            await s.words(11, i, word)
            await until(lambda n=i + 1: n in guesser.seen or s.frames)
        buzz = await s.expect("buzz")
        assert buzz["question_id"] == 11 and buzz["token_index"] == 2
        assert set(buzz) == {
            "type",
            "question_id",
            "token_index",
            "client_time",
            "ref",
            "cost",
        }  # no guess leaks
        assert abs(buzz["client_time"] - time.time()) < 2
        await s.words(11, 3, "delta")  # still reading before the server rules on the race
        await s.quiet()  # one buzz per tossup; no answer before the buzz is granted
        await s.event("buzz", question_id=11, player_id=ME, team_id=MY_TEAM, kind="bot", token_index=2)
        assert (await s.expect("answer")) == {"type": "answer", "question_id": 11, "text": "Alpha Centauri"}
        await s.event("prompt", question_id=11, player_id=ME, directed_prompt=None, answer_deadline=0)
        assert (await s.expect("answer"))["text"] == "Alpha Centauri"
        await s.event(
            "buzz_ruled", question_id=11, player_id=ME, team_id=MY_TEAM, ruling="correct", points=10
        )
        await s.event("tossup_ended", question_id=11, answer_line="Alpha Centauri", outcome="answered")

        # Tossup 2: the other team buzzes first; the bot waits for the ruling, then buzzes on what it has.
        await s.event("tossup_started", index=1, question_id=12, token_count=9, category="Science")
        await s.words(12, 0, "x")
        await until(lambda: 1 in guesser.seen)
        await s.event("buzz", question_id=12, player_id=THEM, team_id=THEIR_TEAM, kind="human", token_index=0)
        await s.words(12, 1, "gamma")
        await s.quiet()
        await s.event(
            "buzz_ruled", question_id=12, player_id=THEM, team_id=THEIR_TEAM, ruling="wrong", points=-5
        )
        second = await s.expect("buzz")
        assert (second["question_id"], second["token_index"]) == (12, 1)
        # The server refuses that buzz; the bot keeps playing and buzzes again on the next word.
        await s.ws.send(
            json.dumps({"type": "error", "code": "locked_out", "message": "late", "ref": second["ref"]})
        )
        await s.words(12, 2, "y")
        third = await s.expect("buzz")
        assert (third["question_id"], third["token_index"]) == (12, 2)
        await s.event("buzz", question_id=12, player_id=ME, team_id=MY_TEAM, kind="bot", token_index=2)
        assert (await s.expect("answer"))["question_id"] == 12
        await s.event("buzz_ruled", question_id=12, player_id=ME, team_id=MY_TEAM, ruling="wrong", points=0)
        await s.event("tossup_ended", question_id=12, answer_line="Beta", outcome="dead")

        # Bonuses: only the bot's own team's parts are answered.
        await s.event("bonus_started", bonus_id=5, team_id=THEIR_TEAM, leadin="Theirs.", parts=1)
        await s.event("bonus_part", bonus_id=5, part=0, text="not ours", value=10, answer_deadline=0)
        await s.quiet()
        await s.event("bonus_ended", bonus_id=5, team_id=THEIR_TEAM, points=0)
        await s.event("bonus_started", bonus_id=6, team_id=MY_TEAM, leadin="Ours.", parts=1)
        await s.event("bonus_part", bonus_id=6, part=0, text="name this star", value=10, answer_deadline=0)
        reply = await s.expect("bonus_answer")
        assert reply == {
            "type": "bonus_answer",
            "bonus_id": 6,
            "part": 0,
            "text": "bonus answer to name this star",
        }
        # A prompt on our part: the bot answers the same part again.
        await s.event("bonus_prompt", bonus_id=6, part=0, directed_prompt="More specific?", answer_deadline=0)
        assert (await s.expect("bonus_answer")) == reply
        await s.event(
            "bonus_part_ruled", bonus_id=6, part=0, guess=reply["text"], ruling="correct", points=10
        )
        await s.event("bonus_ended", bonus_id=6, team_id=MY_TEAM, points=10)
        await s.event("match_ended", scores={})

    stats, session = await play(script, lambda url: run_bot(url, guesser, threshold=0.5))
    played = {k: stats.pop(k) for k in ("guesses", "late", "cost")}
    assert stats == {
        "buzzes": 2,
        "correct": 1,
        "wrong": 1,
        "bonus_answers": 1,
        "bonus_correct": 1,
        "errors": 1,
    }
    # every model call is a used guess (a tossup prefix or the bonus part); none late, none priced
    assert played == {"guesses": len(guesser.seen) + 1, "late": 0, "cost": 0.0}
    assert [f["type"] for f in session.frames] == [
        "buzz", "answer", "answer", "buzz", "buzz", "answer", "bonus_answer", "bonus_answer"
    ]  # fmt: skip


async def test_slow_guesser_skips_stale_words_and_pings() -> None:
    guesser = ScriptedGuesser(trigger="never", delay=0.05)

    async def script(s: Session) -> None:
        await s.ws.send(snapshot())
        await s.event("tossup_started", index=0, question_id=1, token_count=30, category="History")
        for i in range(30):
            await s.words(1, i, f"w{i}")
        await until(lambda: 30 in guesser.seen)
        await until(lambda: s.pings >= 2)
        await s.event("match_ended", scores={})

    stats, session = await play(script, lambda url: run_bot(url, guesser, threshold=0.5, ping_interval=0.05))
    assert guesser.seen[-1] == 30
    assert len(guesser.seen) < 30  # words that arrived while it was thinking were never guessed on
    assert guesser.seen == sorted(guesser.seen)
    assert session.frames == [] and stats["buzzes"] == 0


async def test_min_tokens_delays_the_buzz() -> None:
    guesser = ScriptedGuesser(trigger="w0")

    async def script(s: Session) -> None:
        await s.ws.send(snapshot())
        await s.event("tossup_started", index=0, question_id=3, token_count=10, category="Art")
        for i in range(3):
            await s.words(3, i, f"w{i}")
        await s.quiet()
        await s.words(3, 3, "w3")
        assert (await s.expect("buzz"))["token_index"] == 3
        await s.event("match_ended", scores={})

    await play(script, lambda url: run_bot(url, guesser, threshold=0.5, min_tokens=4))
    assert min(guesser.seen) == 4


async def test_buzz_lost_lets_the_bot_buzz_again() -> None:
    guesser = ScriptedGuesser(trigger="w0")

    async def script(s: Session) -> None:
        await s.ws.send(snapshot())
        await s.event("tossup_started", index=0, question_id=5, token_count=10, category="Art")
        await s.words(5, 0, "w0")
        assert (await s.expect("buzz"))["token_index"] == 0
        await s.words(5, 1, "w1")
        await s.quiet()  # the buzz is still in flight: no second one
        await s.event("buzz_lost", question_id=5, reason="outraced")
        await s.words(5, 2, "w2")
        assert (await s.expect("buzz"))["token_index"] == 2
        await s.event("match_ended", scores={})

    stats, _ = await play(script, lambda url: run_bot(url, guesser, threshold=0.5))
    assert stats["buzzes"] == 0  # neither buzz was granted


async def test_a_refused_buzz_is_retried_unless_the_team_already_buzzed() -> None:
    guesser = ScriptedGuesser(trigger="w0")

    async def script(s: Session) -> None:
        await s.ws.send(snapshot())
        await s.event("tossup_started", index=0, question_id=5, token_count=10, category="Art")
        await s.words(5, 0, "w0")
        first = await s.expect("buzz")
        # A transient refusal (someone else's answer is being heard): the bot buzzes again later.
        await s.ws.send(
            json.dumps({"type": "error", "code": "locked_out", "message": "x", "ref": first["ref"]})
        )
        await s.words(5, 1, "w1")
        second = await s.expect("buzz")
        assert second["token_index"] == 1
        # A teammate got there first: the code, not the message, says this tossup is done for the bot.
        await s.ws.send(
            json.dumps({"type": "error", "code": "team_already_buzzed", "message": "x", "ref": second["ref"]})
        )
        await s.words(5, 2, "w2")
        await s.quiet()  # no third buzz
        await s.event("match_ended", scores={})

    stats, _ = await play(script, lambda url: run_bot(url, guesser, threshold=0.5))
    assert stats["errors"] == 2 and stats["buzzes"] == 0


async def test_snapshot_of_an_ended_tossup_is_not_played() -> None:
    guesser = ScriptedGuesser(trigger="a")

    async def script(s: Session) -> None:
        tossup = {"index": 0, "question_id": 6, "token_count": 1, "words_revealed": ["a"], "locked_teams": []}
        await s.ws.send(snapshot({**tossup, "buzz": None, "outcome": "dead"}))
        await s.quiet()
        await s.event("match_ended", scores={})

    await play(script, lambda url: run_bot(url, guesser, threshold=0.5))
    assert guesser.seen == []


async def test_seq_gaps_are_normal_and_a_snapshot_restores_a_granted_buzz() -> None:
    guesser = ScriptedGuesser(trigger="never")

    async def script(s: Session) -> None:
        await s.ws.send(snapshot())
        await s.event("tossup_started", index=0, question_id=4, token_count=10, category="Art")
        s.seq += 3  # moderator-only events 2..4 are never sent to a seat
        await s.words(4, 4, "e")
        await s.quiet()  # no resync request: a gap is not a loss
        tossup = {
            "index": 0,
            "question_id": 4,
            "token_count": 10,
            "words_revealed": ["a", "b", "c", "d", "e"],
            "locked_teams": [],
            "buzz": {"player_id": ME, "team_id": MY_TEAM, "token_index": 4},
        }
        s.granted.add(4)
        await s.ws.send(snapshot(tossup, seq=s.seq))
        answer = await s.expect("answer")
        assert answer == {"type": "answer", "question_id": 4, "text": "Alpha Centauri"}
        assert 5 in guesser.seen  # it guessed on the five words the snapshot restored
        await s.ws.close()  # no match_ended: the bot must still return

    stats, _ = await play(script, lambda url: run_bot(url, guesser, threshold=0.5))
    assert stats["buzzes"] == 0 and stats["errors"] == 0


async def test_a_snapshot_of_an_ended_match_ends_the_bot() -> None:
    async def script(s: Session) -> None:
        await s.ws.send(snapshot(status="ended", seq=40))
        await s.quiet()

    stats, _ = await play(script, lambda url: run_bot(url, ScriptedGuesser(), threshold=0.5))
    assert stats["buzzes"] == 0


class BrokenGuesser(ScriptedGuesser):
    def guess(self, text_so_far: str) -> tuple[str, float]:
        super().guess(text_so_far)
        raise RuntimeError("model crashed")


async def test_a_failing_guesser_does_not_end_the_match() -> None:
    guesser = BrokenGuesser()

    async def script(s: Session) -> None:
        await s.ws.send(snapshot())
        await s.event("tossup_started", index=0, question_id=8, token_count=3, category="Art")
        await s.words(8, 0, "gamma")
        await until(lambda: 1 in guesser.seen)
        await s.quiet()
        await s.event("bonus_started", bonus_id=9, team_id=MY_TEAM, leadin="", parts=1)
        await s.event("bonus_part", bonus_id=9, part=0, text="still here", value=10, answer_deadline=0)
        assert (await s.expect("bonus_answer"))["text"] == "bonus answer to still here"
        await s.event("match_ended", scores={})

    stats, _ = await play(script, lambda url: run_bot(url, guesser, threshold=0.5))
    assert stats["bonus_answers"] == 1


async def test_heartbeats_are_answered_and_a_missed_event_asks_for_a_resync() -> None:
    async def script(s: Session) -> None:
        await s.ws.send(snapshot(seq=10))
        s.seq = 10
        sent = await s.heartbeat()  # nothing missed: just an ack
        await until(lambda: s.heartbeat_acks == [sent])
        await s.quiet()
        s.seq += 1  # event 11 was sent to this seat but lost on the way
        missed = await s.heartbeat()
        resync = await s.expect("resync")
        assert resync["after_seq"] == 10 and s.heartbeat_acks == [sent, missed]
        # The answer to a resync (or a server-pushed resync) is a snapshot, at any time.
        tossup = {"index": 0, "question_id": 4, "token_count": 9, "words_revealed": ["a"], "locked_teams": []}
        await s.ws.send(snapshot({**tossup, "buzz": None}, seq=11))
        await s.heartbeat()
        await s.quiet()  # caught up: no second resync
        await s.event("match_ended", scores={})

    _, session = await play(script, lambda url: run_bot(url, ScriptedGuesser(trigger="never"), threshold=0.5))
    assert [f["type"] for f in session.frames] == ["resync"] and len(session.heartbeat_acks) == 3


async def test_a_silent_server_is_replaced_by_a_new_connection() -> None:
    guesser = ScriptedGuesser(trigger="gamma")
    sessions: list[Session] = []

    async def silent(s: Session) -> None:
        await s.ws.send(snapshot())
        await s.event("tossup_started", index=0, question_id=2, token_count=9, category="Art")
        await asyncio.sleep(1.5)  # a server gone quiet (no close): the bot must give up on it

    async def back(s: Session) -> None:
        tossup = {
            "index": 0,
            "question_id": 2,
            "token_count": 9,
            "words_revealed": ["a", "gamma"],
            "locked_teams": [],
        }
        await s.ws.send(snapshot({**tossup, "buzz": None}, seq=5))
        s.seq = 5
        buzz = await s.expect("buzz")
        assert (buzz["question_id"], buzz["token_index"]) == (2, 1)
        await s.event("match_ended", scores={})

    started = time.monotonic()
    await play([silent, back], lambda url: run_bot(url, guesser, threshold=0.5, silent_after=0.5), sessions)
    assert len(sessions) == 2 and time.monotonic() - started < 5


async def test_a_connection_the_server_drops_is_reconnected_but_a_refused_token_is_not() -> None:
    sessions: list[Session] = []

    async def dropped(s: Session) -> None:
        await s.ws.send(snapshot())
        await s.ws.close(code=1011, reason="unavailable")

    async def refused(s: Session) -> None:
        await s.ws.send(
            json.dumps({"type": "error", "code": "forbidden", "message": "bad token", "ref": None})
        )
        await s.ws.close(code=4403)

    stats, _ = await play(
        [dropped, refused], lambda url: run_bot(url, ScriptedGuesser(), threshold=0.5), sessions
    )
    assert len(sessions) == 2 and stats["errors"] == 1


async def test_a_snapshot_with_our_bonus_part_open_is_answered() -> None:
    """After a reconnection the bonus_part event may be gone: the snapshot's open part is answered."""
    guesser = ScriptedGuesser()

    async def script(s: Session) -> None:
        state = json.loads(snapshot(seq=20))
        state["state"]["phase"] = "bonus"
        state["state"]["bonus"] = {
            "bonus_id": 4,
            "team_id": MY_TEAM,
            "leadin": "Name these.",
            "part": 1,
            "parts": [
                {"part": 0, "text": "first", "value": 10, "result": {"ruling": "correct"}},
                {"part": 1, "text": "second", "value": 10, "result": None},
            ],
        }
        await s.ws.send(json.dumps(state))
        s.seq = 20
        reply = await s.expect("bonus_answer")
        assert (reply["bonus_id"], reply["part"], reply["text"]) == (4, 1, "bonus answer to second")
        await s.quiet()
        await s.event("match_ended", scores={})

    stats, _ = await play(script, lambda url: run_bot(url, guesser, threshold=0.5))
    assert stats["bonus_answers"] == 1
