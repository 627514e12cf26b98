"""Play a whole tournament headlessly on real packets: a real ASGI server (Redis channel layer) and
Celery worker; per team simulated humans (``tools.simulation``) and an AI player (the TF-IDF bot) as
real websocket clients; the games of a round in parallel rooms, one moderator client per game.

The server advances the tournament itself when a game ends (``competition.tournaments``); this
command only joins the games it finds waiting in the lobby. At the end it exports the tournament as
one QBJ file, reads it back, recomputes the standings from it and checks they equal the live ones,
waits for the tournament's IRT fit and prints the standings and the wall time."""

from __future__ import annotations

import asyncio
import json
import random
import time
from pathlib import Path
from typing import Any

from asgiref.sync import sync_to_async
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from buzzer.bots.answers import main_answer
from buzzer.bots.tfidf import RECOMMENDED_MIN_TOKENS, RECOMMENDED_THRESHOLD
from competition import services, tournaments
from competition import standings as st
from competition.importers import QuestionFileError, import_file
from competition.management import progress
from competition.management.errors import command_error
from competition.models import Bonus, Match, QuestionSet, Tossup, Tournament, TournamentGame
from competition.vocabulary import SeatKind
from formats import qbj as qbjfmt
from irt.models import Fit
from tools import launcher
from tools.management.commands.simulate_match import _cached_guesser, _packet_order, start_stack
from tools.simulation import HUMANS, SimPlayer, moderate, unattended_config

#: What a game's entry carries for the clients only (tokens, answers), left out of the report.
SECRET = ("moderator_token", "seats", "answers", "bonus_answers")


class Command(BaseCommand):
    help = "Simulate a tournament end to end (parallel rooms) and check its standings against its QBJ export."

    def add_arguments(self, parser):
        parser.add_argument("--packets", required=True, help="qbreader packet file (JSONL[.gz])")
        parser.add_argument("--set", dest="set_name", required=True, help="the question set to play")
        parser.add_argument("--teams", type=int, default=6)
        parser.add_argument("--humans-per-team", type=int, default=2)
        parser.add_argument(
            "--bot", choices=["tfidf", "none"], default="tfidf", help="one AI player per team"
        )
        parser.add_argument("--bot-train", help="packet file the bot trains on (default: --packets)")
        parser.add_argument("--bot-train-max-year", type=int)
        parser.add_argument("--round-robin", choices=["single", "double"], default="single")
        parser.add_argument("--groups", type=int, default=1)
        parser.add_argument("--qualifier", type=int, default=0)
        parser.add_argument("--playoff", type=int, default=4, choices=[0, 2, 4, 8])
        parser.add_argument(
            "--tossups", type=int, default=None, help="tossups per game (default: whole packets)"
        )
        parser.add_argument("--preset", default="naqt")
        parser.add_argument("--wpm", type=float, default=1500.0)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--report", default="tournament.json")
        parser.add_argument("--qbj", default="tournament.qbj", help="where to write the QBJ export")
        parser.add_argument("--server", help="use this running server instead of starting one")
        parser.add_argument("--timeout", type=float, default=3600.0)
        progress.add_progress_flag(parser)

    def handle(self, *args: Any, **opts: Any) -> None:
        started = time.time()
        call_command("migrate", verbosity=0)
        packet_ids = self._packets(opts)
        guesser = None
        if opts["bot"] != "none":
            train = Path(opts["bot_train"] or opts["packets"])
            bar = progress.wrapper(opts, desc="training tfidf", unit="tossup")
            guesser = _cached_guesser("tfidf", train, opts["bot_train_max_year"], self.stdout.write, bar)
        rng = random.Random(opts["seed"])
        teams = []
        for t in range(opts["teams"]):
            players: list[dict[str, Any]] = [
                {"name": f"s{opts['seed']} T{t + 1} human {p + 1}", "kind": "human"}
                for p in range(opts["humans_per_team"])
            ]
            if guesser is not None:
                players.append(
                    {"name": f"s{opts['seed']} T{t + 1} bot", "kind": "bot", "weight_class": "light"}
                )
            teams.append({"name": f"s{opts['seed']} Team {t + 1}", "players": players})
        config = unattended_config(opts["wpm"])
        fmt = {
            "round_robin": opts["round_robin"],
            "groups": opts["groups"],
            "qualifier": opts["qualifier"],
            "playoff": opts["playoff"],
        }
        try:
            tournament = tournaments.create_tournament(
                name=f"Simulated tournament seed {opts['seed']} ({time.strftime('%Y-%m-%d %H:%M:%S')})",
                teams=teams,
                packet_ids=packet_ids,
                fmt=fmt,
                preset=opts["preset"],
                config=config,
                tossups_per_game=opts["tossups"],
            )
        except services.ServiceError as exc:
            raise command_error(exc) from exc
        skills = {
            s.name: HUMANS.skill(rng)
            for t in tournament.teams.all()
            for s in t.seats.filter(kind=SeatKind.HUMAN).order_by("id")
        }
        procs: list[Any] = []
        try:
            base = opts["server"] or start_stack(procs)
            ws = base.replace("http://", "ws://").replace("https://", "wss://").rstrip("/")
            played = asyncio.run(self._play(tournament, ws, skills, guesser, opts))
            fit = self._wait_for_fit(tournament, opts["timeout"])
        finally:
            launcher.stop(*reversed(procs))
        wall = time.time() - started
        live = tournaments.standings(tournament, tournaments.results(tournament))  # as played
        Path(opts["qbj"]).write_text(json.dumps(tournaments.qbj_document(tournament), indent=1))
        from_file = st.compute(
            tournaments.results_from_qbj(qbjfmt.read_qbj(opts["qbj"])),
            power_above=tournaments.power_above(tournament),
        )
        same = _rows(live) == _rows(from_file)
        report = {
            "tournament": {"id": tournament.id, "name": tournament.name, "format": tournament.format},
            "wall_time_s": round(wall, 1),
            "games": played,
            "champion": tournaments.champion(tournament),
            "standings": _rows(live),
            "standings_from_qbj": _rows(from_file),
            "standings_equal_qbj": same,
            "qbj": str(opts["qbj"]),
            "fit": {
                "id": fit.id,
                "scope": fit.dataset,
                "n_responses": fit.n_responses,
                "summary": fit.summary,
            },
        }
        Path(opts["report"]).write_text(json.dumps(report, indent=2, default=str))
        self.stdout.write(st.table_text(live))
        self.stdout.write(
            f"\n{len(played)} games in {wall:.1f}s; champion {report['champion']}; "
            f"standings {'equal' if same else 'DIFFER from'} those recomputed from {opts['qbj']}; "
            f"IRT fit {fit.dataset} on {fit.n_responses} responses"
        )
        self.stdout.write(f"report written to {opts['report']}")
        if not same:
            raise CommandError("the live standings differ from those recomputed from the QBJ export")

    def _packets(self, opts: dict[str, Any]) -> list[int]:
        path = Path(opts["packets"])
        if not path.exists():
            raise CommandError(f"{path}: no such file")
        try:
            import_file(path, fmt="qbreader", sets=[opts["set_name"]], skip_invalid=True)
        except QuestionFileError as exc:
            raise command_error(exc) from exc
        qset = QuestionSet.objects.filter(name=opts["set_name"]).first()
        if qset is None:
            raise CommandError(f"no question set named {opts['set_name']!r} in {path}")
        packets = [p for p in sorted(qset.packets.all(), key=_packet_order) if p.tossups.exists()]
        if not packets:
            raise CommandError(f"set {opts['set_name']!r} has no tossups")
        return [p.id for p in packets]

    async def _play(self, tournament: Tournament, ws: str, skills, guesser, opts) -> list[dict[str, Any]]:
        """Play round after round: every game of the lowest round not yet played, in parallel, until
        the server has created no further game (the tournament is complete)."""
        played: list[dict[str, Any]] = []
        deadline = time.time() + opts["timeout"]
        while True:
            waiting = await sync_to_async(self._waiting)(tournament)
            if not waiting:
                if await sync_to_async(tournaments.complete)(tournament):
                    return played
                if time.time() > deadline:
                    raise CommandError("timed out waiting for the server to schedule the next games")
                await asyncio.sleep(0.2)  # the server advances the tournament just after a game ends
                continue
            round_no = min(g["round"] for g in waiting)
            games = [g for g in waiting if g["round"] == round_no]
            t0 = time.time()
            await asyncio.gather(*(self._game(g, ws, skills, guesser, opts) for g in games))
            for g in games:
                g["seconds"] = round(time.time() - t0, 1)
            done = await sync_to_async(self._scores)([g["match_id"] for g in games])
            for g in games:
                g["score"] = done[g["match_id"]]
                played.append({k: v for k, v in g.items() if k not in SECRET})
                self.stdout.write(f"round {g['round']} {g['room']}: {g['phase']} {g['score']}")

    def _waiting(self, tournament: Tournament) -> list[dict[str, Any]]:
        """Games whose match is still in the lobby, with what the clients need."""
        out = []
        for g in TournamentGame.objects.filter(
            tournament=tournament, match__status=Match.Status.LOBBY
        ).select_related("match", "home", "away"):
            m = g.match
            tossups = Tossup.objects.filter(id__in=m.tossup_ids)
            bonuses = Bonus.objects.filter(id__in=m.bonus_ids)
            out.append(
                {
                    "phase": g.phase,
                    "round": g.round,
                    "room": g.room,
                    "home": g.home.name,
                    "away": g.away.name,
                    "match_id": m.id,
                    "join_code": m.join_code,
                    "moderator_token": m.moderator_token,
                    "seats": list(m.players.values("name", "kind", "token", "team_id")),
                    "answers": {t.id: main_answer(t.answer_line) for t in tossups},
                    "bonus_answers": {
                        (b.id, k): main_answer(part["answer_line"])
                        for b in bonuses
                        for k, part in enumerate(b.parts)
                    },
                }
            )
        return out

    def _scores(self, match_ids: list[int]) -> dict[int, dict[str, int]]:
        out = {}
        for m in Match.objects.filter(id__in=match_ids).prefetch_related("teams"):
            names = {str(t.id): t.name for t in m.teams.all()}
            out[m.id] = {names[k]: v for k, v in m.state["scores"].items()}
        return out

    async def _game(self, g: dict[str, Any], ws: str, skills, guesser, opts) -> None:
        from buzzer.bots.adapter import run_bot

        url = f"{ws}/ws/match/{g['join_code']}"
        tasks = []
        by_team: dict[int, list[dict[str, Any]]] = {}
        for seat in g["seats"]:
            by_team.setdefault(seat["team_id"], []).append(seat)
        for members in by_team.values():
            humans = [s for s in members if s["kind"] == SeatKind.HUMAN]
            team_skill = max(skills[s["name"]] for s in humans) if humans else 0.0
            for i, seat in enumerate(humans):
                sim = SimPlayer(
                    url=f"{url}/play/?token={seat['token']}",
                    name=seat["name"],
                    true_skill=skills[seat["name"]],
                    seed=opts["seed"],
                    answers=g["answers"],
                    bonus_answers=g["bonus_answers"],
                    team_skill=team_skill,
                    captain=i == 0,
                )
                tasks.append(asyncio.create_task(sim.run(), name=seat["name"]))
            for seat in members:
                if seat["kind"] == SeatKind.BOT and guesser is not None:
                    bot = run_bot(
                        f"{url}/play/?token={seat['token']}",
                        guesser,
                        threshold=RECOMMENDED_THRESHOLD,
                        min_tokens=RECOMMENDED_MIN_TOKENS,
                    )
                    tasks.append(asyncio.create_task(bot, name=seat["name"]))
        await asyncio.sleep(0.5)  # let every client receive its snapshot before the start
        try:
            await moderate(f"{url}/moderate/?token={g['moderator_token']}", timeout=opts["timeout"])
            _, pending = await asyncio.wait(tasks, timeout=30)
            if pending:
                self.stderr.write(
                    f"clients still connected 30 s after the end: {[t.get_name() for t in pending]}"
                )
            for t in tasks:
                if t.done() and not t.cancelled() and (error := t.exception()) is not None:
                    raise error
        finally:
            for t in tasks:
                t.cancel()

    def _wait_for_fit(self, tournament: Tournament, timeout: float) -> Fit:
        scope = f"tournament:{tournament.id}"
        end = time.time() + timeout
        while time.time() < end:
            fit = Fit.objects.filter(dataset=scope).order_by("-created_at").first()
            if fit is not None and fit.status == Fit.Status.DONE:
                return fit
            if fit is not None and fit.status == Fit.Status.FAILED:
                raise CommandError(f"IRT fit {scope} failed: {fit.error}")
            time.sleep(0.5)
        raise CommandError(f"no IRT fit {scope} after {timeout:.0f}s (is the Celery worker running?)")


def _rows(s: st.Standings) -> dict[str, list[dict[str, object]]]:
    return {"teams": [t.row() for t in s.teams], "players": [p.row() for p in s.players]}
