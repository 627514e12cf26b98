"""Read-side queries over a stored :class:`irt.models.Fit`: leaderboards of subjects by skill,
of writers and packets by ADVSCORE, and an event's ADVSCORE_D with μ_D, κ_D, δ_D.

Aggregates read the expert flags as they are now (a flag raised after the fit counts at once), and
leave flagged tossups out unless ``include_flagged``; items that are not tossups (imported sets)
are never flagged. Sung et al. 2025, ADVSCORE.md §3.

Also what the bot leaderboard reads of live matches (:func:`live_bot_tossups`: each bot's buzzes
against the room's humans) and what a fit's scope covers (:func:`scope_coverage`).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from competition import selectors as competition_selectors
from competition.game import EventName
from competition.models import Buzz, Match, MatchEvent, Tournament
from competition.vocabulary import UNCOUNTED_RULINGS, BuzzMode, Ruling, SeatKind, TossupOutcome
from irt.advscore import dataset_means
from irt.botmetrics import LiveTossup
from irt.models import Fit, ItemScore, SubjectSkill
from irt.pipeline import flagged_tossups, identity_key, scope_responses

Z95 = 1.96  # two-sided 95 % normal quantile for skill intervals


def _finite(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else x


def unended_match_tossups() -> set[int]:
    """Ids of the tossups scheduled in any match that has not ended (lobby or running).

    Their answer lines (and text) stay hidden from everyone but a logged-in organiser or analyst
    until every such match ends: a player of that match could otherwise read them elsewhere."""
    ids: set[int] = set()
    for scheduled in Match.objects.exclude(status=Match.Status.ENDED).values_list("tossup_ids", flat=True):
        ids.update(int(i) for i in scheduled or [])
    return ids


IDENTITY_KEY = re.compile(r"^(?:human|team|bot):#(\d+)$")


def subject_labels(subjects: Iterable[str]) -> dict[str, str]:
    """What pages show for each subject key: a live identity (``human:#12``) its current handle
    (``#12 (merged away or deleted: refit)`` when the identity is gone), an imported subject
    (``human:ann``) its name."""
    subjects = list(subjects)
    ids = {s: int(m.group(1)) for s in subjects if (m := IDENTITY_KEY.match(s))}
    handles = competition_selectors.identity_handles(ids.values())
    labels = {}
    for s in subjects:
        if s not in ids:
            labels[s] = s.split(":", 1)[-1]
        else:
            labels[s] = handles.get(ids[s], f"#{ids[s]} (merged away or deleted: refit)")
    return labels


def subject_leaderboard(fit: Fit, kind: str | None = None) -> list[dict[str, Any]]:
    """Subjects (optionally one ``kind``: human | team | bot) by skill β, best first:
    ``{rank, subject, name (its label: :func:`subject_labels`), kind, skill, se, lo, hi, n_responses}`` with the 95 % interval
    [β − 1.96·SE, β + 1.96·SE] in logits (None where the SE is unknown)."""
    rows = SubjectSkill.objects.filter(fit=fit).order_by("-skill", "subject")
    if kind:
        rows = rows.filter(kind=kind)
    rows = list(rows)
    labels = subject_labels(s.subject for s in rows)
    out = []
    for rank, s in enumerate(rows, start=1):
        se = _finite(s.skill_se)
        out.append(
            {
                "rank": rank,
                "subject": s.subject,
                "name": labels[s.subject],
                "kind": s.kind,
                "skill": s.skill,
                "se": se,
                "lo": None if se is None else s.skill - Z95 * se,
                "hi": None if se is None else s.skill + Z95 * se,
                "n_responses": s.n_responses,
            }
        )
    return out


def _items(fit: Fit) -> list[ItemScore]:
    return list(ItemScore.objects.filter(fit=fit).select_related("tossup__packet__question_set"))


def _means(items: list[ItemScore]) -> dict[str, float | None]:
    means = dataset_means(
        *(np.array([_nan(getattr(i, k)) for i in items]) for k in ("mu", "kappa", "delta", "advscore"))
    )
    return {k: _finite(v) for k, v in means.items()}


def _nan(x: float | None) -> float:
    return math.nan if x is None else x


def event_summary(fit: Fit, include_flagged: bool = False) -> dict[str, Any]:
    """The fit's dataset (event) aggregates μ_D, κ_D, δ_D and ADVSCORE_D (None where undefined)
    over its items, flagged tossups left out unless ``include_flagged``; plus ``n_items``,
    ``n_flagged`` and ``include_flagged``. All values None when every item is excluded."""
    items = _items(fit)
    flagged = flagged_tossups([i.tossup_id for i in items if i.tossup_id])
    chosen = [i for i in items if include_flagged or i.tossup_id not in flagged]
    means = _means(chosen) if chosen else dict.fromkeys(("mu", "kappa", "delta", "advscore"))
    return {
        **means,
        "n_items": len(chosen),
        "n_flagged": len(flagged),
        "include_flagged": include_flagged,
    }


def group_leaderboard(fit: Fit, by: str, include_flagged: bool = False) -> list[dict[str, Any]]:
    """Writers (``by="writer"``, Tossup.writer) or packets (``by="packet"``) by the mean ADVSCORE
    of their tossups in the fit, most adversarial first: ``{name, n_items, n_flagged, mu, kappa,
    delta, advscore}``. Flagged tossups are left out of the means unless ``include_flagged`` (a
    group whose tossups are all flagged then has None). Raises ValueError for another ``by``."""
    if by not in ("writer", "packet"):
        raise ValueError(f"group by 'writer' or 'packet', not {by!r}")
    items = [i for i in _items(fit) if i.tossup is not None]
    flagged = flagged_tossups([i.tossup_id for i in items])
    groups: dict[str, list[ItemScore]] = defaultdict(list)
    for i in items:
        key = (i.tossup.writer or "(unknown)") if by == "writer" else str(i.tossup.packet)
        groups[key].append(i)
    out = []
    for name, members in groups.items():
        chosen = [i for i in members if include_flagged or i.tossup_id not in flagged]
        means = _means(chosen) if chosen else dict.fromkeys(("mu", "kappa", "delta", "advscore"))
        out.append(
            {
                "name": name,
                "n_items": len(members),
                "n_flagged": sum(i.tossup_id in flagged for i in members),
                **means,
            }
        )
    return sorted(out, key=lambda g: (g["advscore"] is None, -(g["advscore"] or 0.0), g["name"]))


# --- live bots: the buzz log as irt.botmetrics.evaluate_live reads it ---------------------------


@dataclass
class LiveBot:
    """A bot identity's live record: ``subject`` its key (``bot:#<competitor id>``), ``tossups``
    the tossups it heard, ``matches`` ``(id, name, join code)`` of the ended matches it played."""

    subject: str
    tossups: list[LiveTossup] = field(default_factory=list)
    matches: list[tuple[int, str, str]] = field(default_factory=list)


def live_bot_tossups() -> list[LiveBot]:
    """Every bot that played an ended live match, with each tossup it heard there (oldest match
    first), read from the buzz log (``Buzz`` rows hold the ruling that stands).

    A tossup is heard when it was read to its end (``tossup_ended``, outcome not skipped; a replayed
    tossup counts once, as it was read last; one thrown out for a spare not at all) after the bot
    took its seat. The bot's buzz is its
    earliest ruled buzz there (undone and unruled ones are no buzz); the humans are the human seats
    of the other teams that played the match (a teammate is no opponent), each with the token of its
    correct buzz on the tossup, or None. A muted bot seat is left out: its would-be buzzes are
    logged (``muted_buzz``) but never ruled, so it would read as a bot that never buzzed."""
    bots: dict[str, LiveBot] = {}
    ended = (
        Match.objects.filter(status=Match.Status.ENDED, players__kind=SeatKind.BOT).distinct().order_by("id")
    )
    for match in ended:
        play = competition_selectors.match_play(match.id)
        started: dict[int, tuple[int, int]] = {}  # tossup → (seq, token count) of its latest start
        heard: dict[int, tuple[int, int]] = {}
        joined: dict[int, int] = {}  # seat → seq of its player_joined (a seat added later)
        events = MatchEvent.objects.filter(
            match=match, event__in=(EventName.TOSSUP_STARTED, EventName.TOSSUP_ENDED, EventName.PLAYER_JOINED)
        ).order_by("seq")
        for seq, event, payload in events.values_list("seq", "event", "payload"):
            if event == EventName.PLAYER_JOINED:
                joined[payload["player_id"]] = seq
            elif event == EventName.TOSSUP_STARTED:
                started[payload["question_id"]] = (seq, payload["token_count"])
            elif payload["question_id"] in started:
                qid = payload["question_id"]
                if payload.get("outcome") == TossupOutcome.SKIPPED:
                    heard.pop(qid, None)
                else:
                    heard[qid] = started[qid]
        counted = set(play.played_tossup_ids)  # a tossup thrown out for a spare was not heard
        heard = {qid: at for qid, at in heard.items() if qid in counted}
        buzzes: dict[tuple[int, int], tuple[int, bool]] = {}  # (tossup, seat) → earliest (token, correct)
        rows = Buzz.objects.filter(match=match).exclude(ruling__in=UNCOUNTED_RULINGS)
        for tossup_id, player_id, token, seq, ruling in rows.order_by("token_index", "seq").values_list(
            "tossup_id", "player_id", "token_index", "seq", "ruling"
        ):
            if tossup_id in heard and seq > heard[tossup_id][0]:
                buzzes.setdefault((tossup_id, player_id), (token, ruling == Ruling.CORRECT))
        seats = [s for s in play.seats if s.played]
        muted = set(match.players.filter(buzz_mode=BuzzMode.MUTED).values_list("id", flat=True))
        for bot in (s for s in seats if s.kind == SeatKind.BOT and s.player_id not in muted):
            key = identity_key("bot", bot.competitor_id, bot.player_id)
            record = bots.setdefault(key, LiveBot(key))
            humans = [s for s in seats if s.kind == SeatKind.HUMAN and s.team_id != bot.team_id]
            n = 0
            for tossup_id, (start, tokens) in heard.items():
                if start < joined.get(bot.player_id, 0):
                    continue  # read before the bot was seated
                # (token, ruled correct) per human, None for one who never buzzed: a neg counts
                # among the human buzzes, as QANTA's h does.
                human_buzzes = [buzzes.get((tossup_id, h.player_id)) for h in humans]
                record.tossups.append(
                    LiveTossup(
                        tossup=str(tossup_id),
                        match=match.join_code,
                        token_count=tokens,
                        bot_buzz=buzzes.get((tossup_id, bot.player_id)),
                        humans=tuple(human_buzzes),
                    )
                )
                n += 1
            if n:
                record.matches.append((match.id, match.name, match.join_code))
    return [b for b in bots.values() if b.tossups]


# --- what a fit's scope covers ------------------------------------------------------------------


def scope_coverage(scope: str) -> dict[str, Any]:
    """What the responses of a fit scope come from now: ``matches`` ``[(id, name, join code)]``
    of the live matches with stored responses in it, ``sources`` the imported files (an imported
    set), ``tournament`` its name (``tournament:<id>``), ``n_responses``."""
    rows = scope_responses(scope)
    match_ids = sorted(set(rows.exclude(match_id=None).values_list("match_id", flat=True)))
    names = {m.id: (m.name, m.join_code) for m in Match.objects.filter(id__in=match_ids)}
    sources = sorted(set(rows.filter(match_id=None).values_list("source", flat=True)))
    tournament = None
    if scope.startswith("tournament:") and scope.split(":", 1)[1].isdigit():
        tournament = (
            Tournament.objects.filter(pk=int(scope.split(":", 1)[1])).values_list("name", flat=True).first()
        )
    return {
        "matches": [(i, *names.get(i, (f"match {i} (deleted)", ""))) for i in match_ids],
        "sources": [s.split(":", 1)[-1] for s in sources],
        "tournament": tournament,
        "n_responses": rows.count(),
    }


def same_response_fits(fits: Iterable[Fit]) -> dict[int, list[Fit]]:
    """For each of ``fits``, the other finished fits of the very same responses and flags (the
    same snapshot hash: e.g. ``match:1`` and ``live`` while one match has been played), oldest first."""
    fits = list(fits)
    hashes = {f.snapshot_hash for f in fits}
    twins: dict[str, list[Fit]] = defaultdict(list)
    for f in Fit.objects.filter(snapshot_hash__in=hashes, status=Fit.Status.DONE).order_by(
        "created_at", "id"
    ):
        twins[f.snapshot_hash].append(f)
    return {f.id: [t for t in twins[f.snapshot_hash] if t.id != f.id] for f in fits}


def latest_live_fit() -> Fit | None:
    """The most recent finished fit of the live event's responses (dataset ``live``), or None."""
    return Fit.objects.filter(dataset="live", status=Fit.Status.DONE).order_by("-created_at").first()
