"""The editor's desk and the writer's way to it (issue 32, items 3 and 4; docs/OPERATIONS.md "Editors").

Writers (``frontend.access.is_writer``) submit their own drafts and see what became of them; editors
(organisers, ``is_organiser``: never a writer-only account) review, edit, send back and assemble
packets (``competition.editorial``). The workshop's prediction kept with each version is computed
here on the server with ``buzzer.workshop.predict``, never taken from the client. Pages (forms,
CSRF token; a refusal re-renders the page with the message and status 400, nothing changed). A
submit or an edit waits for the bots the first time the server loads them:

- ``GET /workshop/submissions/``: the writer's drafts, each with its submission's status, the
  editor's comment and "Submit to the editor" / "Resubmit";
- ``POST /workshop/draft/<id>/submit/``: submit the draft as it is saved (404: not the writer's own);
- ``GET /workshop/results/``: after play, the questions' predicted vs live buzzes, ADVSCORE and flags
  (``buzzer.writer_results``): a writer sees their own, an editor everyone's (``?writer=<name>``: one);
- ``GET /editor/``: the queue; ``GET|POST /editor/submission/<id>/``: review one (``action`` accept |
  edit | send_back); ``GET|POST /editor/packets/``: assemble a packet of accepted questions
  (writer-only accounts: 403).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.views import redirect_to_login
from django.db.models import Count
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from buzzer import workshop, writer_results
from buzzer.workshop_views import CATEGORIES
from competition import editorial
from competition.errors import ServiceError
from competition.game.specs import strip_marks
from competition.models import Draft, Packet, Submission
from competition.roles import is_organiser, is_writer, organiser_required


def _login(request: HttpRequest) -> HttpResponse | None:
    return None if is_writer(request.user) else redirect_to_login(request.get_full_path())


def _words(text: str) -> list[str]:
    """The words a match reads of ``text`` (power marks removed), as the predictions count them."""
    return [t for t in strip_marks(text.split())[0] if isinstance(t, str)]


def _predict(text: str, answer_line: str, category: str) -> dict[str, dict[str, Any]]:
    """Each workshop bot's predicted buzz on the text (``buzzer.workshop.predict``; loads the bots
    the first time); raises ServiceError ``invalid`` for an answer line the judge cannot read or an
    overlong text (the ``WorkshopError`` that ``predict`` raises)."""
    try:
        return workshop.predict(text, answer_line, category)
    except workshop.workshop.WorkshopError as exc:
        raise ServiceError("invalid", exc.message) from exc


def _version_rows(submission: Submission) -> list[dict[str, Any]]:
    """The versions, newest first, with their predictions sorted by bot and the word count."""
    return [
        {
            "version": v,
            "words": len(_words(v.text)),
            "predictions": [{"bot": bot, **p} for bot, p in sorted(v.predictions.items())],
        }
        for v in submission.versions.select_related("author").order_by("-number")
    ]


# --- the writer ---------------------------------------------------------------------------------


def _submissions_page(request: HttpRequest, error: str = "", status: int = 200) -> HttpResponse:
    drafts = Draft.objects.filter(writer=request.user).select_related("submission")
    rows = []
    for d in drafts:
        s = getattr(d, "submission", None)
        rows.append({"draft": d, "submission": s, "versions": _version_rows(s)[:1] if s else []})
    return render(
        request,
        "workshop/writer_submissions.html",
        {"rows": rows, "error": error, "organiser": is_organiser(request.user)},
        status=status,
    )


@require_GET
def writer_submissions(request: HttpRequest) -> HttpResponse:
    """The writer's drafts and what the editors did with them."""
    if (login := _login(request)) is not None:
        return login
    return _submissions_page(request)


@require_POST
def submit_draft(request: HttpRequest, pk: int) -> HttpResponse:
    """Submit the writer's draft ``pk`` as saved, with the server's prediction (404: not theirs)."""
    if (login := _login(request)) is not None:
        return login
    draft = Draft.objects.filter(pk=pk, writer_id=request.user.pk).first()
    if draft is None:
        raise Http404("no such draft of yours")
    try:
        if not draft.text.strip() or not draft.answer_line.strip():
            raise ServiceError("invalid", "a submission needs the tossup's text and its answer line")
        predictions = _predict(draft.text, draft.answer_line, draft.category)
        editorial.submit_draft(draft=draft, writer=request.user, predictions=predictions)
    except ServiceError as exc:
        return _submissions_page(request, f"{draft.title or 'Untitled draft'}: {exc.message}", status=400)
    return redirect(reverse("workshop:submissions") + f"?submitted={draft.pk}")


@require_GET
def results_page(request: HttpRequest) -> HttpResponse:
    """Predicted vs live buzzes, ADVSCORE and flags of the writer's questions (an editor's: all)."""
    if (login := _login(request)) is not None:
        return login
    organiser = is_organiser(request.user)
    chosen = request.GET.get("writer", "").strip() if organiser else ""
    if not organiser:
        writer_ids: list[int] | None = [request.user.pk]
    elif chosen:
        writer_ids = list(get_user_model().objects.filter(username=chosen).values_list("pk", flat=True))
    else:
        writer_ids = None
    context = writer_results.results(writer_ids)
    return render(
        request, "workshop/writer_results.html", {**context, "organiser": organiser, "chosen": chosen}
    )


# --- the editor ---------------------------------------------------------------------------------


@organiser_required
@require_GET
def editor_home(request: HttpRequest) -> HttpResponse:
    """The queue: submitted questions waiting for review, then returned, accepted, in packets."""
    subs = list(Submission.objects.select_related("writer", "draft", "tossup__packet").order_by("updated_at"))
    groups = [
        ("Waiting for review", [s for s in subs if s.status == Submission.Status.SUBMITTED]),
        (
            "Accepted, not in a packet",
            [s for s in subs if s.status == Submission.Status.ACCEPTED and not s.tossup],
        ),
        ("Sent back to the writer", [s for s in subs if s.status == Submission.Status.RETURNED]),
        ("In packets", [s for s in subs if s.tossup]),
    ]
    rows = [(title, [{"s": s, "v": editorial.current_version(s)} for s in group]) for title, group in groups]
    return render(request, "workshop/editor.html", {"groups": rows})


@organiser_required
@require_http_methods(["GET", "POST"])
def editor_review(request: HttpRequest, pk: int) -> HttpResponse:
    """One submission: its current version and prediction, every version, the history; POST
    ``action`` accept, edit (``text``, ``answer_line``, ``category``, ``note``) or send_back
    (``comment``)."""
    submission = get_object_or_404(Submission.objects.select_related("writer", "tossup__packet"), pk=pk)
    error, status = "", 200
    if request.method == "POST":
        action = request.POST.get("action", "")
        try:
            if action == "accept":
                editorial.accept(submission_id=pk, editor=request.user)
            elif action == "edit":
                text, line = request.POST.get("text", ""), request.POST.get("answer_line", "")
                category = request.POST.get("category", "")[:50]
                if not text.strip() or not line.strip():
                    raise ServiceError("invalid", "an edit needs the tossup's text and its answer line")
                editorial.edit(
                    submission_id=pk,
                    editor=request.user,
                    text=text,
                    answer_line=line,
                    category=category,
                    predictions=_predict(text, line, category),
                    note=request.POST.get("note", "")[:500],
                )
            elif action == "send_back":
                editorial.send_back(
                    submission_id=pk, editor=request.user, comment=request.POST.get("comment", "")
                )
            else:
                raise ServiceError("invalid", f"unknown action {action!r}: accept, edit or send_back")
        except ServiceError as exc:
            error, status = exc.message, 400
        else:
            return redirect("editor:review", pk=pk)
        submission.refresh_from_db()
    versions = _version_rows(submission)
    current = versions[0]["version"]
    return render(
        request,
        "workshop/editor_review.html",
        {
            "s": submission,
            "current": current,
            "current_words": _words(current.text),
            "current_predictions": versions[0]["predictions"],
            "versions": versions,
            "categories": CATEGORIES,
            "error": error,
            "post": request.POST if status != 200 else {},
        },
        status=status,
    )


def packets_made():
    """The packets editors assembled, with their tossup count (``n_tossups``)."""
    return (
        Packet.objects.filter(question_set__source=editorial.SOURCE)
        .select_related("question_set")
        .annotate(n_tossups=Count("tossups"))
    )


@organiser_required
@require_http_methods(["GET", "POST"])
def editor_packets(request: HttpRequest) -> HttpResponse:
    """Assemble a packet: tick accepted questions, number their order (blank: list order), name the
    set and packet; the category balance of the pool and of the ticked ones is shown. POST creates
    it (``competition.editorial.assemble_packet``; all or nothing)."""
    error, status = "", 200
    if request.method == "POST":
        try:
            picked = [int(x) for x in request.POST.getlist("pick")]
            order = {i: request.POST.get(f"order_{i}", "").strip() for i in picked}
            bad = [i for i, o in order.items() if o and not o.isdigit()]
            if bad:
                raise ServiceError("invalid", "an order is a whole number (or blank)")
            position = {i: n for n, i in enumerate(picked)}
            picked.sort(key=lambda i: (int(order[i]) if order[i] else 10**6, position[i]))
            packet = editorial.assemble_packet(
                set_name=request.POST.get("set_name", ""),
                packet_name=request.POST.get("packet_name", ""),
                submission_ids=picked,
                editor=request.user,
            )
        except ValueError:
            error, status = "a picked question id is not a number", 400
        except ServiceError as exc:
            error, status = exc.message, 400
        else:
            return redirect(reverse("editor:packets") + f"?created={packet.pk}")
    created_id = request.GET.get("created", "")
    created = packets_made().filter(pk=int(created_id)).first() if created_id.isdigit() else None
    pool = list(
        Submission.objects.filter(status=Submission.Status.ACCEPTED, tossup__isnull=True)
        .select_related("writer")
        .order_by("submitted_at")
    )
    rows = [{"s": s, "v": editorial.current_version(s)} for s in pool]
    picked_ids = {int(x) for x in request.POST.getlist("pick") if x.isdigit()} if status == 400 else set()
    picked_counts = editorial.category_counts([s for s in pool if s.pk in picked_ids])
    return render(
        request,
        "workshop/editor_packets.html",
        {
            "rows": rows,
            "balance": [
                (cat, picked_counts.get(cat, 0), n) for cat, n in editorial.category_counts(pool).items()
            ],
            "picked_ids": picked_ids,
            "packets": packets_made().order_by("-id"),
            "created": created,
            "error": error,
            "post": request.POST if status == 400 else {},
            "max_tossups": editorial.MAX_PACKET_TOSSUPS,
        },
        status=status,
    )
