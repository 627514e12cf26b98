"""The distractor probe on the web (issue 32, item 2): the workshop's endpoint, which probes one
writer's tossup with every built-in bot, and the analysis page of the stored ``manage.py probe_bot``
reports.

``POST /workshop/api/probe`` (logged-in users; CSRF token as every POST) — JSON in
``{"text", "answer_line", "category", "bot"?}``; out ``{"probes": [{"position", "sentence", "bot",
"buzz_index", "answer", "correct", "fooled", "original_buzz_index", "original_correct"}], "skipped":
[{"bot", "reason"}]}``: per built-in bot (``bot`` absent or null: every one that is trained here;
``buzzer.bots.builtin``, reached through the SDK's loader) and per position of ``irt.probe.POSITIONS``,
the distractor ``sentence`` (one per tossup: a clue of another tossup of the category, from the
public question dump — never from this server's questions, which players may not have heard yet),
the 0-based token at which the bot buzzes on the probed text (None: never), its answer there (or at
the end), whether the caller's answer line accepts it, whether the distractor's own answer line does
(``fooled``; that answer itself is never sent), and the same buzz on the text without the distractor.
The bot is asked every ⌈n / 60⌉ tokens and on the last. Errors (``{"code", "message"}``): 403
``forbidden`` without a login, 400 ``bad_json``, ``bad_field``, ``bad_answer_line`` (the judge finds
no answer in it), ``too_long`` (over 5,000 words), ``unknown_bot``; 503 ``no_bot`` (none trained here)
and ``no_donors`` (no public question dump); a category with no donor gives ``probes: []`` and a
``note``.

``GET /analysis/probe/``: the latest stored report of every bot (``irt.probe_results``).
"""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET, require_POST
from tossup_bot import Guess, Guesser, GuesserLoadError, TossupPrefix, load_guesser

from competition.errors import TossupError
from competition.game.specs import strip_marks
from competition.vocabulary import Verdict
from formats import FormatError
from formats.qbreader import iter_items
from frontend.errors import api_error
from irt import probe_results
from irt.probe import POSITIONS, DistractorPool, probed
from scoring.judge import judge, parse_answer_line

MAX_WORDS = 5000
#: What the web process may load (``buzzer.bots.builtin.BUILT_IN``; named here, not imported: the
#: layers keep frontend from buzzer, and the SDK's loader is how a server names its guessers).
BUILT_IN = ("ensemble", "tfidf", "neural", "wiki")
LOADER = "buzzer.bots.builtin:cached"
MAX_PREFIXES = 60
QBREADER = Path("packets") / "qbreader_packets_2012_2022.jsonl.gz"
DONOR_YEARS = (2021, 2022)  # the years no built-in bot trained on


@functools.cache
def donor_pool() -> DistractorPool:
    """The donors of the workshop's distractors: the public dump's 2021–22 tossups, read once per
    process (about 15 s). Raises FormatError when the dump is missing or unreadable."""
    path = Path(settings.SHARED_DATA_DIR) / QBREADER
    if not path.is_file():
        raise FormatError(f"no public question dump at {path}")
    low, high = DONOR_YEARS
    return DistractorPool.build(
        (
            f"qbreader:{i.get('set')}:{i.get('packet')}:{i.get('number')}",
            str(i.get("question") or ""),
            str(i.get("answer") or ""),
            str(i.get("category") or ""),
        )
        for i in iter_items(path, kind="tossup", min_year=low, max_year=high)
    )


def _bad(code: str, message: str, status: int = 400) -> JsonResponse:
    return api_error(TossupError(code, message), status)


def _buzz(guesser: Guesser, question: str, answer_line: str, category: str) -> tuple[int | None, str]:
    """``(first buzz token or None, the answer there or at the end)`` of ``guesser`` on ``question``."""
    tokens = tuple(strip_marks(question.split())[0])
    n = len(tokens)
    step = max(1, math.ceil(n / MAX_PREFIXES))
    guesser.begin_tossup({"index": 0, "question_id": "workshop", "token_count": n, "category": category})
    answer = ""
    for seen in sorted({*range(step, n + 1, step), n}):
        try:
            guess = guesser.guess_tossup(TossupPrefix("workshop", 0, tokens[:seen], n, category))
        except Exception:  # a bot that fails on one prefix answers nothing there
            guess = Guess("", 0.0)
        answer = guess.guess
        if guess.buzz:
            return seen - 1, answer
    return None, answer


def _accepted(answer_line: str, guess: str, token: int | None, question: str) -> bool:
    if not guess:
        return False
    n = len(strip_marks(question.split())[0])
    verdict = judge(answer_line, guess, token_index=token, token_count=n, question=question).verdict
    return verdict == Verdict.ACCEPT


def _input(request: HttpRequest) -> dict[str, Any] | JsonResponse:
    """The request's checked fields, or the 400 saying what is wrong."""
    try:
        data = json.loads(request.body or b"")
    except (ValueError, UnicodeDecodeError):
        return _bad("bad_json", "the body must be a JSON object")
    if not isinstance(data, dict):
        return _bad("bad_json", "the body must be a JSON object")
    for key in ("text", "answer_line", "category"):
        if not isinstance(data.get(key), str):
            return _bad("bad_field", f"{key} must be a string")
    text, line, category = data["text"].strip(), data["answer_line"].strip(), data["category"].strip()
    bot = data.get("bot")
    if not text:
        return _bad("bad_field", "text is empty")
    words = len(text.split())
    if words > MAX_WORDS:
        return _bad("too_long", f"the text has {words:,} words; a tossup may have at most {MAX_WORDS:,}")
    parsed = parse_answer_line(line)
    if not line or not parsed.clauses[0].answers:
        return _bad("bad_answer_line", "the answer line has no answer the judge can read")
    if bot is not None and bot not in BUILT_IN:
        return _bad("unknown_bot", f"bot must be one of {', '.join(BUILT_IN)} (or left out for all)")
    return {"text": text, "answer_line": line, "category": category, "bots": [bot] if bot else list(BUILT_IN)}


@require_POST
def api_probe(request: HttpRequest) -> JsonResponse:
    """``POST /workshop/api/probe``: see the module docstring."""
    if not request.user.is_authenticated:
        return _bad("forbidden", "log in to probe the bots", 403)
    checked = _input(request)
    if isinstance(checked, JsonResponse):
        return checked
    text, line, category = checked["text"], checked["answer_line"], checked["category"]
    guessers: dict[str, Guesser] = {}
    skipped = []
    for bot in checked["bots"]:
        try:
            guessers[bot] = load_guesser(LOADER, {"bot": bot})
        except (GuesserLoadError, LookupError) as exc:
            skipped.append({"bot": bot, "reason": str(exc)})
    if not guessers:
        return _bad("no_bot", "no built-in bot is trained on this server: " + "; ".join(
            s["reason"] for s in skipped), 503)  # fmt: skip
    try:
        pool = donor_pool()
    except FormatError as exc:
        return _bad("no_donors", f"no distractor source: {exc}", 503)
    distractor = pool.distractor("workshop", text, line, category, seed=0)
    if distractor is None:
        return JsonResponse(
            {"probes": [], "skipped": skipped, "note": f"no distractor for the category {category!r}"}
        )
    results = []
    for bot, guesser in guessers.items():
        original, original_answer = _buzz(guesser, text, line, category)
        original_correct = _accepted(line, original_answer, original, text)
        for position in POSITIONS:
            question = probed(text, distractor.sentence, position).question
            token, answer = _buzz(guesser, question, line, category)
            results.append(
                {
                    "position": position,
                    "sentence": distractor.sentence,
                    "bot": bot,
                    "buzz_index": token,
                    "answer": answer,
                    "correct": _accepted(line, answer, token, question),
                    "fooled": bool(answer)
                    and judge(distractor.donor_answer_line, answer).verdict == Verdict.ACCEPT,
                    "original_buzz_index": original,
                    "original_correct": original_correct,
                }
            )
    return JsonResponse({"probes": results, "skipped": skipped})


def _cell(
    value: float | None, fmt: str, scale: float = 1.0, paired: dict[str, Any] | None = None
) -> dict[str, Any]:
    """One figure for the page: ``text``, and for a probed row ``diff`` and ``ci`` (probed −
    original and its 95 % interval, same unit: points for shares) and ``significant`` (the interval
    excludes 0)."""
    cell: dict[str, Any] = {"text": "—" if value is None else format(value * scale, fmt)}
    if paired is not None and paired.get("difference") is not None:
        d, lo, hi = paired["difference"], paired.get("low"), paired.get("high")
        cell["diff"] = format(d * scale, "+" + fmt.lstrip("+"))
        if lo is not None and hi is not None:
            cell["ci"] = f"{lo * scale:+.{fmt[-2]}f} to {hi * scale:+.{fmt[-2]}f}"
            cell["significant"] = lo > 0 or hi < 0
    return cell


def _rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The page's rows of one report: the original, then each probed position with its differences
    (accuracy, precision, frequency in %, scores per tossup, shift in original words)."""
    o = report["original"]
    rows = [
        {
            "variant": "original",
            "cells": [
                *(_cell(a, ".1f", 100) for a in o["accuracy"]),
                _cell(o["expected_score"], "+.3f"),
                _cell(o["qanta26"], ".3f"),
                _cell(o["buzz_precision"], ".1f", 100),
                _cell(o["buzz_frequency"], ".1f", 100),
                _cell(o.get("mean_buzz_position"), ".1f"),
                {"text": ""},
            ],
        }
    ]
    for name, p in report["probes"].items():
        shift = p["buzz_shift"]
        rows.append(
            {
                "variant": name.replace("_", " "),
                "cells": [
                    *(_cell(a["probed"], ".1f", 100, a) for a in p["accuracy"]),
                    _cell(p["expected_score"]["probed"], "+.3f", 1, p["expected_score"]),
                    _cell(p["qanta26"]["probed"], ".3f", 1, p["qanta26"]),
                    _cell(p["buzz_precision"]["probed"], ".1f", 100, p["buzz_precision"]),
                    _cell(p["buzz_frequency"]["probed"], ".1f", 100, p["buzz_frequency"]),
                    {**_cell(shift["difference"], "+.1f", 1, shift), "text": f"n = {shift['both']}"},
                    {"text": f"{p['fooled']:.1%} / {p['final_fooled']:.1%}"},
                ],
            }
        )
    return rows


@require_GET
def probe_page(request: HttpRequest) -> HttpResponse:
    """``/analysis/probe/``: each bot's latest distractor probe (``manage.py probe_bot``)."""
    reports = [{"report": r, "rows": _rows(r)} for r in probe_results.latest()]
    return render(request, "frontend/probe.html", {"reports": reports})
