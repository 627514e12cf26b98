"""Bots the server runs: the guessers this server knows, and which bot seat should run which.

:func:`known_guessers` lists what a moderator may put on a bot seat from the dashboard: the reference
bots this machine can run (TF-IDF when its training file exists, the Wikipedia bot when its package
is installed) and the LLM endpoints the organiser
configured (``TOSSUP_LLM_ENDPOINTS``: a JSON file, see :func:`read_endpoints`). Each declares its
weight class and its cost in USD per prefix asked.

:func:`launch` stores the wish (a :class:`~competition.models.BotLaunch` row); ``manage.py
bot_supervisor`` (a child of ``serve``) starts one ``manage.py runbot`` process per wanted launch of a
match not ended, which connects over the websocket protocol like any bot, restarts it when it dies
and stops it when the match ends, the launch is stopped or the seat is deleted. API keys travel only
in the bot process's environment: never in a page, a command line or the database.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction

from competition import services
from competition.models import BotLaunch, Match, Player
from competition.services import ServiceError
from formats import FormatError, wikisummaries

WEIGHT_CLASSES = ("light", "mid", "heavy")
QBREADER = Path("packets") / "qbreader_packets_2012_2022.jsonl.gz"  # under SHARED_DATA_DIR
TRAIN_MAX_YEAR = 2020  # the built-in bots never train on the 2021–2022 sets (the benchmark's years)
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Endpoint fields passed to tossup_bot.llm.ChatGuesser as -o options (all optional).
LLM_OPTIONS = (
    "threshold",
    "min_tokens",
    "budget",
    "every",
    "max_tokens",
    "temperature",
    "price_in",
    "price_out",
)
API_KEY_ENV = "TOSSUP_LLM_API_KEY"  # what ChatGuesser reads its key from (tossup_bot.llm)
#: An endpoint enabled for writing (``"workshop": true``) is asked on this many prefixes per analysis
#: unless its ``workshop_prefixes`` says otherwise (1 to :data:`MAX_WORKSHOP_PREFIXES`).
WORKSHOP_PREFIXES = 6
MAX_WORKSHOP_PREFIXES = 50


@dataclass(frozen=True)
class KnownGuesser:
    """One guesser the server can start on a bot seat.

    ``key``: its id in forms and launches (``tfidf``, ``wiki``, ``llm:<name>``);
    ``label``, ``note``: for the dashboard; ``weight_class``: light | mid | heavy; ``cost``: declared
    USD per prefix; ``runbot_args``: the ``manage.py runbot`` flags that build it; ``key_env``: the
    server environment variable holding its API key ("" for none). An LLM endpoint also has
    ``chat_options``, the ``tossup_bot.llm.ChatGuesser`` options (name, value as a string) that build
    it, and ``workshop_prefixes``, how many prefixes the writing workshop asks it per analysis (0: not
    enabled for writing)."""

    key: str
    label: str
    weight_class: str
    cost: float
    note: str
    runbot_args: tuple[str, ...]
    key_env: str = ""
    chat_options: tuple[tuple[str, str], ...] = ()
    workshop_prefixes: int = 0

    def command(self, python: str, ws_url: str, code: str, token: str) -> list[str]:
        """``python manage.py runbot …`` for the seat ``token`` of match ``code`` at ``ws_url``
        (``ws://host:port``); the token as ``--token=VALUE`` (one argument, whatever it starts with)."""
        return [python, "manage.py", "runbot", "--url", ws_url, "--code", code, f"--token={token}",
                "--no-progress", *self.runbot_args]  # fmt: skip

    def environment(self, base: dict[str, str]) -> dict[str, str]:
        """``base`` plus the API key (from this process's ``key_env``) where the guesser reads it."""
        env = dict(base)
        env.pop(API_KEY_ENV, None)
        if self.key_env:
            env[API_KEY_ENV] = os.environ.get(self.key_env, "")
        return env


@dataclass
class Registry:
    """The guessers this server knows, and why any configured one is missing (for the dashboard)."""

    guessers: list[KnownGuesser] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def get(self, key: str) -> KnownGuesser | None:
        return next((g for g in self.guessers if g.key == key), None)


def _number(entry: dict[str, Any], key: str, default: float) -> float:
    value = entry.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{key} must be a number ≥ 0, got {value!r}")
    return float(value)


def _endpoint(entry: Any) -> KnownGuesser:
    """One endpoint object of the organiser's file; ValueError says what is wrong with it."""
    if not isinstance(entry, dict):
        raise ValueError("each endpoint is a JSON object")
    name, url, model = entry.get("name"), entry.get("url"), entry.get("model")
    if not all(isinstance(v, str) and v.strip() for v in (name, url, model)):
        raise ValueError("name, url and model are required strings")
    assert isinstance(name, str) and isinstance(url, str) and isinstance(model, str)
    if {"key", "api_key"} & set(entry):
        raise ValueError(f"{name}: put the API key in an environment variable and name it in key_env")
    key_env = entry.get("key_env", "")
    if not isinstance(key_env, str) or (key_env and not ENV_NAME.match(key_env)):
        raise ValueError(f"{name}: key_env must be an environment variable name")
    weight = entry.get("weight_class", "heavy")
    if weight not in WEIGHT_CLASSES:
        raise ValueError(f"{name}: weight_class must be light, mid or heavy")
    unknown = set(entry) - {
        "name", "url", "model", "key_env", "weight_class", "cost", "note", "workshop", "workshop_prefixes",
        *LLM_OPTIONS,
    }  # fmt: skip
    if unknown:
        raise ValueError(f"{name}: unknown field(s) {sorted(unknown)}")
    writing = entry.get("workshop", False)
    if not isinstance(writing, bool):
        raise ValueError(f"{name}: workshop must be true or false, got {writing!r}")
    prefixes = entry.get("workshop_prefixes", WORKSHOP_PREFIXES)
    if (
        isinstance(prefixes, bool)
        or not isinstance(prefixes, int)
        or not 1 <= prefixes <= MAX_WORKSHOP_PREFIXES
    ):
        raise ValueError(
            f"{name}: workshop_prefixes must be a whole number from 1 to {MAX_WORKSHOP_PREFIXES}, got {prefixes!r}"
        )
    options = [("url", url), ("model", model)]
    options += [(option, str(_number(entry, option, 0.0))) for option in LLM_OPTIONS if option in entry]
    args = ["--guesser", "tossup_bot.llm:ChatGuesser"]
    for option, value in options:
        args += ["-o", f"{option}={value}"]
    note = entry.get("note") or f"{model} at {url}"
    return KnownGuesser(
        key=f"llm:{name.strip()}",
        label=name.strip(),
        weight_class=weight,
        cost=_number(entry, "cost", 0.0),
        note=str(note),
        runbot_args=tuple(args),
        key_env=key_env,
        chat_options=tuple(options),
        workshop_prefixes=prefixes if writing else 0,
    )


def read_endpoints(path: str | Path) -> tuple[list[KnownGuesser], list[str]]:
    """The LLM endpoints of the organiser's JSON file: a list of objects ``{"name", "url", "model",
    "key_env"?, "weight_class"? (default heavy), "cost"? (USD per prefix, default 0), "note"?,
    "workshop"? (true: the writing workshop asks it too; default false), "workshop_prefixes"? (how
    many prefixes per analysis, 1 to :data:`MAX_WORKSHOP_PREFIXES`, default :data:`WORKSHOP_PREFIXES`),
    and ChatGuesser's "threshold", "min_tokens", "budget", "every", "max_tokens", "temperature",
    "price_in", "price_out"?}``. Returns ``(guessers, problems)``: an unreadable file or a bad entry
    is a problem (one line each), never an exception; the good entries still count."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return [], [f"LLM endpoints file {path}: {exc}"]
    if not isinstance(data, list):
        return [], [f"LLM endpoints file {path}: expected a JSON list of endpoints"]
    guessers: list[KnownGuesser] = []
    problems: list[str] = []
    for number, entry in enumerate(data, 1):
        try:
            guesser = _endpoint(entry)
        except ValueError as exc:
            problems.append(f"LLM endpoint #{number} in {path}: {exc}")
            continue
        if any(g.key == guesser.key for g in guessers):
            problems.append(f"LLM endpoint #{number} in {path}: name {guesser.label!r} used twice")
            continue
        guessers.append(guesser)
    return guessers, problems


def known_guessers() -> Registry:
    """The guessers this server can start now (see the module docstring), from the settings
    ``BOT_TFIDF_TRAIN`` (default the qbreader dump in ``SHARED_DATA_DIR``), ``BOT_CACHE_DIR`` and
    ``BOT_LLM_ENDPOINTS``."""
    registry = Registry()
    cache = Path(settings.BOT_CACHE_DIR)
    shared = Path(settings.SHARED_DATA_DIR)
    train = Path(settings.BOT_TFIDF_TRAIN or shared / QBREADER)
    if train.is_file():
        _add_ensemble(registry, train)
        # With the default dump, QANTA's tossups too (when the shared data has them): the strongest
        # reference bot this machine can build. A training file the organiser names stands alone.
        extra = [] if settings.BOT_TFIDF_TRAIN else sorted((shared / "qanta").glob("qanta.*.json.gz"))
        name = f"tfidf-{train.name.split('.')[0]}{'-qanta' if extra else ''}-{TRAIN_MAX_YEAR}.joblib"
        registry.guessers.append(
            KnownGuesser(
                "tfidf",
                "TF-IDF reference bot",
                "light",
                0.0,
                f"trained on {train.name}{' and QANTA' if extra else ''} up to {TRAIN_MAX_YEAR}, with a learned, "
                "calibrated buzzer (its first start trains it: minutes; later starts load it)",
                (
                    "--bot",
                    "tfidf",
                    "--train",
                    str(train),
                    *(a for q in extra for a in ("--extra-train", str(q))),
                    "--max-year",
                    str(TRAIN_MAX_YEAR),
                    "--model-cache",
                    str(cache / name),  # retrained when stale
                ),
            )
        )
    else:
        registry.problems.append(f"TF-IDF bot: no training file at {train}")
    try:
        version = wikisummaries.version()
    except FormatError as exc:
        registry.problems.append(f"Wikipedia bot: {exc}")
    else:
        registry.guessers.append(
            KnownGuesser(
                "wiki",
                "Wikipedia bot",
                "light",
                0.0,
                f"knows the Wikipedia vital-article summaries of {wikisummaries.DISTRIBUTION} {version}",
                ("--bot", "wiki"),
            )
        )
    if settings.BOT_LLM_ENDPOINTS:
        guessers, problems = read_endpoints(settings.BOT_LLM_ENDPOINTS)
        registry.guessers += guessers
        registry.problems += problems
    return registry


@dataclass(frozen=True)
class ModelPaths:
    """The files of the ensemble bot for one training set: the qbreader dump, the extra question
    files, the neural checkpoint ``manage.py train_guesser`` writes and the ensemble fitted on it
    (each file carries its model version and is refused, and refitted or retrained, on another)."""

    train: Path
    extra: tuple[Path, ...]
    neural: Path
    ensemble: Path


def model_paths(train: str | Path | None, extra: Sequence[str | Path] | None, max_year: int) -> ModelPaths:
    """The ensemble bot's files under ``BOT_CACHE_DIR``, named by the data and the year. ``train``
    None: the shared qbreader dump; with that dump and ``extra`` None, the shared QANTA files too (a
    file one names stands alone). Raises FileNotFoundError when the training file is missing."""
    shared = Path(settings.SHARED_DATA_DIR)
    dump = Path(train) if train else shared / QBREADER
    if not dump.is_file():
        raise FileNotFoundError(
            f"no training file at {dump} (pass --train, or put the shared data beside the project)"
        )
    if extra is None:
        files = tuple(sorted((shared / "qanta").glob("qanta.*.json.gz"))) if _is_shared_dump(dump) else ()
    else:
        files = tuple(Path(p) for p in extra)
    stem = f"{dump.name.split('.')[0]}{'-qanta' if files else ''}-{max_year}"
    cache = Path(settings.BOT_CACHE_DIR)
    return ModelPaths(dump, files, cache / f"neural-{stem}.pt", cache / f"ensemble-{stem}.joblib")


def _is_shared_dump(path: Path) -> bool:
    return path.resolve() == (Path(settings.SHARED_DATA_DIR) / QBREADER).resolve()


def _add_ensemble(registry: Registry, train: Path) -> None:
    """The ensemble bot when ``manage.py train_guesser`` has left its neural checkpoint for this
    training file (else a problem line saying how to train one)."""
    paths = model_paths(train, None, TRAIN_MAX_YEAR)
    if not paths.neural.is_file():
        registry.problems.append(
            f"Ensemble bot: no trained neural guesser at {paths.neural} (train it with "
            "`./run manage train_guesser`, about 16 min on 2 idle cores)"
        )
        return
    registry.guessers.append(
        KnownGuesser(
            "ensemble",
            "Ensemble bot (neural + TF-IDF)",
            "light",
            0.0,
            f"a neural guesser and the TF-IDF reference bot trained on {train.name}"
            f"{' and QANTA' if paths.extra else ''} up to {TRAIN_MAX_YEAR}, with a learned, calibrated "
            "buzzer on both (its first start fits the ensemble: minutes; later starts load it)",
            (
                "--bot",
                "ensemble",
                "--train",
                str(train),
                *(a for q in paths.extra for a in ("--extra-train", str(q))),
                "--max-year",
                str(TRAIN_MAX_YEAR),
                "--neural",
                str(paths.neural),
                "--model-cache",
                str(paths.ensemble),
            ),
        )
    )


def launch(
    *, match: Match, player_id: int, guesser: str, weight_class: str | None = None, cost: float | None = None
) -> BotLaunch:
    """Run ``guesser`` (a key of :func:`known_guessers`) on bot seat ``player_id`` of ``match``;
    replaces what the seat ran before (the supervisor restarts it with the new guesser).
    ``weight_class`` and ``cost`` (USD per prefix) are the organiser's declaration (default: the
    guesser's).

    Raises ServiceError: ``not_found`` (no such bot seat), ``closed`` (the match ended),
    ``invalid`` (a guesser this server does not know)."""
    known = known_guessers().get(guesser)
    if known is None:
        raise ServiceError("invalid", f"this server knows no guesser {guesser!r}")
    with transaction.atomic():
        match = Match.objects.select_for_update().get(pk=match.pk)
        if match.status == Match.Status.ENDED:
            raise ServiceError("closed", "the match has ended")
        player = match.players.filter(pk=player_id, kind=Player.Kind.BOT).first()
        if player is None:
            raise ServiceError("not_found", "no such bot seat in this match")
        before = BotLaunch.objects.filter(player=player).values_list("generation", flat=True).first()
        row, _ = BotLaunch.objects.update_or_create(
            player=player,
            defaults={
                "guesser": known.key,
                "weight_class": weight_class or known.weight_class,
                "cost": known.cost if cost is None else cost,
                "wanted": True,
                "state": BotLaunch.State.STARTING,
                "pid": None,
                "restarts": 0,
                "detail": "",
                "generation": (before or 0) + 1,  # the supervisor replaces an older process
            },
        )
    return row


def add_bot(
    *,
    match: Match,
    name: str,
    team_id: int | None,
    guesser: str,
    weight_class: str | None = None,
    cost: float | None = None,
) -> BotLaunch:
    """A new bot seat on team ``team_id`` of ``match``, or on a new team of its own when None
    (lobby or running; ``services.seat_bot``: events every dashboard sees) that runs ``guesser``, a key of
    :func:`known_guessers`, declared with ``weight_class`` (light | mid | heavy) and ``cost`` in USD
    per prefix (≥ 0), each by default the guesser's. Seat and launch are stored together or not at all.

    Raises ServiceError as ``services.seat_bot`` and :func:`launch`, and ``invalid`` for a bad cost."""
    known = known_guessers().get(guesser)
    if known is None:
        raise ServiceError("invalid", f"this server knows no guesser {guesser!r}")
    cost = known.cost if cost is None else cost
    if isinstance(cost, bool) or not isinstance(cost, int | float) or not math.isfinite(cost) or cost < 0:
        raise ServiceError("invalid", "cost must be a number of USD per prefix, 0 or more")
    weight_class = weight_class or known.weight_class
    with transaction.atomic():
        seat = services.seat_bot(match_id=match.pk, name=name, team_id=team_id, weight_class=weight_class)
        return launch(match=match, player_id=seat.id, guesser=guesser, weight_class=weight_class, cost=cost)


def stop(*, match: Match, player_id: int) -> None:
    """Stop the bot the server runs on seat ``player_id`` (the supervisor ends its process).

    Raises ServiceError ``not_found`` when the server runs no bot there."""
    if not BotLaunch.objects.filter(player__match=match, player_id=player_id, wanted=True).update(
        wanted=False
    ):
        raise ServiceError("not_found", "the server runs no bot on that seat")


def seat_launches(match: Match) -> dict[int, BotLaunch]:
    """``{player_id: launch}`` of the match's bot seats that have one."""
    return {row.player_id: row for row in BotLaunch.objects.filter(player__match=match)}


def wanted() -> list[BotLaunch]:
    """Launches to keep running: wanted, of a match not ended (with seat and match loaded)."""
    return list(
        BotLaunch.objects.filter(wanted=True)
        .exclude(player__match__status=Match.Status.ENDED)
        .select_related("player", "player__match")
    )
