"""Multimodal tossups: image, audio and delay tokens in the engine (issue 9, item 3)."""

from __future__ import annotations

import hashlib

import pytest

from competition.game import (
    Buzz,
    MatchState,
    MediaToken,
    Pause,
    Resume,
    SetSpeed,
    apply,
    tokenize_tossup,
    view,
)
from formats.media import MarkerError

from .support import BOT, HUMAN_A, HUMAN_B, T0, Driver, make_state
from .test_tossup import Q0, refused

IMG = hashlib.sha256(b"a red square").hexdigest()
SND = hashlib.sha256(b"a bell").hexdigest()
# 60 wpm: one token a second. Tokens: 0 w0, 1 w1, 2 image (lockout 2 s), 3 w3, 4 w4, 5 delay 3 s,
# 6 w6, 7 audio (no lockout), 8 w8, 9 w9.
TEXT = (
    f"w0 w1 [[image:sha256:{IMG}|a red square|lockout=2|mime=image/png]] w3 (*) w4 [[delay:3]] "
    f"w6 [[audio:sha256:{SND}|a bell rings|mime=audio/ogg]] w8 w9"
)


def media_match(**kwargs) -> Driver:
    from competition.game import Start

    d = Driver(make_state(texts=[TEXT], tossups=1, **kwargs))
    d.do(Start(), T0)
    return d


def test_tokens_of_every_kind_count_for_positions():
    spec = tokenize_tossup(Q0, TEXT, "red")
    assert len(spec.tokens) == 10
    assert spec.power_index == 4  # the image counts: w3 is token 3, so the mark falls before w4
    image, delay, audio = spec.tokens[2], spec.tokens[5], spec.tokens[7]
    assert image == MediaToken("image", IMG, "image/png", "a red square", lockout=2.0)
    assert delay == MediaToken("delay", duration=3.0)
    assert audio == MediaToken("audio", SND, "audio/ogg", "a bell rings")
    assert image.to_dict() == {
        "kind": "image",
        "url": f"/media/{IMG}",
        "sha256": IMG,
        "mime": "image/png",
        "alt": "a red square",
        "lockout": 2.0,
    }
    plain = tokenize_tossup(Q0, "one two (*) three", "x")
    assert plain.tokens == ["one", "two", "three"] and plain.power_index == 2


def test_state_round_trips_with_media_tokens():
    state = make_state(texts=[TEXT], tossups=1)
    again = MatchState.from_dict(state.to_dict())
    assert again == state and again.tossups[0].tokens[2].sha256 == IMG


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a [[image:pics/x.png|alt]] b", "not imported"),
        ("a [[image:]] b", "without a file"),
        ("a [[delay:0]] b", "delay"),
        ("a [[delay:abc]] b", "number of seconds"),
        (f"a [[image:sha256:{IMG}|lockout=99]] b", "lockout"),
        (f"a [[image:sha256:{IMG}|one|two]] b", "more than one alt"),
        ("a [[image:sha256:" + IMG + " b", "unclosed"),
    ],
)
def test_bad_markers_are_refused(text, message):
    with pytest.raises(ValueError, match=message):
        tokenize_tossup(Q0, text, "x")


def test_other_double_brackets_stay_words():
    # qbreader writes pronunciations in double brackets; a kind we do not know is text too.
    text = "named Wozzeck [[“VOT-seck”]]. Almaviva [[MIGHK-ahl NOI-vihrt]] [[video:x]]"
    assert tokenize_tossup(Q0, text, "x").tokens == text.split()


def test_marker_error_is_a_value_error():
    assert issubclass(MarkerError, ValueError)


def test_image_token_is_revealed_at_its_place_as_a_dict():
    d = media_match()
    assert d.last("tossup_started").data["token_count"] == 10
    d.run_until(T0 + 1.5)
    # Before its reveal, no view carries the image (nor its hash).
    for audience in ("all", f"player:{HUMAN_B}", f"player:{BOT}"):
        assert IMG not in repr(view(d.state, audience))
    events = d.run_until(T0 + 2)
    words = [e for e in events if e.event == "words"]
    assert [w.data["start"] for w in words] == [2]
    assert words[0].data["words"] == [
        MediaToken("image", IMG, "image/png", "a red square", lockout=2.0).to_dict()
    ]
    revealed = view(d.state, f"player:{HUMAN_B}")["tossup"]["words_revealed"]
    assert revealed[:2] == ["w0", "w1"] and revealed[2]["url"] == f"/media/{IMG}"


def test_lockout_after_an_image_refuses_every_buzz_until_it_ends():
    d = media_match(collection_window=0.1)
    d.run_until(T0 + 2.5)  # the image was revealed at T0 + 2; its lockout ends at T0 + 4
    assert d.state.tossup.lockout_until == pytest.approx(T0 + 4)
    assert refused(d, Buzz(HUMAN_A, Q0, 2), T0 + 2.5) == "media_lockout"
    assert refused(d, Buzz(BOT, Q0, 2, delay_bound=0.1), T0 + 2.5) == "media_lockout"
    d.run_until(T0 + 3.99)
    assert refused(d, Buzz(HUMAN_B, Q0, 3), T0 + 3.99) == "media_lockout"
    # Nothing of the refused buzzes reached the log.
    assert not d.all("buzz_received")
    with pytest.raises(Exception) as err:
        apply(d.state, Buzz(HUMAN_A, Q0, 3), T0 + 3.99)
    assert err.value.code == "media_lockout" and err.value.extra == {"until": pytest.approx(T0 + 4)}
    d.run_until(T0 + 4.2)
    d.do(Buzz(HUMAN_A, Q0, 4, corrected_press_at=T0 + 4.2), T0 + 4.2)
    d.run_until(T0 + 4.4)
    won = d.last("buzz")
    # Token 4 is the fourth word but the fifth token: the image counts.
    assert won.data["token_index"] == 4 and won.data["token_count"] == 10


def test_audio_without_lockout_does_not_refuse_buzzes():
    d = media_match()
    d.run_until(T0 + 9.5)  # the delay pushed the audio to T0 + 9 (token 7)
    assert d.state.tossup.revealed == 8
    d.do(Buzz(HUMAN_B, Q0, 7, corrected_press_at=T0 + 9.5), T0 + 9.5)
    assert d.last("buzz_received").data["token_index"] == 7


def test_delay_holds_the_reading_for_its_duration():
    d = media_match()
    d.run_until(T0 + 12)
    words = d.all("words")
    at = {w.data["start"]: w.data["revealed_at"] for w in words}
    # Tokens 0-5 a second apart; the delay (token 5, at T0 + 5) holds token 6 until T0 + 8.
    assert [at[i] - T0 for i in range(10)] == pytest.approx([0, 1, 2, 3, 4, 5, 8, 9, 10, 11])
    assert words[5].data["words"] == [{"kind": "delay", "duration": 3.0}]


def test_a_speed_change_does_not_cut_a_delay_short():
    d = media_match()
    d.run_until(T0 + 5.5)
    d.do(SetSpeed(600), T0 + 5.5)
    assert d.state.next_deadline == pytest.approx(T0 + 8)


def test_pause_shifts_the_lockout():
    d = media_match()
    d.run_until(T0 + 2.5)
    d.do(Pause(), T0 + 2.5)
    d.do(Resume(), T0 + 12.5)  # ten seconds paused: the lockout now ends at T0 + 14
    assert d.state.tossup.lockout_until == pytest.approx(T0 + 14)
    assert refused(d, Buzz(HUMAN_A, Q0, 2), T0 + 13.9) == "media_lockout"


def test_the_tossup_end_shows_every_token():
    d = media_match()
    d.run_until(T0 + 11)
    d.run_until(T0 + 30)
    ended = d.last("tossup_ended")
    assert len(ended.data["words"]) == 10 and ended.data["words"][7]["kind"] == "audio"


def test_dead_time_after_a_last_image_starts_when_its_lockout_ends():
    from competition.game import Start

    text = f"w0 w1 [[image:sha256:{IMG}|the answer|lockout=3]]"
    d = Driver(make_state(texts=[text], tossups=1, dead_time=5.0))
    d.do(Start(), T0)
    d.run_until(T0 + 2.5)  # the image, the last token, at T0 + 2: buzzes refused until T0 + 5
    assert d.state.phase == "dead_time" and d.state.tossup.dead_deadline == pytest.approx(T0 + 10)
    assert refused(d, Buzz(HUMAN_A, Q0, 2), T0 + 4.9) == "media_lockout"
    d.run_until(T0 + 9.9)
    d.do(Buzz(HUMAN_A, Q0, 2, corrected_press_at=T0 + 9.9), T0 + 9.9)
    assert d.last("buzz_received").data["token_index"] == 2


def test_a_bonus_parts_image_is_a_token_shown_only_once_that_part_is_read():
    from competition.game import BonusAnswer, BonusPartSpec, BonusSpec, Start

    from .support import HUMAN_A, T0
    from .test_flow import win_tossup

    state = make_state(auto_rule=True)
    image = MediaToken("image", IMG, "image/png", "a red square").to_dict()
    state.bonuses = [
        BonusSpec(
            500,
            "Lead-in [[delay:1]] for 0",
            [
                BonusPartSpec("part zero", "L0"),
                BonusPartSpec(f"part [[image:sha256:{IMG}|a red square|mime=image/png]] one", "L1"),
                BonusPartSpec("part two", "L2"),
            ],
        )
    ]
    d = Driver(state)
    d.do(Start(), T0)
    win_tossup(d)
    assert d.last("bonus_started").data["leadin_tokens"] == [
        "Lead-in",
        {"kind": "delay", "duration": 1.0},
        "for",
        "0",
    ]
    # The moderator reads the whole bonus up front; players and spectators see part 0 only.
    lines = d.last("bonus_answer_lines")
    assert lines.audience == "moderator" and lines.data["parts"][1]["tokens"] == ["part", image, "one"]
    assert d.last("bonus_part").data["tokens"] == ["part", "zero"]
    assert view(d.state, "moderator")["bonus"]["parts"][1]["tokens"][1] == image
    for audience in (f"player:{HUMAN_A}", f"player:{HUMAN_B}", "all"):
        assert IMG not in repr(view(d.state, audience))
    assert all(IMG not in repr(e.data) for _, e in d.log if e.audience != "moderator")
    d.do(BonusAnswer(HUMAN_A, 500, 0, "x", "reject"), T0 + 4)
    opened = d.last("bonus_part")
    assert opened.audience == "all" and opened.data["tokens"] == ["part", image, "one"]
    for audience in (f"player:{HUMAN_A}", f"player:{HUMAN_B}", "all"):
        assert view(d.state, audience)["bonus"]["parts"][1]["tokens"] == ["part", image, "one"]
