"""Read models for the analyst pages: leaderboard, per-question ADVSCORE table, the paper's
Figure-2 plot data and per-subject pages of a :class:`irt.models.Fit` (Sung et al. 2025; docs in
ADVSCORE.md). Exports live in ``irt.exports``, aggregates in ``irt.selectors``.

Answer lines of tossups scheduled in a match that has not ended are left out (``answer`` "",
``answer_hidden`` True) unless the builder is called with ``reveal_answers=True``, which the views
pass only for a logged-in organiser or analyst.

Subjects are shown by their label (an identity's current handle: ``irt.selectors.subject_labels``);
every value a page shows as "—" comes with its reason (``reasons`` in the contexts)."""

from __future__ import annotations

import math
import time
from collections import defaultdict
from typing import Any

import numpy as np
from django.db.models import Count
from scipy.stats import gaussian_kde

from competition.models import Flag
from irt import selectors
from irt.advscore import advscore
from irt.models import Fit, ItemScore, SubjectSkill
from irt.pipeline import STALE_FIT_S, scope_responses

LIVE_DATASET = "live"
IIF_GRID = np.linspace(-5.0, 5.0, 101)  # skill axis t in logits, the ADVSCORE.md integration range
MAX_CURVES = 40
#: A fit below this many items, or with a skill standard error above WIDE_SE (logits), gets the
#: small-sample warning: its skills have wide intervals.
SMALL_SAMPLE_ITEMS = 30
WIDE_SE = 0.5


def _finite(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else x


def item_information(gamma: float, theta: float, t: np.ndarray = IIF_GRID) -> np.ndarray:
    """IIF_j(t) = γ² p (1 − p) with p = σ(γ (t − θ)) (ADVSCORE.md §3, Eq. 6–7).

    gamma: discriminability γ_j > 0; theta: difficulty θ_j (logits); t: skill grid (logits).
    Returns an array shaped like ``t``."""
    p = 1.0 / (1.0 + np.exp(-gamma * (t - theta)))
    return gamma**2 * p * (1.0 - p)


def leaderboard(fit: Fit) -> list[dict[str, Any]]:
    """Subjects by skill β (logits), with the 95 % interval β ± 1.96·SE when SE is known;
    ``label`` is what the page shows (an identity's current handle)."""
    skills = list(SubjectSkill.objects.filter(fit=fit).order_by("-skill"))
    labels = selectors.subject_labels(s.subject for s in skills)
    rows = []
    for s in skills:
        se = _finite(s.skill_se)
        rows.append(
            {
                "subject": s.subject,
                "label": labels[s.subject],
                "kind": s.kind,
                "skill": s.skill,
                "ci": None if se is None else 1.96 * se,
                "n_responses": s.n_responses,
            }
        )
    return rows


def reasons(fit: Fit) -> dict[str, str]:
    """Why a value of ``fit`` is shown as "—", by the value's name (the pages' hover text)."""
    summary = fit.summary or {}
    no_groups = summary.get("reason")
    delta = no_groups or summary.get("delta_reason") or "δ is undefined for this item"
    sens = summary.get("sensitivity") or {}
    return {
        "mu": no_groups or "μ is undefined for this item",
        "kappa": no_groups or "κ is undefined for this item",
        "delta": delta,
        "advscore": f"ADVSCORE needs δ: {delta}",
        "aggregate": no_groups
        or "no item left to average (every item is flagged, or undefined for every item)",
        "group": "every tossup of this group is flagged (tick “include flagged questions”), or the value is undefined for all of them",
        "sensitivity": sens.get("reason")
        or "ADVSCORE_D is undefined once this bot is left out (δ needs H(1))",
        "tau": sens.get("reason") or "fewer than two bots remain: no ranking to compare",
        "buzz": "no subject of this kind buzzed on this item in the fit's responses"
        if summary.get("buzz_positions")
        else "this fit predates stored buzz positions: refit to see them",
        "read": "the tossup's length is unknown (an imported item)",
        "difficulty": "the item is not in this fit",
        "position": "did not buzz",
    }


def _answer(tossup: Any, hidden: set[int]) -> tuple[str, bool]:
    """``(answer line or "", hidden?)`` of a tossup (None: an imported item without one)."""
    if tossup is None:
        return "", False
    if tossup.id in hidden:
        return "", True
    return tossup.answer_line, False


def _hidden(reveal_answers: bool) -> set[int]:
    return set() if reveal_answers else selectors.unended_match_tossups()


def item_rows(fit: Fit, reveal_answers: bool = False) -> list[dict[str, Any]]:
    """One row per item: tossup number/answer, μ, δ, κ, ADVSCORE, θ, γ, flag count and
    ``human_buzz``/``bot_buzz``, the humans' and bots' buzz positions in the fit's responses (:func:`_buzz`;
    ``None`` where there is nothing to show). ``answer`` is "" with
    ``answer_hidden`` True for a tossup of a match not yet ended, unless ``reveal_answers``."""
    items = list(ItemScore.objects.filter(fit=fit).select_related("tossup", "tossup__packet"))
    tossup_ids = [i.tossup_id for i in items if i.tossup_id is not None]
    hidden = _hidden(reveal_answers) if tossup_ids else set()
    flags = dict(
        Flag.objects.filter(tossup_id__in=tossup_ids)
        .values("tossup_id")
        .annotate(n=Count("id"))
        .values_list("tossup_id", "n")
    )
    rows = []
    for i in items:
        t = i.tossup
        answer, answer_hidden = _answer(t, hidden)
        rows.append(
            {
                "item": i.item,
                "tossup_id": i.tossup_id,
                "number": t.number if t else None,
                "packet": str(t.packet) if t else "",
                "answer": answer,
                "answer_hidden": answer_hidden,
                "mu": _finite(i.mu),
                "delta": _finite(i.delta),
                "kappa": _finite(i.kappa),
                "advscore": _finite(i.advscore),
                "difficulty": i.difficulty,
                "discriminability": i.discriminability,
                "flags": flags.get(i.tossup_id, 0),
                "human_buzz": _buzz(i, "human"),
                "bot_buzz": _buzz(i, "bot"),
                "n_responses": i.n_responses,
            }
        )
    return rows


def _buzz(item: ItemScore, kind: str) -> dict[str, Any] | None:
    """``{index, read, n}`` of ``kind``'s buzzes on ``item`` in the fit's responses, or None."""
    n = getattr(item, f"{kind}_buzzes")
    if not n:
        return None
    return {"index": getattr(item, f"{kind}_buzz_index"), "read": getattr(item, f"{kind}_buzz_read"), "n": n}


def plot_data(fit: Fit, skills: list[dict[str, Any]], items: list[dict[str, Any]]) -> dict[str, Any]:
    """JSON for the two plotly charts: skills grouped by kind, and IIF curves of up to
    ``MAX_CURVES`` items (the most discriminating ones) on the grid ``IIF_GRID``."""
    by_kind: dict[str, dict[str, list[Any]]] = defaultdict(lambda: {"skill": [], "ci": [], "subject": []})
    for s in skills:
        group = by_kind[s["kind"]]
        group["skill"].append(s["skill"])
        group["ci"].append(s["ci"])
        group["subject"].append(s["label"])
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


def figure2(fit: Fit) -> dict[str, Any] | None:
    """Data of the ADVSCORE paper's Figure 2 for a fit (Sung et al. 2025), or None without both
    humans and bots: kernel densities of the skills of skilled humans H(0) and skilled models M(0)
    on a skill grid (logits) with the representative skills β*_H0, β*_M0; and per item, sorted by
    difficulty θ, the mean response probability σ(γ(β − θ)) over each group. Groups are
    recomputed from the stored parameters as the fit defined them (teams out, ``experts`` setting).
    ``no_density`` of a group: why it has no density curve (one skill, or no spread), else None."""
    subjects = list(SubjectSkill.objects.filter(fit=fit).exclude(kind="team").values_list("skill", "kind"))
    items = list(ItemScore.objects.filter(fit=fit).order_by("difficulty", "item"))
    skill = np.array([s for s, _ in subjects], dtype=float)
    human = np.array([k == "human" for _, k in subjects], dtype=bool)
    if not items or not human.any() or human.all():
        return None
    theta = np.array([i.difficulty for i in items])
    gamma = np.array([i.discriminability for i in items])
    groups = advscore(skill, human, theta, gamma, experts=bool(fit.settings.get("experts")))
    grid = np.linspace(min(-5.0, skill.min() - 1.0), max(5.0, skill.max() + 1.0), 201)

    def density(values: np.ndarray) -> list[float] | None:
        if values.size < 2 or np.ptp(values) == 0:
            return None  # a KDE needs spread; the skills still show as a rug
        return np.round(gaussian_kde(values)(grid), 5).tolist()

    def no_density(values: np.ndarray, group: str) -> str | None:
        """Why ``group`` ("skilled human" | "skilled model") has no density curve (None: it has one)."""
        if values.size == 0:
            return f"no {group} in this fit"
        if values.size == 1:
            return f"only one {group} in this fit (skill {values[0]:.2f})"
        if np.ptp(values) == 0:
            return f"the {values.size} {group}s all have the same skill ({values[0]:.2f})"
        return None

    def curve(mask: np.ndarray) -> list[float]:
        p = 1.0 / (1.0 + np.exp(-gamma[None, :] * (skill[mask][:, None] - theta[None, :])))
        return np.round(p.mean(axis=0), 5).tolist()

    return {
        "grid": grid.round(3).tolist(),
        "human": {
            "skills": skill[groups.h0].tolist(),
            "density": density(skill[groups.h0]),
            "no_density": no_density(skill[groups.h0], "skilled human"),
        },
        "bot": {
            "skills": skill[groups.m0].tolist(),
            "density": density(skill[groups.m0]),
            "no_density": no_density(skill[groups.m0], "skilled model"),
        },
        "skill_h0": groups.skill_h0,
        "skill_m0": groups.skill_m0,
        "items": [i.item for i in items],
        "difficulty": theta.round(4).tolist(),
        "human_curve": curve(groups.h0),
        "bot_curve": curve(groups.m0),
    }


def scope_explanation(fit: Fit) -> dict[str, Any]:
    """What the fit's scope means, in words, from what its responses come from now
    (``irt.selectors.scope_coverage``): ``{text, matches [(id, name, join code)], sources,
    n_responses (now), changed}`` (``changed``: the scope holds other responses now than the fit used,
    e.g. a match ended since: refit to include them)."""
    scope = fit.dataset
    cover = selectors.scope_coverage(scope)
    matches = cover["matches"]
    named = ", ".join(f"“{name}”" + (f" ({code})" if code else "") for _, name, code in matches)
    if scope.startswith("match:"):
        text = f"{scope} = one match: {named or 'a match whose responses are gone'}"
    elif scope == LIVE_DATASET:
        n = len(matches)
        text = f"live = every live match with recorded responses: {n} match{'es' if n != 1 else ''}"
        text += f" ({named})" if named else ""
    elif scope.startswith("tournament:"):
        text = f"{scope} = the matches of tournament “{cover['tournament'] or 'deleted'}”: {len(matches)}"
        text += f" ({named})" if named else ""
    else:
        files = ", ".join(cover["sources"]) or "none left"
        text = f"{scope} = an imported response set (files: {files})"
    return {
        **cover,
        "text": text,
        "changed": cover["n_responses"] != fit.n_responses,
    }


def small_sample(fit: Fit) -> str | None:
    """The small-sample warning of a fit, or None: fewer than :data:`SMALL_SAMPLE_ITEMS` items, or
    a skill standard error above :data:`WIDE_SE` logits (the widest is named)."""
    ses = [
        se for se in SubjectSkill.objects.filter(fit=fit).values_list("skill_se", flat=True) if _finite(se)
    ]
    widest = max(ses, default=None)
    if fit.n_items >= SMALL_SAMPLE_ITEMS and (widest is None or widest <= WIDE_SE):
        return None
    live = fit.dataset == LIVE_DATASET or fit.dataset.startswith(("match:", "tournament:"))
    unit = ("tossup" if live else "item") + ("" if fit.n_items == 1 else "s")
    se = "" if widest is None else f"standard errors up to ±{widest:.2f} logits"
    if fit.n_items < SMALL_SAMPLE_ITEMS:
        text = (
            f"{fit.n_items} {unit}, {fit.n_responses} responses: a small sample, skills have wide intervals"
        )
        text += f" ({se})" if se else ""
    else:
        text = f"{se[0].upper()}{se[1:]}: skills have wide intervals (few responses per subject)"
    return text + ". Rankings may change with more questions."


def fit_context(fit: Fit, include_flagged: bool = False, reveal_answers: bool = False) -> dict[str, Any]:
    """Everything the analysis template needs for one fit; aggregates leave flagged tossups out
    unless ``include_flagged``; answer lines of tossups in unended matches only with
    ``reveal_answers`` (a logged-in organiser or analyst). ``players`` / ``teams``: the leaderboard
    split (humans and bots, human teams); ``scope``: :func:`scope_explanation`; ``sample``:
    :func:`small_sample`."""
    skills = leaderboard(fit)
    items = item_rows(fit, reveal_answers)
    plots = plot_data(fit, skills, items)
    plots["figure2"] = figure2(fit)
    # Aggregates over the flags as they are now, like the writer and packet tables below.
    summary = selectors.event_summary(fit, include_flagged)
    return {
        "fit": fit,
        "include_flagged": include_flagged,
        "summary": summary,
        "sensitivity": _sensitivity(fit),
        "reasons": reasons(fit),
        "skills": skills,
        "players": [s for s in skills if s["kind"] != "team"],
        "teams": [s for s in skills if s["kind"] == "team"],
        "scope": scope_explanation(fit),
        "sample": small_sample(fit),
        "items": items,
        "group_tables": [
            ("Writers", selectors.group_leaderboard(fit, "writer", include_flagged)),
            ("Packets", selectors.group_leaderboard(fit, "packet", include_flagged)),
        ],
        "plots": plots,
    }


def _sensitivity(fit: Fit) -> dict[str, Any] | None:
    """The fit's leave-one-bot-out summary with each left-out bot's ``label``."""
    sens = (fit.summary or {}).get("sensitivity")
    if not sens:
        return sens
    labels = selectors.subject_labels(r["bot"] for r in sens.get("leave_out", []))
    return {**sens, "leave_out": [{**r, "label": labels[r["bot"]]} for r in sens.get("leave_out", [])]}


def subject_context(fit: Fit, subject: str, reveal_answers: bool = False) -> dict[str, Any] | None:
    """A subject's page: its fitted skill with the 95 % interval, rank within its kind, and its
    responses in the fit's scope with each item's parameters and the buzz position. None when the
    fit has no such subject. Answer lines of tossups in unended matches only with ``reveal_answers``."""
    row = next((s for s in selectors.subject_leaderboard(fit) if s["subject"] == subject), None)
    if row is None:
        return None
    ranked = selectors.subject_leaderboard(fit, row["kind"])
    rank = next(s["rank"] for s in ranked if s["subject"] == subject)
    params = {i.item: i for i in ItemScore.objects.filter(fit=fit).select_related("tossup")}
    hidden = _hidden(reveal_answers)
    responses = []
    for r in scope_responses(fit.dataset).filter(subject=subject).order_by("item", "source"):
        item = params.get(r.item)
        tossup = item.tossup if item else None
        answer, answer_hidden = _answer(tossup, hidden)
        responses.append(
            {
                "item": r.item,
                "source": r.source,
                "correct": r.correct,
                "position": r.position,
                "number": tossup.number if tossup else None,
                "answer": answer,
                "answer_hidden": answer_hidden,
                "difficulty": item.difficulty if item else None,
                "advscore": _finite(item.advscore) if item else None,
                "p_correct": None
                if item is None
                else 1.0 / (1.0 + math.exp(-item.discriminability * (row["skill"] - item.difficulty))),
            }
        )
    return {
        "fit": fit,
        "subject": row,
        "rank": rank,
        "of": len(ranked),
        "responses": responses,
        "n_correct": sum(r["correct"] for r in responses),
        "reasons": reasons(fit),
    }


def running_fits() -> list[dict[str, Any]]:
    """Fits running now, newest first: ``{id, dataset, progress (0–1), stale}`` (``stale``: no
    heartbeat for ``pipeline.STALE_FIT_S``, its worker is likely gone; the next fit task takes
    it over)."""
    now = time.time()
    return [
        {
            "id": f.id,
            "dataset": f.dataset,
            "progress": f.progress,
            "stale": now - (f.heartbeat_at or 0.0) > STALE_FIT_S,
        }
        for f in Fit.objects.filter(status=Fit.Status.RUNNING).order_by("-created_at")[:20]
    ]


def fit_progress(dataset: str) -> dict[str, Any]:
    """What the analysis page polls: ``{"running": running_fits(), "latest": id | None}``, the
    latest finished fit of ``dataset``."""
    latest = (
        Fit.objects.filter(dataset=dataset, status=Fit.Status.DONE)
        .order_by("-finished_at", "-id")
        .values_list("id", flat=True)
        .first()
    )
    return {"running": running_fits(), "latest": latest}


def has_responses(scope: str) -> bool:
    """Whether a fit scope (``live``, ``match:<id>``, an imported set) has responses to fit."""
    return scope_responses(scope).exists()
