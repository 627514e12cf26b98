"""The guesser loader shared by ``tossup-bot`` and ``manage.py runbot``, the ``tossup-bot`` command's
errors, and ``Guess``'s bounds; and ``runbot --guesser`` playing the scripted fake server."""

from __future__ import annotations

import asyncio
import io
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from tossup_bot import Guess, Guesser, GuesserLoadError, TossupPrefix, load_guesser, parse_options

from tests.bots.fake_server import ME, MY_TEAM, Session, play, snapshot

BOT = '''
from tossup_bot import Guess, Guesser


class Echo(Guesser):
    """Buzzes on the word ``trigger`` with ``answer``."""

    def __init__(self, trigger: str = "gamma", answer: str = "Alpha Centauri") -> None:
        self.trigger, self.answer = trigger, answer

    def guess_tossup(self, prefix):
        return Guess(self.answer, 0.9, buzz=self.trigger in prefix.tokens)


def make(answer: str) -> Echo:
    return Echo(answer=answer)


ready = Echo()
not_a_guesser = object()
'''


@pytest.fixture
def bot_file(tmp_path: Path) -> Path:
    path = tmp_path / "echo_bot.py"
    path.write_text(BOT, encoding="utf-8")
    return path


def test_loads_classes_factories_and_objects_from_files_and_modules(bot_file: Path) -> None:
    echo = load_guesser(f"{bot_file}:Echo", {"trigger": "delta", "answer": "Vega"})
    guess = echo.guess_tossup(TossupPrefix(1, 0, ("alpha", "delta")))
    assert (guess.guess, guess.buzz) == ("Vega", True)
    assert load_guesser(f"{bot_file}:make", {"answer": "Sirius"}).guess_tossup(
        TossupPrefix(1, 0, ("gamma",))
    ) == Guess("Sirius", 0.9, buzz=True)
    assert isinstance(load_guesser(f"{bot_file}:ready"), Guesser)
    chat = load_guesser("tossup_bot.llm:ChatGuesser", {"url": "http://127.0.0.1:9/v1", "model": "m"})
    assert type(chat).__name__ == "ChatGuesser" and chat.time_budget == 3.0


@pytest.mark.parametrize(
    ("spec", "options", "message"),
    [
        ("no_colon", {}, "is not module:Name"),
        ("nonexistent_module_xyz:X", {}, "cannot import module"),
        ("{file}:Missing", {}, "has no 'Missing'"),
        ("{file}:Echo", {"colour": "red"}, "unexpected keyword argument 'colour'"),
        ("{file}:ready", {"answer": "x"}, "takes no options"),
        ("{file}:not_a_guesser", {}, "has no guess_tossup"),
        ("/nowhere/bot.py:X", {}, "no such file"),
        ("tossup_bot.llm:ChatGuesser", {"model": "m"}, "needs url and model"),
    ],
)
def test_bad_specs_and_options_are_clear_errors(
    bot_file: Path, spec: str, options: dict[str, str], message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TOSSUP_LLM_URL", raising=False)
    with pytest.raises(GuesserLoadError, match=message):
        load_guesser(spec.format(file=bot_file), options)


def test_parse_options() -> None:
    assert parse_options(["max-tokens=5", "prompt=a=b", "empty="]) == {
        "max_tokens": "5",
        "prompt": "a=b",
        "empty": "",
    }
    with pytest.raises(GuesserLoadError, match="not KEY=VALUE"):
        parse_options(["novalue"])


def test_guess_bounds() -> None:
    with pytest.raises(ValueError, match="confidence"):
        Guess("x", 1.5)
    with pytest.raises(ValueError, match="confidence"):
        Guess("x", float("nan"))
    with pytest.raises(ValueError, match="cost"):
        Guess("x", 0.5, cost=-1)


def test_the_command_exits_2_on_a_bad_guesser_and_1_on_no_server(bot_file: Path) -> None:
    base = [sys.executable, "-m", "tossup_bot", "--code", "C", "--token", "t"]
    bad = subprocess.run(
        [*base, "--url", "ws://127.0.0.1:9", "--guesser", "x"], capture_output=True, text=True
    )
    assert bad.returncode == 2 and "is not module:Name" in bad.stderr
    down = subprocess.run(
        [*base, "--url", "ws://127.0.0.1:9", "--guesser", f"{bot_file}:Echo"], capture_output=True, text=True
    )
    assert down.returncode == 1 and "cannot connect to ws://127.0.0.1:9" in down.stderr


def runbot(url: str, *args: str) -> str:
    out = io.StringIO()
    call_command("runbot", "--url", url.split("/ws/")[0], "--code", "C", "--token", "t", *args, stdout=out)
    return out.getvalue()


async def test_runbot_seats_a_guesser_with_the_same_loader(bot_file: Path) -> None:
    async def script(s: Session) -> None:
        await s.ws.send(snapshot())
        await s.event("tossup_started", index=0, question_id=3, token_count=5, category="")
        await s.words(3, 0, "alpha", "beta")
        await s.quiet()
        await s.words(3, 2, "delta")
        assert (await s.expect("buzz"))["token_index"] == 2
        await s.event("buzz", question_id=3, player_id=ME, team_id=MY_TEAM, kind="bot", token_index=2)
        assert (await s.expect("answer"))["text"] == "Vega"
        await s.event("match_ended", scores={})

    args = ("--guesser", f"{bot_file}:Echo", "-o", "trigger=delta", "--option", "answer=Vega")
    output, _ = await play(script, lambda url: asyncio.to_thread(runbot, url, *args))
    assert "connected" in output and "match over" in output and "'buzzes': 1" in output


def test_runbot_guesser_errors(bot_file: Path) -> None:
    base = ["--url", "ws://127.0.0.1:1", "--code", "X", "--token", "t"]
    with pytest.raises(CommandError, match="has no 'Nope'"):
        call_command("runbot", *base, "--guesser", f"{bot_file}:Nope")
    with pytest.raises(CommandError, match="a --guesser decides its own buzz"):
        call_command("runbot", *base, "--guesser", f"{bot_file}:Echo", "--threshold", "0.5")
    with pytest.raises(CommandError, match="--option is for --guesser"):
        call_command("runbot", *base, "--bot", "replay", "-o", "x=1")


def test_a_seat_token_starting_with_a_dash_reaches_the_bot_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """Old seats may hold such tokens; the commands Tossup prints pass them as ``--token=VALUE``,
    and new tokens never start with ``-``."""
    from tossup_bot.cli import build_parser

    from competition import models

    args = build_parser().parse_args(["--url", "ws://h", "--code", "C", "--token=-x1", "--guesser", "m:G"])
    assert args.token == "-x1"
    drawn = iter(["-first", "-second", "third"])
    monkeypatch.setattr(models.secrets, "token_urlsafe", lambda n: next(drawn))
    assert models.new_token() == "third"
