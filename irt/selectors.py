"""Read-side queries over a stored :class:`irt.models.Fit`: leaderboards of subjects by skill,
of writers and packets by ADVSCORE, and an event's ADVSCORE_D with μ_D, κ_D, δ_D.

Aggregates read the expert flags as they are now (a flag raised after the fit counts at once), and
leave flagged tossups out unless ``include_flagged``; items that are not tossups (imported sets)
are never flagged. Sung et al. 2025, ADVSCORE.md §3.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

import numpy as np

from competition import selectors as competition_selectors
from competition.models import Match
from irt.advscore import dataset_means
from irt.models import Fit, ItemScore, SubjectSkill
from irt.pipeline import flagged_tossups

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
