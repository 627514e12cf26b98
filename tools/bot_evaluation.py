"""Offline bot evaluation (issue 8, item 4): replay a guesser prefix by prefix over tossups, judge its
answers with the project's judge, and score it against human buzz points with the QANTA metrics of
``irt.botmetrics`` (``../shared/reference/HYBRID.md``). Used by ``manage.py evaluate_bot``, the
``tools.tasks.evaluate_bot`` Celery task and ``python -m tools.bench_bot_eval``.

Tossups come from a question file any importer reads (``formats.questions.parse_file``) or an
imported question set (by name). Human buzz points come from:

- ``simulated``: the simulated-human population of ``simulate_match`` (``tools.simulation``): ``players``
  players of skill drawn from ``seed`` (``tools.simulation.HUMANS``); each is one opponent, whose buzz is
  the ``irt.botmetrics.HumanBuzz`` it plans (token and whether it is right; a neg is a buzz too), or
  None when it stays silent;
- ``log``: Tossup's own buzz log, the stored responses of finished matches (``irt.models.Response``,
  dataset ``live``): each human's response on a tossup is one opponent (its buzz token and ruling; None
  when a wrong response has no buzz token); only tossups of an imported set that were played are
  evaluated.

The metrics are those of the QANTA leaderboard's code (``irt.botmetrics``: qanta-challenge/ai_workflows
``metrics/qb_metrics.py``); a human who never buzzed counts in none of them.

The recorded 2024 exhibition bots (``expo/2024_470/<team>/<category>.buzz.csv``: per recorded prefix
the guess ``page``, confidence ``weight`` and buzz ``final``) are scored the same way on the same
tossups by :func:`recorded_runs`.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tossup_bot import Guess, Guesser, TossupPrefix

from competition.game.specs import strip_marks
from competition.vocabulary import Verdict
from formats import expo
from formats.errors import FormatError
from formats.qbreader import iter_items
from formats.questions import parse_file
from formats.textio import cell_bool, cell_float, cell_int, cell_text, csv_rows
from irt.botmetrics import BotMetrics, Human, HumanBuzz, PrefixAnswer, TossupRun, evaluate
from scoring.judge import judge, parse_answer_line
from tools.simulation import HUMANS, SimPlayer

Progress = Callable[[int, int], None]
HUMAN_SOURCES = ("simulated", "log")


class EvaluationError(ValueError):
    """An evaluation that cannot run: unknown tossup source, no human buzz points, a bad buzz file."""


@dataclass(frozen=True)
class EvalTossup:
    """A tossup to replay: ``key`` identifies it in results (the DB id when imported, else the file's
    external id); ``tokens`` are the display tokens the server reveals (power marks stripped)."""

    key: str
    db_id: int | None
    external_id: str
    question: str
    answer_line: str
    category: str
    tokens: tuple[str, ...]


def _tossup(
    key: str, db_id: int | None, external_id: str, question: str, answer_line: str, category: str
) -> EvalTossup:
    return EvalTossup(
        key, db_id, external_id, question, answer_line, category, tuple(strip_marks(question.split())[0])
    )


def load_tossups(source: str, limit: int | None = None) -> list[EvalTossup]:
    """The tossups of ``source``: a question file (any importer's format; read, not imported) or the
    name of an imported question set (in import order: packet, number). Tossups with no token are skipped.
    Raises EvaluationError when ``source`` is neither, or the file cannot be read."""
    if Path(source).exists():
        try:
            parsed = parse_file(source, limit=limit)
        except (FormatError, ValueError) as exc:
            raise EvaluationError(f"cannot read tossups from {source}: {exc}") from exc
        tossups = [
            _tossup(t.external_id, None, t.external_id, t.question, t.answer_line, t.category)
            for t in parsed.tossups
        ]
    else:
        from competition.models import Tossup

        rows = Tossup.objects.filter(packet__question_set__name=source).order_by("packet_id", "number")
        if not rows.exists():
            raise EvaluationError(f"{source!r} is neither a question file nor an imported question set")
        tossups = [
            _tossup(str(t.id), t.id, t.external_id, t.question, t.answer_line, t.category)
            for t in rows[:limit]
        ]
    return [t for t in tossups if t.tokens]


def packet_tossups(
    path: str | Path,
    *,
    min_year: int | None = None,
    max_year: int | None = None,
    sample: int | None = None,
    seed: int = 0,
) -> list[EvalTossup]:
    """The tossups of a qbreader dump whose year lies in [min_year, max_year] (e.g. the years a bot
    never trained on), keyed by external id; ``sample`` draws that many with ``seed`` (kept in file
    order). Tossups without text or answer line are skipped. Raises FormatError for a bad file."""
    tossups = []
    for item in iter_items(path, kind="tossup", min_year=min_year, max_year=max_year):
        question, line = item.get("question") or "", item.get("answer") or ""
        external_id = f"qbreader:{item.get('set')}:{item.get('packet')}:tossup:{item.get('number')}"
        if question.strip() and line.strip():
            tossups.append(
                _tossup(external_id, None, external_id, question, line, str(item.get("category") or ""))
            )
    tossups = [t for t in tossups if t.tokens]
    if sample is not None and sample < len(tossups):
        chosen = sorted(random.Random(seed).sample(range(len(tossups)), sample))
        tossups = [tossups[i] for i in chosen]
    return tossups


def simulated_humans(
    tossups: Iterable[EvalTossup], players: int = 8, seed: int = 1
) -> dict[str, tuple[Human, ...]]:
    """Per tossup key, the buzz of each of ``players`` simulated humans (``HumanBuzz``: token, right or
    a neg; None: stays silent), planned exactly as ``simulate_match``'s players plan their buzzes.
    Raises EvaluationError for players < 1."""
    if players < 1:
        raise EvaluationError(f"need at least one simulated human, got {players}")
    rng = random.Random(seed)
    population = [
        SimPlayer(
            url="", name=f"human{i}", true_skill=HUMANS.skill(rng), seed=seed, answers={}, bonus_answers={}
        )
        for i in range(players)
    ]
    humans: dict[str, tuple[Human, ...]] = {}
    for t in tossups:
        question_id: Any = t.db_id if t.db_id is not None else t.key
        plans = [p.plan(question_id, len(t.tokens)) for p in population]
        humans[t.key] = tuple(None if plan is None else HumanBuzz(*plan) for plan in plans)
    return humans


def logged_humans(tossups: Iterable[EvalTossup]) -> dict[str, tuple[Human, ...]]:
    """Per imported tossup played in a finished match, each human's buzz from the stored responses
    (``HumanBuzz`` of its token and ruling; None for a wrong response without a token, no buzz; a
    response whose token is missing or outside the tossup is left out when correct, else read as no
    buzz). Tossups nobody played are absent."""
    from irt.models import Response

    by_id = {t.db_id: t for t in tossups if t.db_id is not None}
    humans: dict[str, list[Human]] = {}
    rows = Response.objects.filter(dataset="live", subject_kind="human", tossup_id__in=list(by_id))
    for tossup_id, correct, position in rows.values_list("tossup_id", "correct", "position"):
        token_count = len(by_id[tossup_id].tokens)
        buzzed = position is not None and 0 <= position < token_count
        if correct and not buzzed:
            continue
        humans.setdefault(str(tossup_id), []).append(HumanBuzz(position, correct) if buzzed else None)
    return {k: tuple(v) for k, v in humans.items()}


def human_buzz_points(
    kind: str, tossups: Sequence[EvalTossup], *, players: int = 8, seed: int = 1
) -> dict[str, tuple[Human, ...]]:
    """:func:`simulated_humans` or :func:`logged_humans` by ``kind`` (``simulated`` | ``log``).
    Raises EvaluationError for another kind or when no tossup has a human buzz point."""
    if kind == "simulated":
        humans = simulated_humans(tossups, players, seed)
    elif kind == "log":
        if not any(t.db_id is not None for t in tossups):
            raise EvaluationError("--humans log needs the tossups of an imported question set, not a file")
        humans = logged_humans(tossups)
    else:
        raise EvaluationError(f"unknown human source {kind!r}: use one of {', '.join(HUMAN_SOURCES)}")
    if not humans:
        raise EvaluationError(f"no human buzz points ({kind}) for these {len(tossups)} tossups")
    return humans


class Judge:
    """The project's judge on one tossup, ACCEPT = correct (a prompt or a reject is wrong: offline
    there is nobody to answer a prompt), as a buzz on that token would be judged live. Each distinct
    guess is judged once, or once per token when the answer line has timing clauses ("prompt before
    X is read"). An unparsable answer line (NEEDS_MODERATOR) makes every guess wrong."""

    def __init__(self, tossup: EvalTossup) -> None:
        self.tossup = tossup
        try:
            clauses = parse_answer_line(tossup.answer_line).clauses
        except Exception:  # the judge itself reports it (NEEDS_MODERATOR)
            clauses = []
        self.timed = any(c.timing is not None for c in clauses)
        self.cache: dict[tuple[str, int], bool] = {}

    def __call__(self, guess: str, token_index: int) -> bool:
        key = (guess, token_index if self.timed else -1)
        if key not in self.cache:
            t = self.tossup
            verdict = judge(
                t.answer_line, guess, token_index=token_index, token_count=len(t.tokens), question=t.question
            ).verdict
            self.cache[key] = verdict == Verdict.ACCEPT
        return self.cache[key]


def replay(
    guesser: Guesser, tossup: EvalTossup, index: int, every: int = 1, also: Iterable[int] = ()
) -> tuple[list[PrefixAnswer], float, int]:
    """Ask ``guesser`` on every ``every``-th prefix of ``tossup`` (and always on the full text, and on
    the prefixes of ``also`` tokens seen), as the SDK client would (``begin_tossup`` first). Returns ``(answers, cost in USD, errors)``: a guesser that
    raises or returns something other than a Guess gives an empty, wrong answer on that prefix."""
    n = len(tossup.tokens)
    question_id: Any = tossup.db_id if tossup.db_id is not None else tossup.key
    guesser.begin_tossup(
        {"index": index, "question_id": question_id, "token_count": n, "category": tossup.category}
    )
    correct = Judge(tossup)
    answers: list[PrefixAnswer] = []
    cost, errors = 0.0, 0
    for seen in sorted({*range(every, n + 1, every), n, *(k for k in also if 1 <= k <= n)}):
        prefix = TossupPrefix(question_id, index, tossup.tokens[:seen], n, tossup.category)
        try:
            guess = guesser.guess_tossup(prefix)
            if not isinstance(guess, Guess):
                raise TypeError(f"guess_tossup returned {type(guess).__name__}, not a Guess")
        except Exception:  # one bad answer costs that prefix, not the evaluation
            errors += 1
            guess = Guess("", 0.0)
        cost += guess.cost
        answers.append(
            PrefixAnswer(
                seen - 1, guess.guess, float(guess.confidence), guess.buzz, correct(guess.guess, seen - 1)
            )
        )
    return answers, cost, errors


def evaluate_guesser(
    guesser: Guesser,
    tossups: Sequence[EvalTossup],
    humans: Mapping[str, tuple[Human, ...]],
    *,
    every: int = 1,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Replay ``guesser`` on the tossups that have human buzz points and score it. Returns
    :func:`result` plus ``cost_usd`` (sum of the guesses' costs) and ``errors`` (prefixes whose call
    raised). ``progress(done, total)`` after each tossup. Raises EvaluationError when every <1 or no
    tossup has humans."""
    if every < 1:
        raise EvaluationError(f"--every must be ≥ 1, got {every}")
    chosen = [t for t in tossups if t.key in humans]
    if not chosen:
        raise EvaluationError("none of the tossups has a human buzz point")
    runs: list[TossupRun] = []
    cost, errors = 0.0, 0
    for i, t in enumerate(chosen):
        answers, c, e = replay(guesser, t, i, every)
        cost, errors = cost + c, errors + e
        runs.append(TossupRun(t.key, len(t.tokens), tuple(answers), humans[t.key]))
        if progress is not None:
            progress(i + 1, len(chosen))
    return {**result(evaluate(runs)), "cost_usd": cost, "errors": errors}


def result(metrics: BotMetrics) -> dict[str, Any]:
    """The JSON stored and printed for one evaluation: ``metrics`` (the leaderboard numbers of
    ``irt.botmetrics.BotMetrics``: raw and expected score, buzz frequency, accuracy and precision,
    mean buzz position (1-based) and fraction, gaps, ``outcome_classes`` counts, human win rates,
    ECE), ``reliability``, ``accuracy_by_fraction`` and per-tossup ``outcomes``
    (``irt.botmetrics.TossupOutcome``)."""
    data = metrics.to_dict()
    plots = {k: data.pop(k) for k in ("reliability", "accuracy_by_fraction", "outcomes")}
    return {"metrics": data, **plots}


# --- the recorded 2024 exhibition bots ---------------------------------------------------------


def recorded_teams(folder: str | Path) -> list[Path]:
    """The team folders (those holding ``*.buzz.csv``) of an exhibition folder, by name."""
    return sorted(p for p in Path(folder).iterdir() if p.is_dir() and any(p.glob("*.buzz.csv")))


def _recorded_answers(
    team: Path, by_external: Mapping[str, EvalTossup]
) -> dict[str, list[tuple[int, str, float, bool]]]:
    """Per external id, the team's recorded ``(token, guess, weight, buzz)`` rows, at display tokens
    (the word index within the tossup mapped as ``competition.game.tokenize_tossup`` does)."""
    rows: dict[str, list[tuple[int, str, float, bool]]] = {}
    for log in sorted(team.glob("*.buzz.csv")):
        questions = expo.read_questions(expo.default_questions_file(log))
        layouts: dict[str, tuple[dict[int, tuple[int, int]], list[int]]] = {}
        with csv_rows(log) as reader:
            for row in reader:
                line = reader.line_num
                qid = cell_text(log, line, row, "question")
                if qid not in by_external or qid not in questions:
                    continue
                if qid not in layouts:
                    spans, words = questions[qid].sentence_spans()
                    layouts[qid] = (spans, strip_marks(words)[2])
                spans, token_of = layouts[qid]
                sentence, word = cell_int(log, line, row, "sentence"), cell_int(log, line, row, "word")
                if sentence not in spans or spans[sentence][1] == 0 or word < 1:
                    continue
                start, length = spans[sentence]
                token = token_of[start + min(word, length) - 1]
                guess = (row.get("page") or "").strip()
                rows.setdefault(qid, []).append(
                    (token, guess, cell_float(log, line, row, "weight"), cell_bool(log, line, row, "final"))
                )
    return rows


def recorded_runs(
    team: str | Path, tossups: Sequence[EvalTossup], humans: Mapping[str, tuple[Human, ...]]
) -> list[TossupRun]:
    """The runs of one recorded exhibition team on the ``tossups`` that have humans (matched by external
    id; a tossup the team has no row for is a run without answers: no buzz, so every bot is scored on
    the same tossups). Several rows on one token keep the last, buzzing if any did. Confidence
    is the row's ``weight``; a team whose weights are ≤ 0 logs log-probabilities (gpr_aim), read as
    exp(weight). Raises FormatError for a malformed buzz file."""
    by_external = {t.external_id: t for t in tossups if t.key in humans}
    recorded = _recorded_answers(Path(team), by_external)
    log_probs = any(w < 0 for rows in recorded.values() for _, _, w, _ in rows)
    runs = []
    for qid, t in by_external.items():
        rows = recorded.get(qid, [])
        correct = Judge(t)
        per_token: dict[int, PrefixAnswer] = {}
        for token, guess, weight, buzz in sorted(rows, key=lambda r: r[0]):
            confidence = math.exp(weight) if log_probs else weight
            confidence = min(max(confidence, 0.0), 1.0)
            buzz = buzz or (token in per_token and per_token[token].buzz)
            per_token[token] = PrefixAnswer(token, guess, confidence, buzz, correct(guess, token))
        runs.append(
            TossupRun(t.key, len(t.tokens), tuple(per_token[k] for k in sorted(per_token)), humans[t.key])
        )
    return runs


def evaluate_recorded(
    folder: str | Path, tossups: Sequence[EvalTossup], humans: Mapping[str, tuple[Human, ...]]
) -> dict[str, dict[str, Any]]:
    """:func:`result` per team folder name of the exhibition ``folder``. Raises EvaluationError when the
    folder has no team or a team has no recorded prefix on any of the tossups."""
    teams = recorded_teams(folder)
    if not teams:
        raise EvaluationError(f"{folder}: no team folder with *.buzz.csv files")
    results = {}
    for team in teams:
        runs = recorded_runs(team, tossups, humans)
        if not any(run.answers for run in runs):
            raise EvaluationError(f"{team}: no recorded prefix on these tossups")
        results[team.name] = result(evaluate(runs))
    return results


# --- output ------------------------------------------------------------------------------------

COLUMNS = (
    ("tossups", "tossups", "{:d}"),
    ("expected_score", "exp. score", "{:+.3f}"),
    ("raw_score", "raw score", "{:+.3f}"),
    ("buzz_accuracy", "accuracy", "{:.1%}"),
    ("buzz_precision", "precision", "{:.1%}"),
    ("buzz_frequency", "frequency", "{:.1%}"),
    ("mean_buzz_position", "buzz pos.", "{:.1f}"),
    ("mean_buzz_fraction", "buzz frac.", "{:.2f}"),
    ("human_win_rate", "win rate", "{:.1%}"),
    ("human_win_rate_strict", "strict win", "{:.1%}"),
    ("mean_gap_pos", "gap+", "{:+.1f}"),
    ("mean_gap_neg", "gap−", "{:+.1f}"),
    ("ece", "ECE", "{:.3f}"),
)


def table(results: Mapping[str, Mapping[str, Any]]) -> str:
    """A plain-text side-by-side table: one row per bot (``{name: result}``), the leaderboard columns;
    — for an undefined value."""
    head = ["bot", *(label for _, label, _ in COLUMNS)]
    body = [
        [name, *("—" if r["metrics"][k] is None else fmt.format(r["metrics"][k]) for k, _, fmt in COLUMNS)]
        for name, r in results.items()
    ]
    widths = [max(len(row[i]) for row in [head, *body]) for i in range(len(head))]
    lines = [
        "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))
        )
        for row in [head, *body]
    ]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)


# --- stored evaluations (the command and the Celery task) --------------------------------------


def build_guesser(spec: Mapping[str, Any], write: Callable[[str], None] = lambda line: None) -> Guesser:
    """The guesser of an evaluation ``spec``: ``guesser`` (``module:Name`` with ``options``, the SDK's
    loader) or ``bot`` (``ensemble`` | ``tfidf`` | ``wiki``, built as ``runbot --bot`` builds it from
    ``train``, ``extra_train`` (a list of files), ``max_year``, ``model_cache``, ``neural`` (the
    ensemble's checkpoint), ``threshold``, ``min_tokens``). Raises EvaluationError."""
    from django.core.management.base import CommandError, OutputWrapper
    from tossup_bot import GuesserLoadError, load_guesser

    from buzzer.management.commands.runbot import Command as RunBot

    if spec.get("guesser"):
        try:
            return load_guesser(spec["guesser"], {k: str(v) for k, v in (spec.get("options") or {}).items()})
        except GuesserLoadError as exc:
            raise EvaluationError(str(exc)) from exc

    class Lines:  # runbot's messages ("trained on …") go to ``write``
        def write(self, text: str) -> None:
            write(text.rstrip("\n"))

        def flush(self) -> None:
            pass

    runbot = RunBot(stdout=OutputWrapper(Lines()))  # type: ignore[arg-type]
    keys = ("train", "extra_train", "max_year", "model_cache", "neural", "threshold", "min_tokens")
    options = {"bot": spec.get("bot") or "tfidf", "option": [], "no_progress": True} | {
        k: spec.get(k) for k in keys
    }
    options["extra_train"] = options["extra_train"] or []
    if options["bot"] not in ("ensemble", "tfidf", "wiki"):
        raise EvaluationError(
            f"--bot {options['bot']}: evaluate ensemble, tfidf or wiki (recorded bots: --recorded)"
        )
    try:
        return runbot._built_in(options)
    except CommandError as exc:
        raise EvaluationError(str(exc)) from exc


def run_stored(
    evaluation_id: int, write: Callable[[str], None] = lambda line: None, progress: Progress | None = None
):
    """Run the stored evaluation ``evaluation_id`` (a ``irt.models.BotEvaluation``): mark it running,
    save its progress (0–1) as tossups are replayed, store the result and mark it done; on any error
    mark it failed with the message and re-raise. Returns the evaluation."""
    from django.utils import timezone

    from irt.models import BotEvaluation

    evaluation = BotEvaluation.objects.get(pk=evaluation_id)
    rows = BotEvaluation.objects.filter(pk=evaluation_id)
    rows.update(status=BotEvaluation.Status.RUNNING, progress=0.0, error="")
    spec = evaluation.spec
    saved = [0.0]

    def report(done: int, total: int) -> None:
        fraction = done / total
        if fraction - saved[0] >= 0.02 or done == total:  # a few dozen writes per evaluation
            saved[0] = fraction
            rows.update(progress=fraction)
        if progress is not None:
            progress(done, total)

    try:
        guesser = build_guesser(spec, write)
        tossups = load_tossups(spec["tossups"], spec.get("limit"))
        humans = human_buzz_points(
            spec.get("humans", "simulated"), tossups, players=spec.get("players", 8), seed=spec.get("seed", 1)
        )
        outcome = evaluate_guesser(guesser, tossups, humans, every=spec.get("every", 1), progress=report)
    except Exception as exc:
        rows.update(
            status=BotEvaluation.Status.FAILED,
            error=f"{type(exc).__name__}: {exc}",
            finished_at=timezone.now(),
        )
        raise
    rows.update(status=BotEvaluation.Status.DONE, progress=1.0, result=outcome, finished_at=timezone.now())
    evaluation.refresh_from_db()
    return evaluation


# --- the QANTA 2026 computer-side score (irt.qanta26) ------------------------------------------


def qanta26_score(
    runs: Sequence[TossupRun] = (),
    *,
    result: Mapping[str, Any] | None = None,
    every: int = 1,
    track: str = "open",
    size_bytes: int | None = None,
    scoring: str = "qanta26",
) -> dict[str, Any]:
    """The QANTA 2026 computer-side score (``irt.qanta26``: points, normalised, deflated by size) of one
    bot's tossups, as ``Qanta26Score.to_dict()``; no bonus is replayed, so it is the tossup share.

    From ``runs`` (each answer a decision point, its ``buzz`` the commit flag; the first answer is the
    first decision point) or, for a stored evaluation ``result`` of :func:`evaluate_guesser`, from its
    per-tossup ``outcomes`` (buzz token and correctness): :func:`replay` asks first after
    min(``every``, tokens) tokens, which is the first decision point. ``track``: 500mb | 6gb | open or a
    declared weight class; ``size_bytes``: the registered size (None: not deflated on a capped track).
    ``scoring``: a preset of ``scoring/presets/computer/``. Raises EvaluationError for an unknown
    preset or track, a size not under the track's cap, or every < 1."""
    from irt import qanta26

    if every < 1:
        raise EvaluationError(f"--every must be ≥ 1, got {every}")
    try:
        rules = qanta26.load_computer_scoring(scoring)
        chosen = qanta26.track_of(track)
        scores = [
            qanta26.tossup_points(
                [qanta26.Decision(a.token_index, a.buzz, a.correct) for a in run.answers],
                run.token_count,
                rules,
            )
            for run in runs
        ]
        for o in (result or {}).get("outcomes", []):
            n, token = o["token_count"], o["buzz_token"]
            first = min(every, n) - 1
            if token is None:
                scores.append(qanta26.TossupScore(0.0))
            else:
                scores.append(qanta26.commit_points(n, token, bool(o["buzz_correct"]), first, rules))
        return qanta26.total(scores, track=chosen, size_bytes=size_bytes, scoring=rules).to_dict()
    except ValueError as exc:
        raise EvaluationError(str(exc)) from exc
