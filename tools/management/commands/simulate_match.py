"""Play a whole match headlessly on real questions: real ASGI server (Redis channel layer),
real Celery worker, simulated humans and the bot as real websocket clients; then wait for
the IRT fit and write a JSON report (docs/OPERATIONS.md lists the command; docs/PROTOCOL.md the protocol)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from buzzer.bots.answers import main_answer
from buzzer.bots.replay import RecordedBuzz, ReplayFileError, ReplayGuesser, load_buzz_file
from buzzer.bots.tfidf import RECOMMENDED_MIN_TOKENS, RECOMMENDED_THRESHOLD
from competition import services
from competition.botlaunch import QBREADER
from competition.game import EventName
from competition.importers import DEMO_PACKET, FORMATS, QuestionFileError, detect_format, import_file
from competition.management import progress
from competition.management.errors import command_error
from competition.models import Bonus, BonusPartResult, Buzz, Match, Packet, QuestionSet, Tossup
from competition.vocabulary import BuzzLogRuling, SeatKind
from formats.errors import FormatError
from irt.models import Fit
from irt.pipeline import identity_key
from irt.selectors import subject_labels
from scoring.rules import load_preset
from tools import launcher
from tools.simulation import HUMANS, SimPlayer, moderate, unattended_config


def _packet_order(packet: Packet) -> tuple[int, str]:
    return (int(packet.name), "") if packet.name.isdigit() else (10**6, packet.name)


class Command(BaseCommand):
    help = "Simulate a live match end to end and write a report (scoreboard, buzzes, leaderboard, ADVSCORE)."

    def add_arguments(self, parser):
        parser.add_argument(
            "--packets",
            help="question file (qbreader JSONL[.gz], QANTA JSON, demo JSON) or an exhibition folder/CSV (expo)",
        )
        parser.add_argument("--format", dest="fmt", choices=("auto", *FORMATS), default="auto")
        parser.add_argument(
            "--set",
            dest="set_name",
            help="the question set to play (qbreader 'set' value; optional when the file holds one set)",
        )
        parser.add_argument("--demo", action="store_true", help="play the bundled demo packet")
        parser.add_argument("--tossups", type=int, default=20)
        parser.add_argument("--teams", type=int, default=2)
        parser.add_argument("--players-per-team", type=int, default=4)
        parser.add_argument(
            "--bot",
            choices=["ensemble", "tfidf", "none"],
            default="ensemble",
            help="ensemble (default: neural + TF-IDF, needs `manage.py train_guesser` first), the TF-IDF "
            "reference bot, or none",
        )
        parser.add_argument(
            "--replay-bot",
            help="a *.buzz.csv file or a folder of them (qb-tournament-runner or 2024 exhibition logs): "
            "a bot that buzzes where the recorded system did, matched by the questions' external ids",
        )
        parser.add_argument("--bot-train", help="packet file the TF-IDF bot trains on")
        parser.add_argument("--bot-train-max-year", type=int)
        parser.add_argument(
            "--extra-train",
            action="append",
            default=[],
            type=Path,
            help="more training questions for the TF-IDF bot, any file the importers read (e.g. the QANTA "
            "JSON files; --bot-train-max-year applies); repeatable",
        )
        parser.add_argument("--bot-threshold", type=float, default=None)
        parser.add_argument("--preset", default="naqt")
        parser.add_argument("--wpm", type=float, default=1500.0, help="reading speed (fast: nobody waits)")
        parser.add_argument(
            "--bot-delay-ms",
            type=float,
            default=None,
            help="bots' reaction delay after a word's reveal; wins over the preset's (default: the preset's, "
            "else 300 ms)",
        )
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--report", default="report.json")
        parser.add_argument(
            "--server", help="use this running server (http://host:port) instead of starting one"
        )
        parser.add_argument("--timeout", type=float, default=1800.0)
        progress.add_progress_flag(parser)

    def handle(self, *args: Any, **opts: Any) -> None:
        started = time.time()
        try:
            load_preset(opts["preset"])
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if opts["bot_delay_ms"] is not None and not opts["bot_delay_ms"] >= 0:
            raise CommandError("--bot-delay-ms must be ≥ 0")
        replay = self._replay(opts["replay_bot"]) if opts["replay_bot"] else None
        if opts["bot"] == "ensemble":
            self._ensemble_paths(opts)  # no checkpoint: say how to train one before anything starts
        call_command("migrate", verbosity=0)
        tossups, bonuses = self._questions(opts)
        guesser = self._guesser(opts)
        config: dict[str, Any] = unattended_config(opts["wpm"])
        if opts["bot_delay_ms"] is not None:
            config["bot_delay"] = opts["bot_delay_ms"] / 1000.0
        team_names = [f"Team {i + 1}" for i in range(opts["teams"])]
        bots = [{"name": opts["bot"], "weight_class": "light"}] if guesser is not None else []
        if replay is not None:
            bots.append({"name": replay[0], "weight_class": ""})
        try:
            match = services.create_match(
                name=f"simulation seed {opts['seed']}",
                tossup_ids=[t.id for t in tossups],
                bonus_ids=[b.id for b in bonuses],
                preset=opts["preset"],
                teams=team_names,
                bots=bots,
                config=config,
            )
        except services.ServiceError as exc:
            raise command_error(exc) from exc
        rng = random.Random(opts["seed"])
        sims: list[SimPlayer] = []
        answers = {t.id: main_answer(t.answer_line) for t in tossups}
        bonus_answers = {
            (b.id, k): main_answer(part["answer_line"]) for b in bonuses for k, part in enumerate(b.parts)
        }
        roster = []
        for t, team in enumerate(team_names):
            skills = [HUMANS.skill(rng) for _ in range(opts["players_per_team"])]
            for p, skill in enumerate(skills):
                seat = f"t{t + 1}p{p + 1}"
                player = services.join_match(code=match.join_code, name=f"m{match.id}-{seat}", team=team)
                roster.append((player, seat, skill, max(skills), p == 0))
        procs: list[Any] = []
        try:
            base = opts["server"] or self._start_stack(procs)
            ws = base.replace("http://", "ws://").replace("https://", "wss://").rstrip("/")
            for player, seat, skill, team_skill, captain in roster:
                sims.append(
                    SimPlayer(
                        url=f"{ws}/ws/match/{match.join_code}/play/?token={player.token}",
                        name=player.name,
                        stream=seat,  # not the name: it carries the match id
                        true_skill=skill,
                        seed=opts["seed"],
                        answers=answers,
                        bonus_answers=bonus_answers,
                        team_skill=team_skill,
                        captain=captain,
                    )
                )
            bot_tokens = dict(match.players.filter(kind=SeatKind.BOT).values_list("name", "token"))
            bots_to_run = []
            if guesser is not None:
                bots_to_run.append((guesser, bot_tokens[opts["bot"]]))
            if replay is not None:
                # The question → source id map comes from the database here, never from the server's
                # payloads (players and bots are not told source ids: they would give answers away).
                question_map = {str(t.id): t.external_id for t in tossups if t.external_id}
                bots_to_run.append((ReplayGuesser(replay[1], question_map), bot_tokens[replay[0]]))
            bot_urls = [(g, f"{ws}/ws/match/{match.join_code}/play/?token={tok}") for g, tok in bots_to_run]
            mod_url = f"{ws}/ws/match/{match.join_code}/moderate/?token={match.moderator_token}"
            events = asyncio.run(self._play(sims, bot_urls, mod_url, opts, len(tossups)))
            fit = self._wait_for_fit(match, opts)
        finally:
            launcher.stop(*reversed(procs))
        report = self._report(match, sims, events, fit, time.time() - started)
        Path(opts["report"]).write_text(json.dumps(report, indent=2))
        self.stdout.write(
            f"match {match.join_code}: {len(report['buzzes'])} buzzes, scoreboard {report['scoreboard']}, "
            f"duration {report['duration_s']:.1f}s, human skill Spearman {report['human_skill_spearman']}"
        )
        self.stdout.write(f"report written to {opts['report']}")

    # --- setup -----------------------------------------------------------------------------

    def _questions(self, opts: dict[str, Any]) -> tuple[list[Tossup], list[Bonus]]:
        if opts["set_name"] and not opts["packets"] and not opts["demo"]:
            # A set by name alone is read from the qbreader dump of the shared data folder.
            opts["packets"] = str(Path(settings.SHARED_DATA_DIR) / QBREADER)
            if not Path(opts["packets"]).exists():
                raise CommandError(
                    f"--set {opts['set_name']}: {opts['packets']} is absent; name the file with --packets"
                )
        if opts["demo"] or not opts["packets"]:
            path = DEMO_PACKET
            counts = import_file(path, fmt="demo")
            set_name = next(iter(counts["sets"]))
        else:
            path = Path(opts["packets"])
            if not path.exists():
                raise CommandError(f"{path}: no such file or folder")
            try:
                fmt = detect_format(path) if opts["fmt"] == "auto" else opts["fmt"]
                if not opts["set_name"] and fmt in ("qbreader", "qanta"):
                    raise CommandError(f"--set is required with a {fmt} file (it holds many sets)")
                sets = [opts["set_name"]] if opts["set_name"] else None
                counts = import_file(path, fmt=fmt, sets=sets, skip_invalid=True)
            except QuestionFileError as exc:
                raise command_error(exc) from exc
            if counts.get("skipped"):
                self.stdout.write(f"skipped {counts['skipped']} invalid records (see import_questions)")
            if not opts["set_name"] and len(counts["sets"]) != 1:
                raise CommandError(f"{path} holds {len(counts['sets'])} sets; choose one with --set")
            set_name = opts["set_name"] or next(iter(counts["sets"]))
        qset = QuestionSet.objects.filter(name=set_name).first()
        if qset is None:
            raise CommandError(f"no question set named {set_name!r} in {path}")
        packets = sorted(qset.packets.all(), key=_packet_order)
        tossups = [t for p in packets for t in p.tossups.order_by("number")][: opts["tossups"]]
        bonuses = [b for p in packets for b in p.bonuses.order_by("number")][: opts["tossups"]]
        if not tossups:
            raise CommandError(f"set {set_name!r} has no tossups")
        return tossups, bonuses

    def _guesser(self, opts: dict[str, Any]):
        if opts["bot"] == "none":
            return None
        if opts["bot"] == "ensemble":
            return self._ensemble(opts)
        train = opts["bot_train"] or opts["packets"]
        if not train:
            raise CommandError(
                "--bot-train is required with --demo (a qbreader packet file), or use --bot none"
            )
        if opts["extra_train"] and opts["bot"] != "tfidf":
            raise CommandError("--extra-train trains the tfidf bot only")
        bar = progress.wrapper(opts, desc=f"training {opts['bot']}", unit="tossup")
        return _cached_guesser(
            opts["bot"], Path(train), opts["bot_train_max_year"], self.stdout.write, bar, opts["extra_train"]
        )

    def _ensemble_paths(self, opts: dict[str, Any]) -> Any:
        """The ensemble bot's files for ``--bot-train`` (default the shared dump and QANTA) up to
        ``--bot-train-max-year`` (default 2020); CommandError, saying how to train one, without
        the neural checkpoint."""
        from competition import botlaunch

        max_year = opts["bot_train_max_year"] or botlaunch.TRAIN_MAX_YEAR
        train = opts["bot_train"] or (opts["packets"] if not opts["demo"] else None)
        try:
            paths = botlaunch.model_paths(train, opts["extra_train"] or None, max_year)
        except FileNotFoundError as exc:
            raise CommandError(f"--bot ensemble: {exc}") from exc
        if not paths.neural.is_file():
            raise CommandError(
                f"--bot ensemble: no trained neural guesser at {paths.neural}: train one with "
                "`./run manage train_guesser`, or pass --bot tfidf"
            )
        return paths

    def _ensemble(self, opts: dict[str, Any]) -> Any:
        """The ensemble bot: train_guesser's checkpoint, its ensemble fitted now if missing."""
        from buzzer.bots import ensemble
        from competition import botlaunch

        paths = self._ensemble_paths(opts)
        max_year = opts["bot_train_max_year"] or botlaunch.TRAIN_MAX_YEAR
        try:
            return ensemble.load_or_fit(
                paths.neural,
                paths.ensemble,
                lambda: ensemble.training_records(paths.train, paths.extra, max_year),
                say=self.stdout.write,
                progress=progress.wrapper(opts, desc="counting words", unit="question"),
            )
        except (OSError, ValueError) as exc:  # a stale checkpoint, FormatError
            raise CommandError(f"--bot ensemble: {exc}") from exc

    def _replay(self, location: str) -> tuple[str, dict[str, RecordedBuzz]]:
        """(bot name, external id → first recorded buzz) from a buzz file or a folder of them."""
        path = Path(location)
        files = sorted(path.glob("*.buzz.csv")) if path.is_dir() else [path]
        if not files or not files[0].exists():
            raise CommandError(f"{path}: no *.buzz.csv file there")
        buzzes: dict[str, RecordedBuzz] = {}
        try:
            for f in files:
                for qid, buzz in load_buzz_file(f).items():
                    if qid not in buzzes or buzz.token_index < buzzes[qid].token_index:
                        buzzes[qid] = buzz
        except ReplayFileError as exc:
            raise command_error(exc) from exc
        name = path.name if path.is_dir() else path.name.removesuffix(".buzz.csv")
        return f"replay-{name}", buzzes

    def _start_stack(self, procs: list[Any]) -> str:
        return start_stack(procs)

    async def _play(self, sims, bots, mod_url, opts, n_tossups: int) -> list[dict[str, Any]]:
        """``bots``: [(guesser, play url)]; a replay guesser answers with confidence 0 or 1. A bar
        counts the tossups played (of ``n_tossups``)."""
        from buzzer.bots.adapter import run_bot

        tasks = [asyncio.create_task(s.run(), name=s.name) for s in sims]
        for guesser, url in bots:
            # A replay bot buzzes where the recording says; only the live model waits for words. The
            # reference TF-IDF bot carries the threshold and minimum its learned buzzer was fitted with.
            threshold = getattr(guesser, "threshold", RECOMMENDED_THRESHOLD)
            if opts["bot_threshold"] is not None:
                threshold = opts["bot_threshold"]
            min_tokens = (
                0
                if isinstance(guesser, ReplayGuesser)
                else getattr(guesser, "min_tokens", RECOMMENDED_MIN_TOKENS)
            )
            bot = run_bot(url, guesser, threshold=threshold, min_tokens=min_tokens)
            tasks.append(asyncio.create_task(bot, name=type(guesser).__name__))
        await asyncio.sleep(0.5)  # let every client receive its snapshot before the start
        played: set[int] = set()

        def count(msg: dict[str, Any]) -> None:
            if msg["event"] == EventName.TOSSUP_ENDED:
                played.add(msg["data"]["question_id"])
                bar.update(len(played) - bar.n)

        try:
            with progress.bar(opts, total=n_tossups, desc="playing", unit="tossup") as bar:
                events = await moderate(mod_url, timeout=opts["timeout"], on_event=count)
            _, pending = await asyncio.wait(tasks, timeout=30)
            if pending:  # the match is over and stored; a client that missed the end must not sink the report
                names = ", ".join(sorted(t.get_name() for t in pending))
                self.stderr.write(f"clients still connected 30 s after match_ended: {names}")
            for t in tasks:
                if t.done() and not t.cancelled() and (error := t.exception()) is not None:
                    raise error
        finally:
            for t in tasks:
                t.cancel()
        return events

    def _wait_for_fit(self, match: Match, opts: dict[str, Any]) -> Fit:
        timeout = opts["timeout"]
        end = time.time() + timeout
        with progress.fraction_bar(opts, "IRT fit (worker)") as advance:
            while time.time() < end:
                fit = Fit.objects.filter(dataset=f"match:{match.id}").order_by("-created_at").first()
                if fit is not None:
                    advance(fit.progress)
                if fit is not None and fit.status == Fit.Status.DONE:
                    return fit
                if fit is not None and fit.status == Fit.Status.FAILED:
                    raise CommandError(f"IRT fit failed: {fit.error}")
                time.sleep(0.5)
        raise CommandError(
            f"no IRT fit for match {match.id} after {timeout:.0f}s (is the Celery worker running?)"
        )

    # --- report ----------------------------------------------------------------------------

    def _report(self, match: Match, sims, events, fit: Fit, duration: float) -> dict[str, Any]:
        match.refresh_from_db()
        teams = {t.id: t.name for t in match.teams.all()}
        scores = match.state.get("scores", {})
        scoreboard = {teams[int(k)]: v for k, v in scores.items()}
        bonus_points = {name: 0 for name in teams.values()}
        for r in BonusPartResult.objects.filter(match=match).exclude(ruling=BuzzLogRuling.UNDONE):
            bonus_points[teams[r.team_id]] += r.points
        buzzes = [
            {
                "question_id": b.tossup_id,
                "external_id": b.tossup.external_id,
                "subject": b.player.name,
                "kind": b.kind,
                "team": teams[b.team_id],
                "token_index": b.token_index,
                "token_count": b.token_count,
                "guess": b.guess,
                "verdict": b.verdict,
                "ruling": b.ruling,
                "points": b.points,
                "revealed_at": b.revealed_at,
                "received_at": b.received_at,
                "accepted_at": b.accepted_at,
                "ruled_at": b.ruled_at,
                "client_time": b.client_time,
                "corrected_press_at": b.corrected_press_at,
            }
            for b in Buzz.objects.filter(match=match).select_related("player", "tossup").order_by("seq")
        ]
        # Subjects are identities (irt.pipeline.identity_key): the simulated players' seats say whose.
        seats = {p.name: identity_key(p.kind, p.competitor_id, p.id) for p in match.players.all()}
        true_skill = {seats[s.name]: s.true_skill for s in sims if s.name in seats}
        skills = list(fit.skills.all())
        labels = subject_labels(s.subject for s in skills)
        leaderboard = []
        for s in skills:
            row = {
                "subject": labels[s.subject],
                "kind": s.kind,
                "skill": s.skill,
                "skill_se": s.skill_se,
            }
            if s.subject in true_skill:
                row["true_skill"] = true_skill[s.subject]
            leaderboard.append(row)
        humans = [r for r in leaderboard if "true_skill" in r]
        questions = [
            {
                "question_id": i.tossup_id,
                "difficulty": i.difficulty,
                "discriminability": i.discriminability,
                "mu": i.mu,
                "delta": i.delta,
                "kappa": i.kappa,
                "advscore": i.advscore,
            }
            for i in fit.items.all()
        ]
        races = [e["data"] for e in events if e["event"] == EventName.RACE]
        external = dict(Tossup.objects.filter(id__in=match.tossup_ids).values_list("id", "external_id"))
        played = [{"question_id": i, "external_id": external[i]} for i in match.tossup_ids]
        return {
            "match": {"id": match.id, "join_code": match.join_code, "preset": match.preset},
            "duration_s": duration,
            "scoreboard": scoreboard,
            "bonus_points": bonus_points,
            "adjustments": {},
            "tossups": played,
            "buzzes": buzzes,
            "races": races,
            "leaderboard": leaderboard,
            "human_skill_spearman": _spearman(
                [r["skill"] for r in humans], [r["true_skill"] for r in humans]
            ),
            "question_set": Tossup.objects.filter(pk=match.tossup_ids[0])
            .values_list("packet__question_set__name", flat=True)
            .first(),
            "questions": questions,
            "advscore": fit.summary,
            "fit": {"id": fit.id, "duration_s": fit.duration_s, "n_responses": fit.n_responses},
            "python": sys.version.split()[0],
        }


def start_stack(procs: list[Any]) -> str:
    """Redis (reused if REDIS_URL answers), uvicorn and a Celery worker on this DB; the processes
    are appended to ``procs`` (stop them with ``launcher.stop``). Returns the server's base URL."""
    launcher.exit_on_sigterm()
    redis_url, redis_proc = launcher.ensure_redis()
    procs.append(redis_proc)
    env = launcher.child_env(REDIS_URL=redis_url)
    logs = Path(settings.VAR_DIR)
    logs.mkdir(exist_ok=True)
    procs.append(launcher.start_worker(env, log=logs / "worker.log"))
    port = launcher.free_port()
    procs.append(launcher.start_server(port, env, log=logs / "server.log"))
    return f"http://127.0.0.1:{port}"


def _cached_guesser(
    kind: str, train: Path, max_year: int | None, say, bar=None, extra: Sequence[Path] = ()
) -> Any:
    """Train the ``kind`` (tfidf) bot once per (files, sizes, mtimes, max year, model version);
    later runs load it. ``bar`` (optional) wraps the training's long loop (``progress.wrapper``);
    ``extra``: more question files (``buzzer.bots.tfidf.file_records``)."""
    from buzzer.bots.tfidf import REFERENCE_VERSION, TfidfGuesser, file_records

    for path in (train, *extra):
        if not path.exists():
            raise CommandError(f"{path}: no such file")
    stat = train.stat()
    key = hashlib.sha256(
        f"{train.resolve()}:{stat.st_size}:{stat.st_mtime_ns}:{max_year}:{REFERENCE_VERSION}".encode()
        + b"".join(f":{p.resolve()}:{p.stat().st_size}:{p.stat().st_mtime_ns}".encode() for p in extra)
    ).hexdigest()
    cache = Path(settings.BOT_CACHE_DIR) / f"{kind}-{key[:16]}.joblib"
    try:
        if cache.exists():
            try:
                return TfidfGuesser.load(cache)
            except (AttributeError, ImportError, ValueError, KeyError) as exc:
                # A model saved by an older version of the code: train afresh.
                say(f"cannot load {cache} ({exc}); retraining")
        say(f"training the {kind} bot on {train} (max year {max_year})…")
        more = {"extra": [r for p in extra for r in file_records(p, max_year=max_year)]} if extra else {}
        guesser = TfidfGuesser.from_packets(train, max_year=max_year, progress=bar, **more)
    except FormatError as exc:
        raise CommandError(str(exc)) from exc
    cache.parent.mkdir(parents=True, exist_ok=True)
    guesser.save(cache)
    return guesser


def _spearman(a: list[float], b: list[float]) -> float | None:
    if len(a) < 3:
        return None
    from scipy.stats import spearmanr

    return float(spearmanr(a, b).statistic)
