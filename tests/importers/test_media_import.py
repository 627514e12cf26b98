"""Multimodal tossups through the importers: inline markers in qbreader/CSV text, the runner's
``<multimodal>`` tags, media stored by content hash and served only once revealed (issue 9, item 3)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from competition import game, selectors, services
from competition.importers import QuestionFileError, import_file
from competition.live import store
from competition.models import Bonus, MatchEvent, MediaFile, Tossup
from competition.vocabulary import Role

# A 1×1 PNG and a few bytes named .ogg: the importer reads, hashes and stores, it never decodes.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cfc0f01f0005000201a2f3a4510000000049454e44ae426082"
)
OGG = b"OggS\x00\x02" + b"\x00" * 40


def _packet(folder: Path, questions: list[str]) -> Path:
    rows = [
        {
            "type": "tossup",
            "set": "2099-MEDIA",
            "year": 2099,
            "packet": "1",
            "number": n,
            "question": q,
            "answer": "<b><u>red</u></b>",
            "category": "Fine Arts",
            "subcategory": "Painting",
        }
        for n, q in enumerate(questions, 1)
    ]
    path = folder / "packet.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def organiser(db) -> Client:
    client = Client()
    client.force_login(get_user_model().objects.create_user("org", password="pw-for-tests-only"))
    return client


@pytest.fixture
def media_folder(tmp_path: Path) -> Path:
    (tmp_path / "pics").mkdir()
    (tmp_path / "pics" / "red.png").write_bytes(PNG)
    (tmp_path / "bell.ogg").write_bytes(OGG)
    return tmp_path


@pytest.mark.django_db
def test_inline_markers_are_stored_by_hash_and_become_tokens(media_folder: Path):
    path = _packet(
        media_folder,
        [
            "This painting [[image:pics/red.png|a red square|lockout=2]] is (*) red. "
            "[[delay:1.5]] Listen: [[audio:bell.ogg|a bell rings]] name it."
        ],
    )
    counts = import_file(path)
    assert counts["tossups"] == 1
    png, ogg = hashlib.sha256(PNG).hexdigest(), hashlib.sha256(OGG).hexdigest()
    stored = {m.sha256: m for m in MediaFile.objects.all()}
    assert set(stored) == {png, ogg}
    assert (stored[png].mime, stored[png].size, stored[png].revealed) == ("image/png", len(PNG), False)
    assert stored[png].file.read() == PNG and stored[ogg].mime == "audio/ogg"
    tossup = Tossup.objects.get()
    assert f"[[image:sha256:{png}|a red square|lockout=2|mime=image/png]]" in tossup.question
    spec = services.tossup_spec(tossup)
    assert spec.tokens[2] == game.MediaToken("image", png, "image/png", "a red square", lockout=2.0)
    assert spec.tokens[5] == game.MediaToken("delay", duration=1.5)
    assert spec.tokens[7].kind == "audio" and spec.power_index == 4
    # Importing again changes nothing and stores nothing twice.
    again = import_file(path)
    assert (again["unchanged"], MediaFile.objects.count()) == (1, 2)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("marker", "message"),
    [
        ("[[image:pics/missing.png]]", "not found"),
        ("[[image:../outside.png]]", "relative path inside"),
        ("[[image:/etc/passwd]]", "relative path inside"),
        ("[[image:https://example.com/red.png]]", "relative path inside"),  # nothing from the internet
        ("[[image:bell.ogg]]", "not image/"),
        ("[[audio:|a bell]]", "without a file"),
        ("[[image:pics/red.png|lockout=-1]]", "lockout"),
        ("[[image:pics/red.png", "unclosed"),
        ("[[image:sha256:" + "0" * 64 + "]]", "no stored media file"),
    ],
)
def test_bad_markers_are_refused_at_their_line_and_nothing_is_written(media_folder, marker, message):
    (media_folder.parent / "outside.png").write_bytes(PNG)
    path = _packet(media_folder, ["A fine first tossup about red.", f"Second tossup {marker} about red."])
    with pytest.raises(QuestionFileError, match=message) as err:
        import_file(path)
    assert err.value.line == 2 and str(err.value).startswith(f"{path}:2: ")
    assert not Tossup.objects.exists() and not MediaFile.objects.exists()


@pytest.mark.django_db
def test_runner_multimodal_tags_read_the_packet_assets(tmp_path: Path):
    folder = tmp_path / "round1"
    (folder / "img").mkdir(parents=True)
    (folder / "img" / "abc123.png").write_bytes(PNG)
    (folder / "tossups.csv").write_text(
        "question_id,text,answer,answerline\n"
        'q1,"Look <multimodal type=""img"" hash=""abc123"" displayText=""A red square""> then '
        '<multimodal type=""delay""> name it",red,red\n',
        encoding="utf-8",
    )
    import_file(folder)
    spec = services.tossup_spec(Tossup.objects.get())
    png = hashlib.sha256(PNG).hexdigest()
    # The runner's default reveal lockout (5 s) and our default delay (2 s): formats.media.
    assert spec.tokens == [
        "Look",
        game.MediaToken("image", png, "image/png", "A red square", lockout=5.0),
        "then",
        game.MediaToken("delay", duration=2.0),
        "name",
        "it",
    ]
    (folder / "tossups.csv").write_text(
        'question_id,text,answer,answerline\nq1,"Look <multimodal type=""img"" hash=""zzz""> x",red,red\n',
        encoding="utf-8",
    )
    with pytest.raises(QuestionFileError, match="no asset for hash 'zzz'") as err:
        import_file(folder)
    assert str(err.value).startswith(f"{folder / 'tossups.csv'}:2: ")


@pytest.mark.django_db
def test_media_is_served_to_players_only_once_a_match_revealed_it(media_folder: Path, organiser: Client):
    import_file(_packet(media_folder, ["Name [[image:pics/red.png|a red square]] this colour now please."]))
    png = hashlib.sha256(PNG).hexdigest()
    url = game.MEDIA_URL + png
    anyone = Client()
    assert anyone.get(url).status_code == 404
    preview = organiser.get(url)
    assert preview.status_code == 200 and preview["Content-Type"] == "image/png"
    assert b"".join(preview.streaming_content) == PNG
    assert preview["X-Content-Type-Options"] == "nosniff" and "sandbox" in preview["Content-Security-Policy"]
    assert anyone.get(game.MEDIA_URL + "f" * 64).status_code == 404
    assert anyone.get(game.MEDIA_URL + "not-a-hash").status_code == 404

    tossup = Tossup.objects.get()
    match = services.create_match(name="m", tossup_ids=[tossup.id], teams=["Red", "Blue"])
    t0 = 1_000_000.0
    store.apply_command(match_id=match.id, command=game.Start(), actor="moderator", now=t0)
    store.apply_command(match_id=match.id, command=game.Tick(), actor="driver", now=t0 + 0.1)
    assert anyone.get(url).status_code == 404  # only "Name" is revealed
    applied = store.apply_command(match_id=match.id, command=game.Tick(), actor="driver", now=t0 + 0.5)
    shown = [e for e in applied.events if e["event"] == "words"]
    assert shown and shown[-1]["data"]["words"][-1]["url"] == url
    got = anyone.get(url)
    assert got.status_code == 200 and b"".join(got.streaming_content) == PNG


# Another file for the bonus (not yet revealed by the tossup's): content only, never decoded.
BLUE = PNG + b"blue"


@pytest.mark.django_db
def test_a_bonus_parts_image_reaches_players_and_is_served_only_once_that_part_is_read(
    media_folder: Path, organiser: Client
):
    (media_folder / "pics" / "blue.png").write_bytes(BLUE)
    path = _packet(media_folder, ["Name this colour of danger and of stop signs."])
    bonus = {
        "type": "bonus", "set": "2099-MEDIA", "year": 2099, "packet": "1", "number": 1,
        "leadin": "For 10 points each, name these colours.",
        "parts": ["The colour of the sky.", "This colour [[image:pics/blue.png|a blue square]] shown here.",
                  "The colour of grass."],
        "answers": ["<b><u>blue</u></b>", "<b><u>blue</u></b>", "<b><u>green</u></b>"],
        "category": "Fine Arts", "subcategory": "Painting",
    }  # fmt: skip
    with path.open("a", encoding="utf-8") as f:
        f.write(json.dumps(bonus) + "\n")
    assert import_file(path)["bonuses"] == 1
    sha = hashlib.sha256(BLUE).hexdigest()
    url = game.MEDIA_URL + sha
    image = {
        "kind": "image",
        "url": url,
        "sha256": sha,
        "mime": "image/png",
        "alt": "a blue square",
        "lockout": 0.0,
    }
    tossup, stored = Tossup.objects.get(), Bonus.objects.get()
    match = services.create_match(
        name="m", tossup_ids=[tossup.id], bonus_ids=[stored.id], teams=["Red", "Blue"],
        config={"wpm": 600, "auto_rule": True},
    )  # fmt: skip
    ann = services.join_match(code=match.join_code, name="ann", team="Red")
    t0 = 1_000_000.0
    store.apply_command(match_id=match.id, command=game.Start(), actor="moderator", now=t0)
    store.apply_command(match_id=match.id, command=game.Tick(), actor="driver", now=t0 + 0.35)
    services.buzz(
        match_id=match.id, player_id=ann.id, question_id=tossup.id, token_index=3,
        client_time=None, corrected_press_at=None, now=t0 + 0.35,
    )  # fmt: skip
    store.apply_command(match_id=match.id, command=game.Tick(), actor="driver", now=t0 + 0.6)
    services.answer(match_id=match.id, player_id=ann.id, question_id=tossup.id, text="red", now=t0 + 1.0)

    def seen() -> dict[str, str]:
        """What each page holds: its snapshot and the events its socket was sent."""
        rows = MatchEvent.objects.filter(match=match).order_by("seq")
        return {
            "player": json.dumps(selectors.snapshot(match.id, Role.PLAYER, ann))
            + json.dumps(
                [r.payload for r in rows if r.audience in ("all", f"player:{ann.id}", f"team:{ann.team_id}")]
            ),
            "spectator": json.dumps(selectors.snapshot(match.id, Role.SPECTATOR, None))
            + json.dumps([r.payload for r in rows if r.audience == "all"]),
        }

    # Part 0 is read: the lead-in and part 0 are tokens, part 1's image is nowhere but with the
    # moderator (who reads the whole bonus up front), and nobody but an organiser may fetch it.
    state = selectors.snapshot(match.id, Role.PLAYER, ann)["state"]
    assert state["bonus"]["part"] == 0 and len(state["bonus"]["parts"]) == 1
    assert state["bonus"]["parts"][0]["tokens"] == ["The", "colour", "of", "the", "sky."]
    assert state["bonus"]["leadin_tokens"][:3] == ["For", "10", "points"]
    assert all(sha not in text for text in seen().values())
    moderator = selectors.snapshot(match.id, Role.MODERATOR, None)["state"]["bonus"]
    assert moderator["parts"][1]["tokens"][2] == image
    assert Client().get(url).status_code == 404
    assert organiser.get(url).status_code == 200

    # Part 1 is read: its image is a token at its place, with the alt text the importer stored,
    # on the tablet and the projector, and served to anyone.
    services.bonus_answer(
        match_id=match.id, player_id=ann.id, bonus_id=stored.id, part=0, text="blue", now=t0 + 2.0
    )
    (opened,) = [
        e for e in MatchEvent.objects.filter(match=match, event="bonus_part") if e.payload["part"] == 1
    ]
    assert opened.audience == "all"
    assert opened.payload["tokens"] == ["This", "colour", image, "shown", "here."]
    for audience in (Role.PLAYER, Role.SPECTATOR):
        b = selectors.snapshot(match.id, audience, ann if audience is Role.PLAYER else None)["state"]["bonus"]
        assert b["part"] == 1 and b["parts"][1]["tokens"][2] == image
    assert all(sha in text for text in seen().values())
    got = Client().get(url)
    assert got.status_code == 200 and got["Content-Type"] == "image/png"
    assert b"".join(got.streaming_content) == BLUE
    assert got["X-Content-Type-Options"] == "nosniff" and "sandbox" in got["Content-Security-Policy"]
    # Once part 1 is ruled the public recap shows it, its image as an image.
    recap = Client().get(f"/match/{match.join_code}/recap/").content.decode()
    assert sha not in recap
    services.bonus_answer(
        match_id=match.id, player_id=ann.id, bonus_id=stored.id, part=1, text="blue", now=t0 + 3.0
    )
    recap = Client().get(f"/match/{match.join_code}/recap/").content.decode()
    assert f'<img class="rc-img" src="{url}" alt="a blue square">' in recap and "[[image" not in recap


def test_bonus_text_tokens_are_words_and_stored_media():
    sha = hashlib.sha256(BLUE).hexdigest()
    assert game.text_tokens("For 10 points each:") == ["For", "10", "points", "each:"]
    assert game.text_tokens(f"A [[image:sha256:{sha}|alt|mime=image/png]] b [[delay:2]]") == [
        "A",
        game.MediaToken("image", sha, "image/png", "alt"),
        "b",
        game.MediaToken("delay", duration=2.0),
    ]
    # A marker that never named a stored file (a hand edit) stays text rather than stopping the match.
    assert game.text_tokens("A [[image:pics/x.png]] b") == ["A", "[[image:pics/x.png]]", "b"]
    assert game.text_tokens("") == []


@pytest.mark.django_db
def test_a_hand_edited_marker_is_refused_by_the_admin_check_and_by_create_match(media_folder: Path):
    from django.core.exceptions import ValidationError

    from competition.services import ServiceError

    import_file(_packet(media_folder, ["Name [[image:pics/red.png|a red square]] this colour now please."]))
    tossup = Tossup.objects.get()
    tossup.full_clean()  # the imported, stored form is valid
    for edited, message in (
        ("Name [[image:pics/red.png]] this colour.", "not a stored media file"),
        ("Name [[image:sha256:" + "1" * 64 + "]] this colour.", "not a stored media file"),
        ("Name [[delay:x]] this colour.", "number of seconds"),
    ):
        tossup.question = edited
        with pytest.raises(ValidationError, match=message):
            tossup.full_clean()
    tossup.question = "Name [[image:pics/red.png]] this colour."
    tossup.save()
    with pytest.raises(ServiceError, match="not imported") as err:
        services.create_match(name="m", tossup_ids=[tossup.id], teams=["Red", "Blue"])
    assert err.value.code == "invalid"
