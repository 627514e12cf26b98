"""The editor's side of the writing workshop (issue 32, item 3): submissions, reviews and packets.

A writer submits a draft (:func:`submit_draft`): its current text becomes a version of the draft's
``Submission`` with the workshop's prediction computed by the server (the caller passes what
``buzzer.bots.workshop.predict`` returned; this module never asks the bots). An editor (an organiser;
``frontend.access``) accepts it (:func:`accept`), edits it (:func:`edit`: a new version, the old kept)
or sends it back with a comment (:func:`send_back`; the writer resubmits). Accepted submissions become
a packet (:func:`assemble_packet`): a ``QuestionSet`` (``source`` :data:`SOURCE`), a ``Packet`` and one
``Tossup`` per submission, in the editor's order, as an import makes them, each with its writer
(``Tossup.writer``: the username) and linked back to its submission (``Submission.tossup``), so the
packet plays in matches and tournaments like an imported one.

Every refusal is a ``ServiceError`` (``invalid`` or ``not_found``) and changes nothing.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from django.db import transaction
from django.utils import timezone

from competition import game
from competition.errors import ServiceError
from competition.models import Draft, Packet, QuestionSet, Submission, SubmissionVersion, Tossup

#: ``QuestionSet.source`` of the sets editors assemble.
SOURCE = "workshop"
#: A packet assembled here holds at most this many tossups.
MAX_PACKET_TOSSUPS = 40


def _log(submission: Submission, by: Any, action: str, comment: str = "") -> None:
    submission.history = [
        *submission.history,
        {"at": timezone.now().isoformat(), "by": by.get_username(), "action": action, "comment": comment},
    ]


def _add_version(
    submission: Submission,
    kind: str,
    author: Any,
    text: str,
    answer_line: str,
    category: str,
    predictions: dict,
) -> SubmissionVersion:
    last = submission.versions.select_for_update().order_by("-number").first()
    return SubmissionVersion.objects.create(
        submission=submission,
        number=(last.number if last else 0) + 1,
        kind=kind,
        author=author,
        text=text,
        answer_line=answer_line,
        category=category,
        predictions=predictions,
    )


def current_version(submission: Submission) -> SubmissionVersion:
    """The submission's newest version (what an editor accepts and a packet plays)."""
    version = submission.versions.order_by("-number").first()
    assert version is not None, "a submission always has its first version"
    return version


def submit_draft(*, draft: Draft, writer: Any, predictions: dict[str, dict[str, Any]]) -> Submission:
    """Submit ``draft``'s current text, answer line and category with ``predictions`` (each bot's
    predicted buzz on that text, computed by the server) as a new version; a returned submission is
    submitted again. Raises ServiceError ``not_found`` when ``draft`` is not ``writer``'s, ``invalid``
    for an empty text or answer line, or a submission already accepted (it is the editors' now) or
    already submitted and unchanged."""
    if draft.writer_id != writer.pk:
        raise ServiceError("not_found", "no such draft of yours")
    if not draft.text.strip() or not draft.answer_line.strip():
        raise ServiceError("invalid", "a submission needs the tossup's text and its answer line")
    with transaction.atomic():
        submission, created = Submission.objects.select_for_update().get_or_create(
            draft=draft, defaults={"writer": writer}
        )
        if not created:
            if submission.status == Submission.Status.ACCEPTED:
                raise ServiceError("invalid", "this draft was accepted: the editors have it now")
            last = current_version(submission)
            same = (last.text, last.answer_line, last.category) == (
                draft.text,
                draft.answer_line,
                draft.category,
            )
            if submission.status == Submission.Status.SUBMITTED and same:
                raise ServiceError("invalid", "this draft is already submitted as it is")
        _add_version(
            submission,
            SubmissionVersion.Kind.SUBMITTED,
            writer,
            draft.text,
            draft.answer_line,
            draft.category,
            predictions,
        )
        submission.status = Submission.Status.SUBMITTED
        _log(submission, writer, "submitted" if created else "resubmitted")
        submission.save()
    return submission


def _reviewable(submission_id: int) -> Submission:
    submission = Submission.objects.select_for_update().filter(pk=submission_id).first()
    if submission is None:
        raise ServiceError("not_found", f"no submission {submission_id}")
    if submission.tossup_id is not None:
        raise ServiceError("invalid", "this question is in a packet already: it cannot change")
    return submission


def accept(*, submission_id: int, editor: Any) -> Submission:
    """Accept the submission's current version. ServiceError ``not_found``, or ``invalid`` when it
    is not waiting for review (returned to its writer, or accepted already)."""
    with transaction.atomic():
        submission = _reviewable(submission_id)
        if submission.status != Submission.Status.SUBMITTED:
            raise ServiceError(
                "invalid", f"only a submitted question can be accepted; this one is {submission.status}"
            )
        submission.status = Submission.Status.ACCEPTED
        _log(submission, editor, "accepted")
        submission.save()
    return submission


def edit(
    *,
    submission_id: int,
    editor: Any,
    text: str,
    answer_line: str,
    category: str,
    predictions: dict[str, dict[str, Any]],
    note: str = "",
) -> SubmissionVersion:
    """The editor's edit: a new version (``predictions`` computed by the server for the new text);
    the earlier versions stay. The status does not change. ServiceError ``not_found``, or ``invalid``
    for an empty text or answer line, no change, or a question already in a packet."""
    if not text.strip() or not answer_line.strip():
        raise ServiceError("invalid", "an edit needs the tossup's text and its answer line")
    with transaction.atomic():
        submission = _reviewable(submission_id)
        last = current_version(submission)
        if (last.text, last.answer_line, last.category) == (text, answer_line, category):
            raise ServiceError("invalid", "the edit changes nothing")
        version = _add_version(
            submission, SubmissionVersion.Kind.EDITED, editor, text, answer_line, category, predictions
        )
        _log(submission, editor, f"edited (version {version.number})", note)
        submission.save()
    return version


def send_back(*, submission_id: int, editor: Any, comment: str) -> Submission:
    """Return the submission to its writer with ``comment`` (shown to them; they may resubmit).
    ServiceError ``invalid`` for an empty comment or a question already in a packet."""
    comment = comment.strip()
    if not comment:
        raise ServiceError("invalid", "say what the writer should change: the comment is empty")
    with transaction.atomic():
        submission = _reviewable(submission_id)
        submission.status = Submission.Status.RETURNED
        submission.comment = comment
        _log(submission, editor, "sent back", comment)
        submission.save()
    return submission


def category_counts(submissions: list[Submission]) -> dict[str, int]:
    """Tossups per category (of their current versions; "" is "(none)"), most first."""
    counts = Counter(current_version(s).category or "(none)" for s in submissions)
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def assemble_packet(*, set_name: str, packet_name: str, submission_ids: list[int], editor: Any) -> Packet:
    """A packet of the accepted submissions ``submission_ids``, numbered in that order: the set
    ``set_name`` (made with ``source`` :data:`SOURCE` when new), a new packet ``packet_name`` in it,
    one tossup per submission (its current version's text, answer line and category; ``writer`` the
    writer's username; ``external_id`` ``workshop:<submission id>``), each submission linked to its
    tossup. All or nothing: ServiceError ``invalid`` for empty names, no or too many or repeated
    submissions, one not accepted or already in a packet or whose text a match cannot read (a
    malformed media marker), a set of another source, or a packet name the set has; ``not_found`` for an unknown submission id."""
    set_name, packet_name = set_name.strip(), packet_name.strip()
    if not set_name or not packet_name or len(set_name) > 200 or len(packet_name) > 200:
        raise ServiceError("invalid", "give the set and the packet a name (1–200 characters each)")
    if not submission_ids:
        raise ServiceError("invalid", "pick at least one accepted question for the packet")
    if len(submission_ids) > MAX_PACKET_TOSSUPS:
        raise ServiceError("invalid", f"a packet holds at most {MAX_PACKET_TOSSUPS} tossups")
    if len(set(submission_ids)) != len(submission_ids):
        raise ServiceError("invalid", "a question is picked twice")
    with transaction.atomic():
        found = {
            s.pk: s
            for s in Submission.objects.select_for_update()
            .filter(pk__in=submission_ids)
            .select_related("writer")
        }
        missing = [i for i in submission_ids if i not in found]
        if missing:
            raise ServiceError("not_found", f"no submissions {missing}")
        for i in submission_ids:
            s = found[i]
            if s.status != Submission.Status.ACCEPTED:
                raise ServiceError(
                    "invalid",
                    f"submission {i} is {s.status}, not accepted: only accepted questions go in a packet",
                )
            if s.tossup_id is not None:
                raise ServiceError("invalid", f"submission {i} is in a packet already")
            version = current_version(s)
            try:  # what a match will read: a malformed media marker is refused here, not at the match
                game.tokenize_tossup(0, version.text, version.answer_line, version.category)
            except ValueError as exc:
                raise ServiceError("invalid", f"submission {i}: {exc}") from exc
        qset, _ = QuestionSet.objects.get_or_create(
            name=set_name, defaults={"year": timezone.now().year, "source": SOURCE}
        )
        if qset.source != SOURCE:
            raise ServiceError(
                "invalid", f"the set {set_name!r} is an imported one ({qset.source}): name a new set"
            )
        if Packet.objects.filter(question_set=qset, name=packet_name).exists():
            raise ServiceError("invalid", f"the set {set_name!r} has a packet {packet_name!r} already")
        packet = Packet.objects.create(question_set=qset, name=packet_name)
        for number, i in enumerate(submission_ids, start=1):
            s = found[i]
            version = current_version(s)
            s.tossup = Tossup.objects.create(
                packet=packet,
                number=number,
                question=version.text,
                answer_line=version.answer_line,
                category=version.category,
                writer=s.writer.get_username(),
                external_id=f"workshop:{s.pk}",
            )
            _log(s, editor, f"put in packet {packet} as tossup {number}")
            s.save()
    return packet
