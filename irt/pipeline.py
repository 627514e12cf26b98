"""Django glue between the buzz log, the response store and the pure IRT/ADVSCORE code.

Response policy for live tossups (every subject of the match gets one response per
played tossup; skipped tossups give none):
- a player or bot that buzzed correctly: 1; buzzed wrongly (neg, wrong after the read,
  timeout): 0;
- never buzzed: 0 — "did not know it by the time the tossup was decided" (dead, or
  answered by someone else first). Setting ``unbuzzed="missing"`` instead leaves those
  pairs unobserved when another subject answered correctly (censoring);
- a team: 1 if one of its players answered correctly, else 0 (same ``unbuzzed`` rule).
Human players are the human side of ADVSCORE, bots the model side; teams are fitted and
ranked but kept out of the ADVSCORE groups (they would count their players twice).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from django.db import transaction
from django.utils import timezone

from competition.models import Buzz, Flag, Match, MatchEvent
from irt.advscore import advscore
from irt.models import Fit, ItemScore, Response, SubjectSkill
from irt.twopl import TwoPL

DEFAULT_SETTINGS: dict[str, Any] = {
    "skill_prior": [0.0, 1.0],
    "difficulty_prior": [0.0, 1.0],
    "discriminability_prior": [2.0, 1.0],
    "unbuzzed": "wrong",
}


def subject_key(kind: str, name: str) -> str:
    return f"{kind}:{name}"


def match_responses(match: Match, *, unbuzzed: str = "wrong") -> list[Response]:
    """The responses of one ended match under the policy above (unsaved rows)."""
    played = [
        e.payload["question_id"]
        for e in MatchEvent.objects.filter(match=match, type="tossup_ended")
        if e.payload.get("outcome") != "skipped"
    ]
    buzzes = Buzz.objects.filter(match=match).exclude(ruling__in=["", "undone", "pending"])
    correct_by: dict[int, set[int]] = {}
    buzzed_by: dict[int, set[int]] = {}
    for b in buzzes:
        buzzed_by.setdefault(b.tossup_id, set()).add(b.player_id)
        if b.ruling == "correct":
            correct_by.setdefault(b.tossup_id, set()).add(b.player_id)
    players = list(match.players.select_related("team"))
    teams = list(match.teams.filter(kind="human"))
    rows: list[Response] = []
    source = f"match:{match.id}"

    def add(subject: str, kind: str, tossup_id: int, correct: bool) -> None:
        rows.append(
            Response(
                dataset="live",
                source=source,
                subject=subject,
                subject_kind=kind,
                item=f"tossup:{tossup_id}",
                tossup_id=tossup_id,
                match=match,
                correct=correct,
            )
        )

    for tossup_id in dict.fromkeys(played):
        winners = correct_by.get(tossup_id, set())
        buzzed = buzzed_by.get(tossup_id, set())
        for p in players:
            if p.id in buzzed or not winners or unbuzzed == "wrong":
                add(subject_key(p.kind, p.name), p.kind, tossup_id, p.id in winners)
        for t in teams:
            members = {p.id for p in players if p.team_id == t.id}
            if members & buzzed or not winners or unbuzzed == "wrong":
                add(subject_key("team", t.name), "team", tossup_id, bool(members & winners))
    return rows


def record_match_responses(match_id: int, *, unbuzzed: str = "wrong") -> int:
    """Replace the stored responses of a match (idempotent); returns how many."""
    match = Match.objects.get(pk=match_id)
    rows = match_responses(match, unbuzzed=unbuzzed)
    with transaction.atomic():
        Response.objects.filter(source=f"match:{match_id}").delete()
        Response.objects.bulk_create(rows)
    return len(rows)


def _scope_queryset(scope: str):
    if scope.startswith("match:"):
        return Response.objects.filter(source=scope)
    return Response.objects.filter(dataset=scope)


def _hash(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def fit_scope(
    scope: str,
    *,
    settings: dict[str, Any] | None = None,
    seed: int = 0,
    progress: Callable[[float], None] | None = None,
) -> Fit:
    """Fit the 2PL model and ADVSCORE over a scope's responses (``live``, ``match:<id>`` or an
    imported dataset name) and store the versioned result.

    Idempotent: a finished fit with the same response snapshot and settings is returned
    as is. Raises ValueError when the scope has no responses."""
    cfg = {**DEFAULT_SETTINGS, **(settings or {})}
    rows = list(
        _scope_queryset(scope)
        .order_by("subject", "item", "source")
        .values_list("subject", "subject_kind", "item", "tossup_id", "correct")
    )
    if not rows:
        raise ValueError(f"no responses for {scope!r}")
    snapshot = _hash(rows)
    settings_hash = _hash({"settings": cfg, "seed": seed})
    fit, created = Fit.objects.get_or_create(
        dataset=scope,
        snapshot_hash=snapshot,
        settings_hash=settings_hash,
        defaults={"settings": cfg, "seed": seed},
    )
    if not created and fit.status == Fit.Status.DONE:
        return fit
    started = time.perf_counter()
    Fit.objects.filter(pk=fit.pk).update(status=Fit.Status.RUNNING, progress=0.0, error="")
    try:
        _fit_into(fit, rows, cfg, seed, progress)
    except Exception as exc:
        Fit.objects.filter(pk=fit.pk).update(status=Fit.Status.FAILED, error=repr(exc)[:2000])
        raise
    fit.duration_s = time.perf_counter() - started
    fit.status = Fit.Status.DONE
    fit.progress = 1.0
    fit.finished_at = timezone.now()
    fit.save()
    return fit


def _fit_into(
    fit: Fit,
    rows: list[tuple],
    cfg: dict[str, Any],
    seed: int,
    progress: Callable[[float], None] | None,
) -> None:
    subjects = sorted({r[0] for r in rows})
    items = sorted({r[2] for r in rows})
    s_index = {s: i for i, s in enumerate(subjects)}
    i_index = {it: j for j, it in enumerate(items)}
    kind_of = {r[0]: r[1] for r in rows}
    tossup_of = {r[2]: r[3] for r in rows}
    subj = np.fromiter((s_index[r[0]] for r in rows), dtype=np.int64, count=len(rows))
    item = np.fromiter((i_index[r[2]] for r in rows), dtype=np.int64, count=len(rows))
    correct = np.fromiter((r[4] for r in rows), dtype=np.int64, count=len(rows))
    if progress:
        progress(0.1)
    model = TwoPL(
        skill_prior=tuple(cfg["skill_prior"]),
        difficulty_prior=tuple(cfg["difficulty_prior"]),
        discriminability_prior=tuple(cfg["discriminability_prior"]),
        random_state=seed,
    ).fit(subj, item, correct, n_subjects=len(subjects), n_items=len(items))
    if progress:
        progress(0.7)
    kinds = np.array([kind_of[s] for s in subjects])
    in_groups = kinds != "team"
    is_human = kinds[in_groups] == "human"
    result = None
    if is_human.any() and (~is_human).any():
        result = advscore(model.skill_[in_groups], is_human, model.difficulty_, model.discriminability_)
    n_by_subject = np.bincount(subj, minlength=len(subjects))
    n_by_item = np.bincount(item, minlength=len(items))
    flagged = set(
        Flag.objects.filter(tossup_id__in=[t for t in tossup_of.values() if t]).values_list(
            "tossup_id", flat=True
        )
    )
    keep = np.array([tossup_of[it] not in flagged for it in items])
    with transaction.atomic():
        SubjectSkill.objects.filter(fit=fit).delete()
        ItemScore.objects.filter(fit=fit).delete()
        se = getattr(model, "skill_se_", None)
        SubjectSkill.objects.bulk_create(
            SubjectSkill(
                fit=fit,
                subject=s,
                kind=kind_of[s],
                skill=float(model.skill_[i]),
                skill_se=None if se is None else float(se[i]),
                n_responses=int(n_by_subject[i]),
            )
            for i, s in enumerate(subjects)
        )
        ItemScore.objects.bulk_create(
            ItemScore(
                fit=fit,
                item=it,
                tossup_id=tossup_of[it],
                difficulty=float(model.difficulty_[j]),
                discriminability=float(model.discriminability_[j]),
                mu=None if result is None else _num(result.mu[j]),
                delta=None if result is None else _num(result.delta[j]),
                kappa=None if result is None else _num(result.kappa[j]),
                advscore=None if result is None else _num(result.advscore[j]),
                n_responses=int(n_by_item[j]),
            )
            for j, it in enumerate(items)
        )
        fit.n_responses, fit.n_subjects, fit.n_items = len(rows), len(subjects), len(items)
        if result is None:
            fit.summary = {"reason": "ADVSCORE needs human and model subjects; only skills were fitted"}
        else:
            fit.summary = {
                **_aggregate(result, keep),
                "n_flagged": int((~keep).sum()),
                "with_flagged": _aggregate(result, np.ones(len(items), dtype=bool)),
            }


def _num(x: float) -> float | None:
    return None if not np.isfinite(x) else float(x)


def _aggregate(result: Any, keep: np.ndarray) -> dict[str, float | None]:
    """Dataset-level μ_D, κ_D, δ_D (plain means) and ADVSCORE_D (mean of per-item values)
    over the kept items, ignoring NaN items (ADVSCORE.md §3)."""
    out: dict[str, float | None] = {}
    for name in ("mu", "kappa", "delta", "advscore"):
        values = np.asarray(getattr(result, name))[keep]
        values = values[np.isfinite(values)]
        out[name] = float(values.mean()) if values.size else None
    return out
