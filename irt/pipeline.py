"""Django glue between the buzz log, the response store and the pure IRT/ADVSCORE code.

Response policy for live tossups (every subject of the match gets one response per
played tossup; skipped tossups give none). A subject is a seat that played — connected,
buzzed or answered (``Seat.played``) — or a human team with such a seat: a seat that never
connected (e.g. a bot that never started) gives no response, so it is in no fit and no
leaderboard.
- a player or bot that buzzed correctly: 1; buzzed wrongly (neg, wrong after the read,
  timeout): 0;
- never buzzed: stored as 0 with no position (``unbuzzed="missing"`` at recording leaves the
  pair out when another subject answered correctly);
- a team: 1 if one of its players answered correctly, else 0 (same ``unbuzzed`` rule).
The fit reads a never-buzzed response by its ``unbuzzed`` setting (``irt.races``, docs/SKILLS.md):
``censored`` (default) right-censors it at the point the tossup was decided, ``wrong`` keeps the 0,
``missing`` drops it when someone answered correctly.
Human players are the human side of ADVSCORE, bots the model side. Teams are ranked from a fit of
their own responses (same policy and priors), kept out of the players' and bots' fit that gives the
items and ADVSCORE: a team's response repeats its player's buzz, so one fit would count it twice.
``Response.position`` keeps the subject's earliest buzz (0-based token index; a team's: its
players' earliest), None for a subject that never buzzed.

A live subject is an identity (``competition.models.Competitor``), never a display name:
``human:#12``, ``team:#3``, ``bot:#7`` (:func:`identity_key`); pages show its current handle
(``irt.selectors.subject_labels``). Merging or splitting identities reaches the fits when the
responses are recorded again: :func:`refresh_live_responses`, run by every on-demand refit.

Imported sets (``irt.importers``, ``manage.py import_responses``) live in the same store under their
own dataset name, one ``source`` per imported file.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from django.db import connection, transaction
from django.utils import timezone
from sklearn.base import clone

from competition import selectors
from irt.advscore import advscore
from irt.importers import ImportedResponse
from irt.models import Fit, ItemScore, Response, SubjectSkill
from irt.races import RaceTwoPL, race_responses
from irt.sensitivity import leave_one_bot_out
from irt.twopl import TwoPL

log = logging.getLogger(__name__)

DEFAULT_SETTINGS: dict[str, Any] = {
    "skill_prior": [0.0, 1.0],
    "difficulty_prior": [0.0, 1.0],
    "discriminability_prior": [2.0, 1.0],
    "unbuzzed": "censored",  # irt.races.POLICIES; chosen by tools.bench_skills (docs/SKILLS.md)
    "experts": False,  # ADVSCORE's all-humans-are-experts variant (ADVSCORE.md §2)
    "sensitivity": True,  # leave-one-bot-out refits (irt.sensitivity)
}


def subject_key(kind: str, name: str) -> str:
    """An imported subject: ``<kind>:<name>`` (the file's own subject id)."""
    return f"{kind}:{name}"


def identity_key(kind: str, competitor_id: int | None, seat_id: int) -> str:
    """A live subject: ``<kind>:#<competitor id>``; a seat or team without an identity (a row
    created around the model) is its own subject, ``<kind>:#seat<id>`` — never its name."""
    return f"{kind}:#{competitor_id}" if competitor_id is not None else f"{kind}:#seat{seat_id}"


def match_responses(match_id: int, *, unbuzzed: str = "wrong") -> list[Response]:
    """The responses of one ended match under the policy above (unsaved rows), read through
    :func:`competition.selectors.match_play`. Raises ``Match.DoesNotExist``."""
    play = selectors.match_play(match_id)
    correct_by: dict[int, set[int]] = {}
    position: dict[tuple[int, int], int] = {}  # (tossup, player) → earliest buzz token index
    for b in play.buzzes:
        key = (b.tossup_id, b.player_id)
        position[key] = min(position.get(key, b.token_index), b.token_index)
        if b.correct:
            correct_by.setdefault(b.tossup_id, set()).add(b.player_id)
    rows: list[Response] = []
    source = f"match:{play.match_id}"

    def add(subject: str, kind: str, tossup_id: int, correct: bool, at: int | None) -> None:
        rows.append(
            Response(
                dataset="live",
                source=source,
                subject=subject,
                subject_kind=kind,
                item=f"tossup:{tossup_id}",
                tossup_id=tossup_id,
                match_id=play.match_id,
                correct=correct,
                position=at,
            )
        )

    # A seat that never connected is no subject: it would enter fits and leaderboards as all
    # wrong. A human team counts while one of its seats played.
    seats = [p for p in play.seats if p.played]
    teams = [t for t in play.human_teams if any(p.team_id == t.team_id for p in seats)]
    for tossup_id in play.played_tossup_ids:
        winners = correct_by.get(tossup_id, set())
        for p in seats:
            at = position.get((tossup_id, p.player_id))
            if at is not None or not winners or unbuzzed == "wrong":
                add(
                    identity_key(p.kind, p.competitor_id, p.player_id),
                    p.kind,
                    tossup_id,
                    p.player_id in winners,
                    at,
                )
        for team in teams:
            members = {p.player_id for p in seats if p.team_id == team.team_id}
            times = [position[(tossup_id, m)] for m in members if (tossup_id, m) in position]
            if times or not winners or unbuzzed == "wrong":
                add(
                    identity_key("team", team.competitor_id, team.team_id),
                    "team",
                    tossup_id,
                    bool(members & winners),
                    min(times) if times else None,
                )
    return rows


def record_match_responses(match_id: int, *, unbuzzed: str = "wrong") -> int:
    """Replace the stored responses of a match (idempotent); returns how many."""
    rows = match_responses(match_id, unbuzzed=unbuzzed)
    with transaction.atomic():
        Response.objects.filter(source=f"match:{match_id}").delete()
        Response.objects.bulk_create(rows)
    return len(rows)


def refresh_live_responses(scope: str, *, unbuzzed: str = "wrong") -> int:
    """Record again, from the buzz log and the identities as they are now, the responses of the
    live matches in ``scope`` (``live``: every match with stored responses; ``match:<id>``: that
    match; an imported dataset: none), so merged or split identities, undone buzzes and late
    rulings reach the next fit. Returns the number of matches recorded."""
    if scope.startswith("match:"):
        match_ids = [int(scope.split(":", 1)[1])]
    elif scope == "live":
        match_ids = sorted(
            set(Response.objects.filter(dataset="live").values_list("match_id", flat=True)) - {None}
        )
    else:
        return 0
    for match_id in match_ids:
        record_match_responses(match_id, unbuzzed=unbuzzed)
    return len(match_ids)


RESERVED_DATASETS = ("live", "match:", "tournament:")


def replace_imported(dataset: str, source: str, rows: list[ImportedResponse]) -> int:
    """Atomically replace the responses of ``dataset`` that came from ``source`` (e.g.
    ``import:responses_fm2.csv``) by ``rows``, so re-importing a file is idempotent; other
    sources of the dataset are kept. Subjects are stored as ``<kind>:<name>``. Returns the count.
    Raises ValueError for the live store's own names (``live``, ``match:…``) or an empty dataset name."""
    if not dataset or dataset.startswith(RESERVED_DATASETS):
        raise ValueError(f"dataset name {dataset!r} is reserved or empty; pick another with --dataset")
    objs = [
        Response(
            dataset=dataset,
            source=source,
            subject=subject_key(r.kind, r.subject),
            subject_kind=r.kind,
            item=r.item,
            correct=r.correct,
            position=r.position,
        )
        for r in rows
    ]
    with transaction.atomic():
        Response.objects.filter(dataset=dataset, source=source).delete()
        Response.objects.bulk_create(objs, batch_size=2000)
    return len(objs)


def scope_responses(scope: str):
    """The Response queryset of a fit scope: ``match:<id>`` is that match's rows,
    ``tournament:<id>`` the rows of its games' matches, anything else a dataset name (``live``, all
    live matches across tournaments, or an imported set)."""
    if scope.startswith("match:"):
        return Response.objects.filter(source=scope)
    if scope.startswith("tournament:"):
        ids = selectors.tournament_match_ids(int(scope.split(":", 1)[1]))
        return Response.objects.filter(dataset="live", source__in=[f"match:{i}" for i in ids])
    return Response.objects.filter(dataset=scope)


def _hash(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def flagged_tossups(tossup_ids: Any) -> set[int]:
    """Ids among ``tossup_ids`` that carry at least one expert flag (any problem type)."""
    return selectors.flagged_tossup_ids(tossup_ids)


def fit_scope(
    scope: str,
    *,
    settings: dict[str, Any] | None = None,
    seed: int = 0,
    progress: Callable[[float], None] | None = None,
) -> Fit:
    """Fit the 2PL model and ADVSCORE over a scope's responses (``live``, ``match:<id>``,
    ``tournament:<id>`` or an imported dataset name) and store the versioned result.

    Idempotent: a finished fit with the same inputs — response snapshot plus the set of flagged
    tossups (they change the aggregates) — and settings is returned as is. ``progress`` is called
    with the fraction done (0–1, also saved on ``Fit.progress``). Summary: μ_D, κ_D, δ_D,
    ADVSCORE_D without flagged tossups, ``with_flagged`` the same over all items, ``sensitivity``
    the leave-one-bot-out refits (``irt.sensitivity``). Raises ValueError when the scope has no
    responses.

    Restartable and exactly-once: one row per inputs (unique key), claimed by one runner at a
    time. A fit left ``running`` by a killed worker (no heartbeat for ``STALE_FIT_S``) is run
    again by the next call; a call that finds another live runner on it waits for its result."""
    cfg = {**DEFAULT_SETTINGS, **(settings or {})}
    rows = list(
        scope_responses(scope)
        .order_by("subject", "item", "source")
        .values_list("subject", "subject_kind", "item", "tossup_id", "correct", "position", "source")
    )
    if not rows:
        raise ValueError(f"no responses for {scope!r}")
    flagged = flagged_tossups({r[3] for r in rows if r[3] is not None})
    snapshot = _hash({"responses": [r[:5] for r in rows], "flagged": sorted(flagged)})
    settings_hash = _hash({"settings": cfg, "seed": seed})
    claim = uuid.uuid4().hex
    while True:
        fit, claimed = _claim(scope, snapshot, settings_hash, cfg, seed, claim)
        if fit.status == Fit.Status.DONE:
            return fit
        if claimed:
            break
        # Another worker is fitting these very inputs (a redelivered task): wait for it, or
        # take over once its heartbeat goes stale.
        time.sleep(FIT_HEARTBEAT_S)
    started = time.perf_counter()

    def report(fraction: float) -> None:
        Fit.objects.filter(pk=fit.pk, worker=claim).update(progress=fraction, heartbeat_at=time.time())
        if progress:
            progress(fraction)

    try:
        with _heartbeat(fit.pk, claim):
            stored = _fit_into(fit, claim, rows, flagged, cfg, seed, report, started)
    except Exception as exc:
        Fit.objects.filter(pk=fit.pk, worker=claim).update(status=Fit.Status.FAILED, error=repr(exc)[:2000])
        raise
    if stored:
        report(1.0)
    fit.refresh_from_db()
    return fit


# A RUNNING fit's runner refreshes ``Fit.heartbeat_at`` this often; one silent for
# STALE_FIT_S (its worker was killed) is run again by the next task that needs it.
FIT_HEARTBEAT_S = 2.0
STALE_FIT_S = 30.0


def _claim(
    scope: str, snapshot: str, settings_hash: str, cfg: dict[str, Any], seed: int, claim: str
) -> tuple[Fit, bool]:
    """The fit row of these inputs, and whether ``claim`` now runs it: a new, failed or stale
    running row is claimed; a done row, or one whose runner is alive, is not."""
    with transaction.atomic():
        fit, created = Fit.objects.select_for_update().get_or_create(
            dataset=scope,
            snapshot_hash=snapshot,
            settings_hash=settings_hash,
            defaults={"settings": cfg, "seed": seed, "worker": claim, "heartbeat_at": time.time()},
        )
        if created:
            return fit, True
        if fit.status == Fit.Status.DONE:
            return fit, False
        alive = fit.status == Fit.Status.RUNNING and time.time() - (fit.heartbeat_at or 0.0) < STALE_FIT_S
        if alive and fit.worker != claim:
            return fit, False
        if fit.status == Fit.Status.RUNNING:
            log.warning("fit %s (%s) was left running by a dead worker; running it again", fit.pk, scope)
        fit.status, fit.progress, fit.error = Fit.Status.RUNNING, 0.0, ""
        fit.worker, fit.heartbeat_at = claim, time.time()
        fit.save(update_fields=["status", "progress", "error", "worker", "heartbeat_at"])
        return fit, True


@contextlib.contextmanager
def _heartbeat(fit_id: int, claim: str) -> Iterator[None]:
    """Refresh the running fit's heartbeat from a side thread while the numeric fit (which
    reports progress only between its phases) runs."""
    stop = threading.Event()

    def beat() -> None:
        try:
            while not stop.wait(FIT_HEARTBEAT_S):
                try:
                    Fit.objects.filter(pk=fit_id, worker=claim).update(heartbeat_at=time.time())
                except Exception:  # a busy database: the next beat will do
                    log.warning("heartbeat of fit %s failed", fit_id, exc_info=True)
        finally:
            connection.close()

    thread = threading.Thread(target=beat, name=f"fit-{fit_id}-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=10)


def _fit_into(
    fit: Fit,
    claim: str,
    rows: list[tuple],
    flagged: set[int],
    cfg: dict[str, Any],
    seed: int,
    progress: Callable[[float], None],
    started: float,
) -> bool:
    """Fit, then store the result and mark the row done in one transaction, if ``claim``
    still runs it; False when another runner took the fit over meanwhile (it stores the
    same result: the fit is deterministic in its inputs)."""
    subjects = sorted({r[0] for r in rows})
    items = sorted({r[2] for r in rows})
    s_index = {s: i for i, s in enumerate(subjects)}
    i_index = {it: j for j, it in enumerate(items)}
    kind_of = {r[0]: r[1] for r in rows}
    tossup_of = {r[2]: r[3] for r in rows}
    subj = np.fromiter((s_index[r[0]] for r in rows), dtype=np.int64, count=len(rows))
    item = np.fromiter((i_index[r[2]] for r in rows), dtype=np.int64, count=len(rows))
    resp = race_responses(*_races(rows), cfg["unbuzzed"])
    subj, item = subj[resp.keep], item[resp.keep]
    correct: np.ndarray = resp.columns() if resp.censored else resp.correct.astype(np.int64)
    progress(0.1)
    priors = {
        "skill_prior": tuple(cfg["skill_prior"]),
        "difficulty_prior": tuple(cfg["difficulty_prior"]),
        "discriminability_prior": tuple(cfg["discriminability_prior"]),
        "random_state": seed,
    }
    base = RaceTwoPL(**priors) if resp.censored else TwoPL(**priors)
    kinds = np.array([kind_of[s] for s in subjects])
    # A team's response repeats its player's buzz: fitted with the players it would count every
    # buzz twice (and pull the players' skills off the prior's centre), so teams get a fit of
    # their own responses; items and ADVSCORE come from the players' and bots' fit.
    team_row = kinds[subj] == "team"
    alone = ~team_row if (~team_row).any() else np.ones(len(subj), dtype=bool)
    subj_all, item_all = subj, item
    subj, item, correct = subj[alone], item[alone], correct[alone]
    model = clone(base).fit(subj, item, correct, n_subjects=len(subjects), n_items=len(items))
    skill, skill_se = model.skill_.copy(), getattr(model, "skill_se_", None)
    if team_row.any() and not alone.all():
        teams_fit = clone(base).fit(
            subj_all[team_row],
            item_all[team_row],
            resp.columns()[team_row] if resp.censored else resp.correct[team_row],
            n_subjects=len(subjects),
            n_items=len(items),
        )
        is_team = kinds == "team"
        skill[is_team] = teams_fit.skill_[is_team]
        if skill_se is not None:
            skill_se = np.where(is_team, teams_fit.skill_se_, skill_se)
    progress(0.4)
    in_groups = kinds != "team"
    is_human = kinds[in_groups] == "human"
    experts = bool(cfg["experts"])
    result = None
    if is_human.any() and (~is_human).any():
        result = advscore(
            model.skill_[in_groups], is_human, model.difficulty_, model.discriminability_, experts=experts
        )
    n_by_subject = np.bincount(subj_all, minlength=len(subjects))
    n_by_item = np.bincount(item, minlength=len(items))
    buzz = _buzz_positions(rows, tossup_of)
    keep = np.array([tossup_of[it] not in flagged for it in items])
    summary: dict[str, Any]
    if result is None:
        summary = {"reason": "ADVSCORE needs human and model subjects; only skills were fitted"}
    else:
        summary = {
            **_aggregate(result, keep),
            "n_flagged": int((~keep).sum()),
            "skill_h0": result.skill_h0,
            "skill_m0": result.skill_m0,
            "delta_reason": result.delta_reason,
            "with_flagged": _aggregate(result, np.ones(len(items), dtype=bool)),
        }
        if cfg["sensitivity"] and keep.any():
            summary["sensitivity"] = _sensitivity(
                subjects, kinds, subj, item, correct, base, model, keep, experts
            )
    summary["buzz_positions"] = True  # ItemScore carries them (pages tell older fits apart)
    progress(0.9)
    with transaction.atomic():
        if not Fit.objects.select_for_update().filter(pk=fit.pk, worker=claim).exists():
            return False
        SubjectSkill.objects.filter(fit=fit).delete()
        ItemScore.objects.filter(fit=fit).delete()
        se = skill_se
        SubjectSkill.objects.bulk_create(
            SubjectSkill(
                fit=fit,
                subject=s,
                kind=kind_of[s],
                skill=float(skill[i]),
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
                **buzz.get(it, {}),
            )
            for j, it in enumerate(items)
        )
        Fit.objects.filter(pk=fit.pk).update(
            n_responses=len(rows),
            n_subjects=len(subjects),
            n_items=len(items),
            summary=summary,
            status=Fit.Status.DONE,
            progress=1.0,
            duration_s=time.perf_counter() - started,
            finished_at=timezone.now(),
        )
    return True


def _races(rows: list[tuple]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(race id, correct, share read at the buzz) per stored response for ``irt.races``: a race
    is one tossup in one live match (−1 for an imported response); the share is (index + 1) /
    tokens, NaN without a buzz or a known length."""
    tokens = selectors.tossup_token_counts({r[3] for r in rows if r[3] is not None and r[5] is not None})
    race_ids: dict[tuple[str, str], int] = {}
    races = np.fromiter(
        (race_ids.setdefault((r[6], r[2]), len(race_ids)) if r[6].startswith("match:") else -1 for r in rows),
        dtype=np.int64,
        count=len(rows),
    )
    correct = np.fromiter((r[4] for r in rows), dtype=np.int8, count=len(rows))
    read = np.fromiter(
        ((r[5] + 1) / n if r[5] is not None and (n := tokens.get(r[3])) else np.nan for r in rows),
        dtype=float,
        count=len(rows),
    )
    return races, correct, read


def _sensitivity(
    subjects: list[str],
    kinds: np.ndarray,
    subj: np.ndarray,
    item: np.ndarray,
    correct: np.ndarray,
    base: TwoPL,
    model: TwoPL,
    keep: np.ndarray,
    experts: bool,
) -> dict[str, Any]:
    """Leave-one-bot-out ADVSCORE_D over the unflagged items, as JSON for ``Fit.summary``."""
    sens = leave_one_bot_out(
        subj,
        item,
        correct,
        kinds == "human",
        kinds == "bot",
        model=base,
        full_fit=model,
        item_mask=keep,
        experts=experts,
    )
    lo, hi = sens.advscore_range
    return {
        "method": "refit without each bot's responses; τ over the remaining bots' skills",
        "reason": sens.reason,
        "advscore_min": _num(lo),
        "advscore_max": _num(hi),
        "min_tau": _num(sens.min_tau),
        "leave_out": [
            {
                "bot": subjects[r.bot],
                **{k: _num(getattr(r, k)) for k in ("mu", "kappa", "delta", "advscore", "tau")},
            }
            for r in sens.leave_out
        ],
    }


def _buzz_positions(rows: list[tuple], tossup_of: dict[str, int | None]) -> dict[str, dict[str, Any]]:
    """Per item, from exactly the fit's responses: the mean earliest-buzz token index (0-based)
    of the humans and of the bots that buzzed, the mean share of the tossup read at it
    ((index + 1) / tokens, live tossups only) and how many buzzed — as ``ItemScore`` fields."""
    found: dict[tuple[str, str], list[int]] = {}
    for subject_kind, it, at in ((r[1], r[2], r[5]) for r in rows):
        if at is not None and subject_kind in ("human", "bot"):
            found.setdefault((it, subject_kind), []).append(at)
    tossups = {it: t for it, _ in found if (t := tossup_of[it]) is not None}
    tokens = selectors.tossup_token_counts(set(tossups.values()))
    out: dict[str, dict[str, Any]] = {}
    for (it, kind), positions in found.items():
        n = tokens.get(tossups[it]) if it in tossups else None
        out.setdefault(it, {}).update(
            {
                f"{kind}_buzz_index": float(np.mean(positions)),
                f"{kind}_buzz_read": float(np.mean([(p + 1) / n for p in positions])) if n else None,
                f"{kind}_buzzes": len(positions),
            }
        )
    return out


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
