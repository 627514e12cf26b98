"""Read models for the analyst pages: leaderboard, per-question ADVSCORE table, plot data and
exports of a :class:`irt.models.Fit` (Sung et al. 2025; docs in ADVSCORE.md)."""

from __future__ import annotations

import csv
import io
import math
from collections import defaultdict
from typing import Any

import numpy as np
from django.db.models import Avg, Count, ExpressionWrapper, F, FloatField

from competition.models import Buzz, Flag
from irt.models import Fit, ItemScore, Response, SubjectSkill

LIVE_DATASET = "live"
IIF_GRID = np.linspace(-5.0, 5.0, 101)  # skill axis t in logits, the ADVSCORE.md integration range
MAX_CURVES = 40


def latest_live_fit() -> Fit | None:
    """The most recent finished fit of the live event's responses, or None."""
    return Fit.objects.filter(dataset=LIVE_DATASET, status=Fit.Status.DONE).order_by("-created_at").first()


def _finite(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else x


def item_information(gamma: float, theta: float, t: np.ndarray = IIF_GRID) -> np.ndarray:
    """IIF_j(t) = γ² p (1 − p) with p = σ(γ (t − θ)) (ADVSCORE.md §3, Eq. 6–7).

    gamma: discriminability γ_j > 0; theta: difficulty θ_j (logits); t: skill grid (logits).
    Returns an array shaped like ``t``."""
    p = 1.0 / (1.0 + np.exp(-gamma * (t - theta)))
    return gamma**2 * p * (1.0 - p)


def leaderboard(fit: Fit) -> list[dict[str, Any]]:
    """Subjects by skill β (logits), with the 95 % interval β ± 1.96·SE when SE is known."""
    rows = []
    for s in SubjectSkill.objects.filter(fit=fit).order_by("-skill"):
        se = _finite(s.skill_se)
        rows.append(
            {
                "subject": s.subject,
                "kind": s.kind,
                "skill": s.skill,
                "ci": None if se is None else 1.96 * se,
                "n_responses": s.n_responses,
            }
        )
    return rows


def _buzz_positions() -> dict[tuple[int, str], dict[str, float]]:
    """Mean 0-based buzz token index and mean fraction of the tossup read, per (tossup, kind)."""
    read = ExpressionWrapper((F("token_index") + 1.0) / F("token_count"), output_field=FloatField())
    out: dict[tuple[int, str], dict[str, float]] = {}
    rows = Buzz.objects.values("tossup_id", "kind").annotate(
        mean_index=Avg("token_index"), mean_read=Avg(read), n=Count("id")
    )
    for r in rows:
        out[(r["tossup_id"], r["kind"])] = {"index": r["mean_index"], "read": r["mean_read"], "n": r["n"]}
    return out


def item_rows(fit: Fit) -> list[dict[str, Any]]:
    """One row per item: tossup number/answer, μ, δ, κ, ADVSCORE, θ, γ, flag count and the mean
    human vs bot buzz position (``None`` where there is nothing to show)."""
    items = list(ItemScore.objects.filter(fit=fit).select_related("tossup", "tossup__packet"))
    tossup_ids = [i.tossup_id for i in items if i.tossup_id is not None]
    flags = dict(
        Flag.objects.filter(tossup_id__in=tossup_ids)
        .values("tossup_id")
        .annotate(n=Count("id"))
        .values_list("tossup_id", "n")
    )
    positions = _buzz_positions() if tossup_ids else {}
    rows = []
    for i in items:
        t = i.tossup
        rows.append(
            {
                "item": i.item,
                "tossup_id": i.tossup_id,
                "number": t.number if t else None,
                "packet": str(t.packet) if t else "",
                "answer": t.answer_line if t else "",
                "mu": _finite(i.mu),
                "delta": _finite(i.delta),
                "kappa": _finite(i.kappa),
                "advscore": _finite(i.advscore),
                "difficulty": i.difficulty,
                "discriminability": i.discriminability,
                "flags": flags.get(i.tossup_id, 0),
                "human_buzz": positions.get((i.tossup_id, "human")),
                "bot_buzz": positions.get((i.tossup_id, "bot")),
                "n_responses": i.n_responses,
            }
        )
    return rows


def plot_data(fit: Fit, skills: list[dict[str, Any]], items: list[dict[str, Any]]) -> dict[str, Any]:
    """JSON for the two plotly charts: skills grouped by kind, and IIF curves of up to
    ``MAX_CURVES`` items (the most discriminating ones) on the grid ``IIF_GRID``."""
    by_kind: dict[str, dict[str, list[Any]]] = defaultdict(lambda: {"skill": [], "ci": [], "subject": []})
    for s in skills:
        group = by_kind[s["kind"]]
        group["skill"].append(s["skill"])
        group["ci"].append(s["ci"])
        group["subject"].append(s["subject"])
    curves = []
    for row in sorted(items, key=lambda r: -r["discriminability"])[:MAX_CURVES]:
        label = f"#{row['number']}" if row["number"] is not None else row["item"]
        curves.append(
            {
                "label": label,
                "y": np.round(item_information(row["discriminability"], row["difficulty"]), 5).tolist(),
            }
        )
    return {"skills": dict(by_kind), "grid": IIF_GRID.round(3).tolist(), "curves": curves}


def fit_context(fit: Fit) -> dict[str, Any]:
    """Everything the analysis template needs for one fit."""
    skills = leaderboard(fit)
    items = item_rows(fit)
    summary = fit.summary or {}
    return {
        "fit": fit,
        "summary": {k: _finite(summary.get(k)) for k in ("mu", "delta", "kappa", "advscore")},
        "skills": skills,
        "items": items,
        "plots": plot_data(fit, skills, items),
    }


# --- exports ------------------------------------------------------------------------------

EXPORT_COLUMNS = [
    "subject",
    "subject_kind",
    "item",
    "tossup_id",
    "match_id",
    "source",
    "correct",
    "skill",
    "skill_se",
    "difficulty",
    "discriminability",
    "mu",
    "delta",
    "kappa",
    "advscore",
]


def _json_safe(obj: Any) -> Any:
    """NaN/±inf (e.g. δ_j with an empty H(1)) become None: strict JSON has no NaN."""
    if isinstance(obj, float):
        return _finite(obj)
    if isinstance(obj, dict):
        return {k: _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_json_safe(v) for v in obj]
    return obj


def export_json(fit: Fit) -> dict[str, Any]:
    """The fit (settings, summary), its fitted subject and item parameters and the dataset's
    responses: ``{"fit", "subjects", "items", "responses"}``; non-finite numbers become null."""
    return _json_safe(
        {
            "fit": {
                "id": fit.id,
                "dataset": fit.dataset,
                "status": fit.status,
                "settings": fit.settings,
                "seed": fit.seed,
                "snapshot_hash": fit.snapshot_hash,
                "summary": fit.summary,
                "n_responses": fit.n_responses,
                "n_subjects": fit.n_subjects,
                "n_items": fit.n_items,
                "created_at": fit.created_at.isoformat(),
            },
            "subjects": list(
                SubjectSkill.objects.filter(fit=fit).values(
                    "subject", "kind", "skill", "skill_se", "n_responses"
                )
            ),
            "items": list(
                ItemScore.objects.filter(fit=fit).values(
                    "item", "tossup_id", "difficulty", "discriminability", "mu", "delta", "kappa", "advscore"
                )
            ),
            "responses": list(
                Response.objects.filter(dataset=fit.dataset)
                .order_by("id")
                .values("subject", "subject_kind", "item", "tossup_id", "match_id", "source", "correct")
            ),
        }
    )


def export_csv(fit: Fit) -> str:
    """One row per response of the fit's dataset, joined with the subject's fitted skill and the
    item's fitted parameters (empty where the fit has none). Columns: ``EXPORT_COLUMNS``."""
    data = export_json(fit)
    skills = {s["subject"]: s for s in data["subjects"]}
    items = {i["item"]: i for i in data["items"]}
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=EXPORT_COLUMNS, extrasaction="ignore")
    writer.writeheader()
    for r in data["responses"]:
        s = skills.get(r["subject"], {})
        i = items.get(r["item"], {})
        writer.writerow(
            {
                **r,
                "correct": int(r["correct"]),
                "skill": s.get("skill"),
                "skill_se": s.get("skill_se"),
                **{
                    k: i.get(k)
                    for k in ("difficulty", "discriminability", "mu", "delta", "kappa", "advscore")
                },
            }
        )
    return buf.getvalue()
