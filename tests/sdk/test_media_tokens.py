"""Bots and multimodal tossups: a media token reaches the guesser as ``{kind, url, sha256, …}`` with an
absolute URL, counts for positions, and text-only guessers read only the words (issue 9, item 3)."""

from __future__ import annotations

import threading

from tossup_bot import Guess, Guesser, TossupPrefix, run_bot

from tests.bots.fake_server import Session, play, snapshot, until

SHA = "ab" * 32
IMAGE = {
    "kind": "image",
    "url": f"/media/{SHA}",
    "sha256": SHA,
    "mime": "image/png",
    "alt": "a map",
    "lockout": 2.0,
}


class Recorder(Guesser):
    """Buzzes once it has seen an image; records every prefix it was asked about."""

    def __init__(self) -> None:
        self.prefixes: list[TossupPrefix] = []
        self.lock = threading.Lock()

    def guess_tossup(self, prefix: TossupPrefix) -> Guess:
        with self.lock:
            self.prefixes.append(prefix)
        return Guess("Paris", 0.9, buzz=bool(prefix.media))


def test_prefix_text_leaves_media_out_and_positions_count_it():
    prefix = TossupPrefix(1, 0, ("This", IMAGE, "city", {"kind": "delay", "duration": 2.0}), 10)
    assert prefix.text == "This city" and prefix.seen == 4 and prefix.media == (IMAGE,)
    assert prefix.fraction == 0.4


async def test_bot_gets_the_image_token_with_an_absolute_url_and_buzzes_on_it() -> None:
    guesser = Recorder()

    async def script(s: Session) -> None:
        await s.ws.send(snapshot())
        await s.event("tossup_started", index=0, question_id=5, token_count=6, category="Geography")
        await s.words(5, 0, "Name", "this")
        await until(lambda: any(p.seen == 2 for p in guesser.prefixes))
        await s.event("words", question_id=5, start=2, words=[IMAGE], revealed_at=0.0)
        buzz = await s.expect("buzz")
        assert (buzz["question_id"], buzz["token_index"]) == (5, 2)  # the image is token 2
        await s.event("match_ended", scores={})

    await play(script, lambda url: run_bot(url, guesser))
    seen = next(p for p in guesser.prefixes if p.media)
    (image,) = seen.media
    assert image["url"].startswith("http://127.0.0.1:") and image["url"].endswith(f"/media/{SHA}")
    assert (image["sha256"], image["alt"], seen.text, seen.seen) == (SHA, "a map", "Name this", 3)
