"""A tournament's YellowFruit-style statistics as text, its exports for YellowFruit and SQBS, and
its public feed setting.

``manage.py tournament_stats ID`` prints the team and individual tables (every ended game);
``--yft FILE`` / ``--sqbs FILE`` write the ``.yft`` / ``.sqbs`` file; ``--feed KEY=on|off``
(repeatable; KEY one of player_names, live_scores, individual_stats) changes what spectators see."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from competition import spectators, tournament_stats
from competition.models import Tournament
from scoring import stats


def table(s: stats.Stats) -> str:
    """The team and individual tables as fixed-width text ("—": unknown)."""
    r = s.rules
    lines = [
        f"{'Rk':>4} {'Team':<24} {'W-L-T':>7} {'Pct':>5} {'TUH':>4} {'P':>3} {'10':>3} {'N':>3} {'PPB':>6} {'PPTUH':>6} {'P/20':>6}"
    ]
    for t in s.teams:
        powers, tens, negs = stats.split(t.answers, r)
        lines.append(
            f"{t.rank:>4} {t.team[:24]:<24} {f'{t.wins}-{t.losses}-{t.ties}':>7} {stats.fmt(t.win_pct, 3):>5} "
            f"{t.tossups_heard:>4} {powers:>3} {tens:>3} {negs:>3} {stats.fmt(t.ppb, 2):>6} "
            f"{stats.fmt(t.pptuh, 2):>6} {stats.fmt(t.p20tuh, 2):>6}"
        )
    lines += [
        "",
        f"{'Rk':>4} {'Player':<24} {'Team':<20} {'GP':>5} {'TUH':>4} {'P':>3} {'10':>3} {'N':>3} {'Pts':>5} {'P/20':>6}",
    ]
    for p in s.players:
        powers, tens, negs = stats.split(p.answers, r)
        lines.append(
            f"{p.rank:>4} {p.player[:24]:<24} {p.team[:20]:<20} {stats.fmt(p.games_played, 2):>5} {p.tossups_heard:>4} "
            f"{powers:>3} {tens:>3} {negs:>3} {p.points:>5} {stats.fmt(p.p20tuh, 2):>6}"
        )
    return "\n".join(lines)


class Command(BaseCommand):
    help = "Print a tournament's statistics; write its .yft/.sqbs exports; set its public feed."

    def add_arguments(self, parser):
        parser.add_argument("tournament", type=int, help="the tournament's id")
        parser.add_argument("--yft", help="write the YellowFruit (.yft) file here")
        parser.add_argument("--sqbs", help="write the SQBS (.sqbs) file here")
        parser.add_argument("--feed", action="append", default=[], help="KEY=on|off: what spectators see")

    def handle(self, *args: Any, **opts: Any) -> None:
        t = Tournament.objects.filter(pk=opts["tournament"]).first()
        if t is None:
            raise CommandError(f"no tournament {opts['tournament']}")
        if opts["feed"]:
            feed = spectators.setting(t.public_feed)
            for item in opts["feed"]:
                key, _, value = item.partition("=")
                if key not in spectators.FEED_SETTINGS or value not in ("on", "off"):
                    raise CommandError(
                        f"--feed {item!r}: expected one of {', '.join(spectators.FEED_SETTINGS)}=on|off"
                    )
                feed[key] = value == "on"
            t.public_feed = feed
            t.save(update_fields=["public_feed"])
            self.stdout.write(
                "public feed: " + ", ".join(f"{k} {'on' if v else 'off'}" for k, v in feed.items())
            )
        self.stdout.write(table(tournament_stats.tournament_stats(t)))
        if opts["yft"]:
            Path(opts["yft"]).write_text(json.dumps(tournament_stats.yft_document(t), ensure_ascii=False))
            self.stdout.write(f"wrote {opts['yft']}")
        if opts["sqbs"]:
            Path(opts["sqbs"]).write_text(tournament_stats.sqbs_text(t))
            self.stdout.write(f"wrote {opts['sqbs']}")
