"""Exports of a :class:`irt.models.Fit`: responses, fitted parameters and ADVSCORE tables as JSON
and CSV, and the response matrix in the ADVSCORE paper's CSV layout (Sung et al. 2025's released
``responses_<ds>.csv``: ``item_id`` + one 0/1 column per subject, humans prefixed ``h_``, empty =
not asked), which ``import_responses --format advscore`` reads back."""

from __future__ import annotations

import csv
import io
import math
from typing import Any

from irt.importers import HUMAN_PREFIX
from irt.models import Fit, ItemScore, SubjectSkill
from irt.pipeline import scope_responses

RESPONSE_COLUMNS = [
    "subject",
    "subject_kind",
    "item",
    "tossup_id",
    "match_id",
    "source",
    "correct",
    "position",
]
PARAMETER_COLUMNS = ["difficulty", "discriminability", "mu", "delta", "kappa", "advscore"]
EXPORT_COLUMNS = [*RESPONSE_COLUMNS, "skill", "skill_se", *PARAMETER_COLUMNS]
SUBJECT_COLUMNS = ["subject", "kind", "skill", "skill_se", "n_responses"]
ITEM_COLUMNS = ["item", "tossup_id", *PARAMETER_COLUMNS, "n_responses"]


def _json_safe(obj: Any) -> Any:
    """NaN/±inf (e.g. δ_j with an empty H(1)) become None: strict JSON has no NaN."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_json_safe(v) for v in obj]
    return obj


def subjects(fit: Fit) -> list[dict[str, Any]]:
    """Fitted subjects: ``SUBJECT_COLUMNS`` (skill β and its SE in logits)."""
    return _json_safe(list(SubjectSkill.objects.filter(fit=fit).order_by("-skill").values(*SUBJECT_COLUMNS)))


def items(fit: Fit) -> list[dict[str, Any]]:
    """The ADVSCORE table: ``ITEM_COLUMNS`` per item (θ, γ in logits; μ, δ, κ, ADVSCORE)."""
    return _json_safe(list(ItemScore.objects.filter(fit=fit).order_by("item").values(*ITEM_COLUMNS)))


def responses(fit: Fit) -> list[dict[str, Any]]:
    """The responses of the fit's scope as stored now: ``RESPONSE_COLUMNS``."""
    return list(scope_responses(fit.dataset).order_by("id").values(*RESPONSE_COLUMNS))


def export_json(fit: Fit) -> dict[str, Any]:
    """``{"fit", "subjects", "items", "responses"}``: the fit's settings and summary, fitted
    subject and item parameters and its scope's responses; non-finite numbers become null."""
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
                "duration_s": fit.duration_s,
                "created_at": fit.created_at.isoformat(),
            },
            "subjects": subjects(fit),
            "items": items(fit),
            "responses": responses(fit),
        }
    )


def _csv(rows: list[dict[str, Any]], columns: list[str]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def export_csv(fit: Fit) -> str:
    """One row per response joined with the subject's fitted skill and the item's fitted
    parameters (empty where the fit has none). Columns: ``EXPORT_COLUMNS``."""
    by_subject = {s["subject"]: s for s in subjects(fit)}
    by_item = {i["item"]: i for i in items(fit)}
    rows = []
    for r in responses(fit):
        s, i = by_subject.get(r["subject"], {}), by_item.get(r["item"], {})
        rows.append(
            {
                **r,
                "correct": int(r["correct"]),
                "skill": s.get("skill"),
                "skill_se": s.get("skill_se"),
                **{k: i.get(k) for k in PARAMETER_COLUMNS},
            }
        )
    return _csv(rows, EXPORT_COLUMNS)


def subjects_csv(fit: Fit) -> str:
    """``subjects(fit)`` as CSV."""
    return _csv(subjects(fit), SUBJECT_COLUMNS)


def items_csv(fit: Fit) -> str:
    """``items(fit)`` (the ADVSCORE table) as CSV."""
    return _csv(items(fit), ITEM_COLUMNS)


def matrix_column(subject: str, kind: str) -> str:
    """ADVSCORE-layout column of a stored subject: ``human:ann`` → ``h_ann``, ``bot:gpt`` → ``gpt``."""
    name = subject.split(":", 1)[-1]
    return f"{HUMAN_PREFIX}{name}" if kind == "human" else name


def response_matrix_csv(fit: Fit) -> str:
    """The scope's responses as an ADVSCORE CSV matrix: ``item_id`` then one column per human
    (``h_<name>``) and bot, cells 1/0/empty, items and subjects sorted. Teams are left out (the
    paper's layout has humans and models only); a subject×item answered in several sources keeps
    its last stored response."""
    cells: dict[tuple[str, str], int] = {}
    for r in responses(fit):
        if r["subject_kind"] in ("human", "bot"):
            cells[(r["item"], matrix_column(r["subject"], r["subject_kind"]))] = int(r["correct"])
    item_ids = sorted({item for item, _ in cells})
    columns = sorted({col for _, col in cells}, key=lambda c: (not c.startswith(HUMAN_PREFIX), c))
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(["item_id", *columns])
    for item in item_ids:
        writer.writerow([item, *(cells.get((item, col), "") for col in columns)])
    return buf.getvalue()
