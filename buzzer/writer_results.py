"""Back to the writer (issue 32, item 4): per workshop question that was put in a packet, the
workshop's predicted bot buzzes (at submission) beside the live bots' and humans' buzzes in ended
matches (the buzz log, ``competition.models.Buzz``), its ADVSCORE with μ, δ, κ from the latest live
fit (``irt.models.ItemScore``, as the analysis page reads it), the expert flags raised on it; and per
writer the distribution of their questions' ADVSCORE and their rank among the fit's writers
(``irt.selectors.group_leaderboard``, mean ADVSCORE, flagged tossups left out as there).

A value the fit has not given (no fit yet, the question not in it, or not finite) is None, shown as
"unknown", never as 0."""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from typing import Any

from competition import editorial
from competition.models import Buzz, Flag, Match, Submission
from competition.vocabulary import UNCOUNTED_RULINGS
from irt.models import Fit, ItemScore
from irt.selectors import group_leaderboard, latest_live_fit


def _finite(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else x


def _live_buzzes(tossup_ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    """Per tossup: its counted buzzes in ended matches, ``{match, seat, kind, token_index,
    token_count, guess, ruling}``, in the order they came."""
    rows = (
        Buzz.objects.filter(tossup_id__in=tossup_ids, match__status=Match.Status.ENDED)
        .exclude(ruling__in=[str(r) for r in UNCOUNTED_RULINGS])
        .select_related("player", "match")
        .order_by("match_id", "seq")
    )
    out: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for b in rows:
        out[b.tossup_id].append(
            {
                "match": b.match.name,
                "join_code": b.match.join_code,
                "seat": b.player.name,
                "kind": b.kind,
                "token_index": b.token_index,
                "token_count": b.token_count,
                "guess": b.guess,
                "ruling": b.ruling,
            }
        )
    return out


def _distribution(values: list[float]) -> dict[str, Any] | None:
    """``{n, min, median, max, values}`` of the ADVSCOREs known, or None when none is."""
    if not values:
        return None
    ordered = sorted(values)
    return {
        "n": len(ordered),
        "min": ordered[0],
        "median": statistics.median(ordered),
        "max": ordered[-1],
        "values": ordered,
    }


def results(writer_ids: list[int] | None) -> dict[str, Any]:
    """The results of the writers ``writer_ids`` (None: every writer), for ``writer_results.html``:

    ``{"fit": Fit | None, "writers": [{"name", "questions": [...], "advscore": distribution | None,
    "rank": int | None, "n_ranked": int, "mean_advscore": float | None, "flags": int}]}``, one question
    ``{"submission", "tossup", "predictions": [{"bot", "buzz_index", "answer", "correct"}],
    "buzzes": {"bot": [...], "human": [...]}, "mu", "delta", "kappa", "advscore", "flags": [Flag]}``
    per packeted submission (token and word indices 0-based; ``mu``…``advscore`` None when unknown)."""
    fit: Fit | None = latest_live_fit()
    submissions = Submission.objects.filter(tossup__isnull=False).select_related("writer", "tossup__packet")
    if writer_ids is not None:
        submissions = submissions.filter(writer_id__in=writer_ids)
    submissions = submissions.order_by("writer__username", "tossup__packet_id", "tossup__number")
    tossup_ids = [s.tossup_id for s in submissions]
    buzzes = _live_buzzes(tossup_ids)
    scores = (
        {i.tossup_id: i for i in ItemScore.objects.filter(fit=fit, tossup_id__in=tossup_ids)} if fit else {}
    )
    flags: dict[int, list[Flag]] = defaultdict(list)
    for flag in Flag.objects.filter(tossup_id__in=tossup_ids).order_by("created_at"):
        flags[flag.tossup_id].append(flag)
    board = [g for g in group_leaderboard(fit, "writer") if g["advscore"] is not None] if fit else []
    ranks = {g["name"]: (n, g["advscore"]) for n, g in enumerate(board, start=1)}

    writers: dict[str, dict[str, Any]] = {}
    for s in submissions:
        assert s.tossup is not None
        name = s.writer.get_username()
        entry = writers.setdefault(name, {"name": name, "questions": [], "flags": 0})
        item = scores.get(s.tossup_id)
        version = editorial.current_version(s)
        tossup_buzzes = buzzes.get(s.tossup_id, [])
        entry["questions"].append(
            {
                "submission": s,
                "tossup": s.tossup,
                "predictions": [{"bot": bot, **p} for bot, p in sorted(version.predictions.items())],
                "buzzes": {
                    "bot": [b for b in tossup_buzzes if b["kind"] == "bot"],
                    "human": [b for b in tossup_buzzes if b["kind"] != "bot"],
                },
                **{
                    k: _finite(getattr(item, k)) if item else None
                    for k in ("mu", "delta", "kappa", "advscore")
                },
                "flags": flags.get(s.tossup_id, []),
            }
        )
        entry["flags"] += len(flags.get(s.tossup_id, []))
    for name, entry in writers.items():
        entry["advscore"] = _distribution(
            [q["advscore"] for q in entry["questions"] if q["advscore"] is not None]
        )
        rank = ranks.get(name)
        entry["rank"], entry["mean_advscore"] = rank if rank else (None, None)
        entry["n_ranked"] = len(board)
    return {"fit": fit, "writers": list(writers.values())}
