"""The writing workshop's pages and JSON API (issue 32, item 1; docs/OPERATIONS.md "Writers").

Writers (``competition.roles``: the ``writers`` group, and every organiser) write tossups as drafts;
the analysis itself is ``buzzer.bots.workshop`` (no Django), the bots ``buzzer.workshop``. A writer
opens only their own drafts: another's is 404 (its existence is not told). Pages:
``/workshop/`` (drafts, a new one), ``/workshop/draft/<id>/`` (the editor), ``/workshop/writers/``
(organisers invite writers). API (JSON, CSRF token on POSTs; errors ``{"code", "message"}``):

- ``POST /workshop/api/answer-line`` ``{"answer_line"}`` → ``{"errors": [str], "main": str}``;
- ``POST /workshop/api/drafts/<id>`` ``{"title"?, "answer_line"?, "category"?, "text"?}`` → the draft
  (autosave; 413 ``text_too_long`` over :data:`MAX_SAVED_CHARS` characters, nothing saved);
- ``POST /workshop/api/drafts/<id>/analyse`` ``{"text", "answer_line", "category", "llm"?}`` → the
  analysis (``buzzer.bots.workshop.analyse``) with ``problems`` (bots missing and why); 400
  ``bad_answer_line``, 413 ``text_too_long``. Without ``llm`` (or false): the built-in bots, which
  answer within 2 s, and ``llm``, the LLM endpoints enabled for writing (``[{"name", "label",
  "max_prefixes", "cost_per_prefix"}]``, nothing asked yet); 202 ``{"loading": true}`` while the bots
  load. With ``"llm": true``: only those endpoints, all at once (a few seconds: each request may take
  its endpoint's budget), each result with what that analysis cost (``llm``:
  ``buzzer.bots.workshop.LlmBot.report``); its ``target`` is theirs alone. The page asks the second
  after showing the first, so a slow or failing endpoint never holds up the built-in bots;
- ``GET|POST /workshop/api/drafts/<id>/versions``: the saved versions with each bot's buzz and its
  shift from the version before; POST saves the draft's current fields as a new version.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from buzzer import workshop as bots
from buzzer.bots import workshop
from buzzer.bots.answers import main_answer
from competition.errors import TossupError
from competition.models import Draft, DraftVersion
from competition.roles import WRITERS_GROUP, is_organiser, is_writer, organiser_required

#: A draft keeps up to this many characters of text (a 20,000-word paste fits; the analysis refuses it).
MAX_SAVED_CHARS = 300_000
CATEGORIES = (
    "Literature",
    "History",
    "Science",
    "Fine Arts",
    "Religion",
    "Mythology",
    "Philosophy",
    "Social Science",
    "Geography",
    "Current Events",
    "Other Academic",
    "Trash",
)
_FIELDS = ("title", "answer_line", "category", "text")


def api_error(error: TossupError, status: int = 400) -> JsonResponse:
    """The API's one error shape (as ``frontend.errors.api_error``): ``{"code", "message"}``."""
    return JsonResponse(error.to_dict(), status=status)


def _writer_page(request: HttpRequest) -> HttpResponse | None:
    if not request.user.is_authenticated:
        from django.contrib.auth.views import redirect_to_login

        return redirect_to_login(request.get_full_path())
    return None


def _draft(request: HttpRequest, pk: int) -> Draft:
    """The request's writer's draft ``pk``; 404 for another writer's or none."""
    draft = (
        Draft.objects.filter(pk=pk, writer_id=request.user.pk).first() if is_writer(request.user) else None
    )
    if draft is None:
        raise Http404("no such draft of yours")
    return draft


def _body(request: HttpRequest) -> dict[str, Any] | JsonResponse:
    try:
        body = json.loads(request.body or b"{}")
    except ValueError:
        return api_error(TossupError("bad_json", "the request body is not JSON"))
    if not isinstance(body, dict) or not all(isinstance(body.get(k, ""), str) for k in _FIELDS):
        return api_error(
            TossupError("bad_request", f"expected a JSON object with text fields {list(_FIELDS)}")
        )
    return body


def _api_writer(request: HttpRequest) -> JsonResponse | None:
    if not is_writer(request.user):
        return api_error(TossupError("forbidden", "needs a writer's login"), status=403)
    return None


def _draft_json(draft: Draft) -> dict[str, Any]:
    return {
        "id": draft.pk,
        **{k: getattr(draft, k) for k in _FIELDS},
        "updated_at": draft.updated_at.isoformat(),
    }


@require_http_methods(["GET", "POST"])
def workshop_home(request: HttpRequest) -> HttpResponse:
    """The writer's drafts and "New draft" (POST: creates one and opens it)."""
    if (login := _writer_page(request)) is not None:
        return login
    if request.method == "POST":
        draft = Draft.objects.create(writer=request.user, title=request.POST.get("title", "")[:200].strip())
        return redirect("workshop:draft", pk=draft.pk)
    drafts = Draft.objects.filter(writer=request.user)
    return render(
        request,
        "workshop/workshop.html",
        {"drafts": drafts, "organiser": is_organiser(request.user)},
    )


@require_GET
def workshop_draft(request: HttpRequest, pk: int) -> HttpResponse:
    """The editor of one of the writer's drafts (404 for another writer's)."""
    if (login := _writer_page(request)) is not None:
        return login
    draft = _draft(request, pk)
    bots.bots_now()  # start loading the bots while the page loads
    return render(
        request,
        "workshop/workshop_draft.html",
        {"draft": draft, "categories": CATEGORIES, "max_words": workshop.MAX_WORDS},
    )


@organiser_required
@require_http_methods(["GET", "POST"])
def workshop_writers(request: HttpRequest) -> HttpResponse:
    """Organisers invite writers: a username makes a writer-only account (in ``writers``) with a
    generated password, shown once to pass on."""
    created, error = None, ""
    if request.method == "POST":
        username = request.POST.get("username", "").strip()
        User = get_user_model()
        if not username or len(username) > 150:
            error = "Give a username of 1–150 characters."
        elif User.objects.filter(username=username).exists():
            error = f"The username {username!r} is taken."
        else:
            password = secrets.token_urlsafe(12)
            with transaction.atomic():
                user = User.objects.create_user(username, password=password)
                user.groups.add(Group.objects.get_or_create(name=WRITERS_GROUP)[0])
            created = {"username": username, "password": password}
    writers = get_user_model().objects.filter(groups__name=WRITERS_GROUP).order_by("username")
    return render(
        request,
        "workshop/workshop_writers.html",
        {"writers": writers, "created": created, "error": error},
        status=400 if error else 200,
    )


@require_POST
def api_answer_line(request: HttpRequest) -> JsonResponse:
    """Validate an answer line as the writer types (``workshop.answer_line_errors``)."""
    if (denied := _api_writer(request)) is not None:
        return denied
    body = _body(request)
    if isinstance(body, JsonResponse):
        return body
    line = body.get("answer_line", "")
    return JsonResponse({"errors": workshop.answer_line_errors(line), "main": main_answer(line)})


@require_POST
def api_draft_save(request: HttpRequest, pk: int) -> JsonResponse:
    """Autosave: the given fields of the draft. 413 over :data:`MAX_SAVED_CHARS` (nothing saved)."""
    if (denied := _api_writer(request)) is not None:
        return denied
    draft = _draft(request, pk)
    body = _body(request)
    if isinstance(body, JsonResponse):
        return body
    if len(body.get("text", "")) > MAX_SAVED_CHARS:
        return api_error(
            TossupError(
                "text_too_long",
                f"a draft keeps up to {MAX_SAVED_CHARS:,} characters; this text has {len(body['text']):,} "
                "(not saved: it stays in this browser — shorten it)",
            ),
            status=413,
        )
    for key in _FIELDS:
        if key in body:
            setattr(
                draft,
                key,
                body[key][:200] if key == "title" else body[key][:50] if key == "category" else body[key],
            )
    draft.save()
    return JsonResponse(_draft_json(draft))


@require_POST
def api_draft_analyse(request: HttpRequest, pk: int) -> JsonResponse:
    """The built-in bots' analysis of the posted text (``buzzer.bots.workshop.analyse``; 202 while they
    load), or with ``"llm": true`` the enabled LLM endpoints' (see the module docstring)."""
    if (denied := _api_writer(request)) is not None:
        return denied
    _draft(request, pk)
    body = _body(request)
    if isinstance(body, JsonResponse):
        return body
    if not isinstance(body.get("llm", False), bool):
        return api_error(TossupError("bad_request", "llm must be true or false"))
    llms, llm_problems = bots.llm_bots()
    if body.get("llm"):
        return _analysis(llms, body, llm_problems, at_once=True)
    loaded = bots.bots_now()
    if loaded is None:
        return JsonResponse(
            {"loading": True, "message": "the bots are loading (the first time takes a minute)"}, status=202
        )
    enabled = [
        {
            "name": b.name,
            "label": b.label,
            "max_prefixes": b.max_prefixes,
            "cost_per_prefix": b.cost_per_prefix,
        }
        for b in llms
    ]
    return _analysis(loaded[0], body, loaded[1] + llm_problems, llm=enabled)


def _analysis(
    found: Sequence[workshop.WorkshopBot],
    body: dict[str, Any],
    problems: list[str],
    at_once: bool = False,
    **extra: Any,
) -> JsonResponse:
    try:
        analysis = workshop.analyse(
            found,
            body.get("text", ""),
            body.get("answer_line", ""),
            body.get("category", ""),
            at_once=at_once,
        )
    except workshop.WorkshopError as exc:
        return api_error(
            TossupError(exc.code, exc.message), status=413 if exc.code == "text_too_long" else 400
        )
    return JsonResponse({**analysis, "problems": problems, **extra})


def _versions_json(draft: Draft) -> list[dict[str, Any]]:
    out, previous = [], None
    for v in draft.versions.all():
        out.append(
            {
                "number": v.number,
                "created_at": v.created_at.isoformat(),
                "words": len(workshop.display_words(v.text)),
                "predictions": v.predictions,
                "shift": workshop.buzz_shift(previous.predictions, v.predictions) if previous else {},
            }
        )
        previous = v
    return out


@require_http_methods(["GET", "POST"])
def api_draft_versions(request: HttpRequest, pk: int) -> JsonResponse:
    """The saved versions (GET); POST saves the draft's current fields as the next version, with each
    bot's predicted buzz (``buzzer.workshop.predict``: the LLM endpoints enabled for writing too) (400
    ``bad_answer_line``, 413 ``text_too_long``, 503 while the bots load)."""
    if (denied := _api_writer(request)) is not None:
        return denied
    draft = _draft(request, pk)
    if request.method == "POST":
        loaded = bots.bots_now()
        if loaded is None:
            return api_error(
                TossupError("loading", "the bots are still loading: try again in a moment"), status=503
            )
        try:
            predictions = bots.predict(draft.text, draft.answer_line, draft.category, loaded[0])
        except workshop.WorkshopError as exc:
            return api_error(
                TossupError(exc.code, exc.message), status=413 if exc.code == "text_too_long" else 400
            )
        with transaction.atomic():
            last = draft.versions.select_for_update().order_by("-number").first()
            DraftVersion.objects.create(
                draft=draft,
                number=(last.number if last else 0) + 1,
                answer_line=draft.answer_line,
                category=draft.category,
                text=draft.text,
                predictions=predictions,
            )
    return JsonResponse({"versions": _versions_json(draft)}, status=201 if request.method == "POST" else 200)
