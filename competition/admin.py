"""The organisers' admin (``/admin/``): questions are edited freely and imported/exported in bulk
(django-import-export: CSV, JSON, …); matches, their event and buzz logs and the outbox are read-only
records (a match changes only through ``competition.services``), so a match can be looked at or
deleted, never edited into a state the engine did not produce.

Bulk question files key each row on (set, packet, number), as ``competition.importers`` does: a set
or packet named in the file is created when missing; a row whose (set, packet, number) exists
updates that question in place (its id stays, so buzz logs keep pointing at it). A file with any bad
row imports nothing (the library's dry run, then one transaction). Packet files in the tournament
formats (qbreader, QANTA, exhibition CSV, demo packet) go through the organisers' upload page
(``frontend.pages.upload``), which runs the same code as ``manage.py import_questions``.
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib import admin, messages
from django.db.models import Count, Model, QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from import_export import fields, resources, widgets
from import_export.admin import ImportExportModelAdmin

from competition import (
    game,
    identity_admin,  # noqa: F401  (registers Competitor: merge, split, reset)
    services,
)
from competition.models import (
    Bonus,
    BonusPartResult,
    Buzz,
    DeskEntry,
    Flag,
    Match,
    MatchEvent,
    MediaFile,
    Outbox,
    Packet,
    Player,
    QuestionSet,
    Submission,
    Team,
    Tossup,
    Tournament,
    TournamentRoom,
)

#: ``QuestionSet.source`` of a set first named by an admin import.
ADMIN_SOURCE = "admin"


class ReadOnlyAdmin(admin.ModelAdmin):
    """A durable record: listed and shown, never added, edited or deleted through the admin."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


def pretty_json(value: Any) -> str:
    """``value`` as indented JSON in a ``<pre>`` (escaped)."""
    return format_html("<pre>{}</pre>", json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True))


def changelist_link(model: type[Model], label: str, **filters: Any) -> str:
    """A link to ``model``'s admin list narrowed by ``filters`` (``field__exact=value``)."""
    url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
    query = "&".join(f"{k}={v}" for k, v in filters.items())
    return format_html('<a href="{}?{}">{}</a>', url, query, label)


# ---------------------------------------------------------------- bulk question files


class PacketWidget(widgets.ForeignKeyWidget):
    """The ``packet`` column: a packet name within the row's ``set``; both are created when missing.
    Raises ValueError (the row's error) when either is empty."""

    def __init__(self) -> None:
        super().__init__(Packet, field="name")

    def clean(self, value: Any, row: Any = None, **kwargs: Any) -> Packet:
        set_name = str((row or {}).get("set") or "").strip()
        name = str(value or "").strip()
        if not set_name or not name:
            raise ValueError("every row needs a 'set' and a 'packet' name")
        question_set, _ = QuestionSet.objects.get_or_create(name=set_name, defaults={"source": ADMIN_SOURCE})
        return Packet.objects.get_or_create(question_set=question_set, name=name)[0]


class BonusPartsWidget(widgets.JSONWidget):
    """The ``parts`` column: a JSON list of ``{"text", "answer_line", "value"}`` (value in points).
    Raises ValueError naming what is wrong."""

    def clean(self, value: Any, row: Any = None, **kwargs: Any) -> list[dict[str, Any]]:
        try:
            parts = json.loads(value) if isinstance(value, str) else value
        except json.JSONDecodeError as exc:
            raise ValueError(f"'parts' is not JSON: {exc.msg} (column {exc.colno})") from None
        if not isinstance(parts, list) or not parts:
            raise ValueError('\'parts\' must be a non-empty JSON list of {"text", "answer_line", "value"}')
        for i, part in enumerate(parts, 1):
            if not isinstance(part, dict) or {"text", "answer_line", "value"} - part.keys():
                raise ValueError(f"part {i} needs 'text', 'answer_line' and 'value'")
            if not isinstance(part["value"], int) or not str(part["answer_line"]).strip():
                raise ValueError(f"part {i}: 'value' must be an integer and 'answer_line' non-empty")
        return parts


class QuestionResource(resources.ModelResource):
    """Columns shared by tossups and bonuses: ``set`` and ``packet`` by name, then the question's own."""

    set = fields.Field(attribute="packet__question_set__name", column_name="set", readonly=True)
    packet = fields.Field(attribute="packet", column_name="packet", widget=PacketWidget())


class TossupResource(QuestionResource):
    class Meta:
        model = Tossup
        fields = (
            "set",
            "packet",
            "number",
            "question",
            "answer_line",
            "category",
            "subcategory",
            "writer",
            "external_id",
        )
        import_id_fields = ("packet", "number")
        clean_model_instances = True  # empty question or answer line: the row's error
        skip_unchanged = True
        use_transactions = True


class BonusResource(QuestionResource):
    parts = fields.Field(attribute="parts", column_name="parts", widget=BonusPartsWidget())

    class Meta:
        model = Bonus
        fields = (
            "set",
            "packet",
            "number",
            "leadin",
            "parts",
            "category",
            "subcategory",
            "writer",
            "external_id",
        )
        import_id_fields = ("packet", "number")
        clean_model_instances = True
        skip_unchanged = True
        use_transactions = True


# ---------------------------------------------------------------- questions


@admin.register(QuestionSet)
class QuestionSetAdmin(admin.ModelAdmin):
    list_display = ("name", "year", "source", "packet_count")
    list_filter = ("source", "year")
    search_fields = ("name",)

    def get_queryset(self, request: HttpRequest) -> QuerySet[QuestionSet]:
        return super().get_queryset(request).annotate(n_packets=Count("packets"))

    @admin.display(description="packets", ordering="n_packets")
    def packet_count(self, obj: Any) -> int:
        return int(obj.n_packets)


@admin.register(Packet)
class PacketAdmin(admin.ModelAdmin):
    list_display = ("name", "question_set", "year")
    list_filter = ("question_set__year", "question_set__source")
    search_fields = ("name", "question_set__name")
    list_select_related = ("question_set",)
    autocomplete_fields = ("question_set",)

    @admin.display(ordering="question_set__year")
    def year(self, obj: Packet) -> int | None:
        return obj.question_set.year


class QuestionAdmin(ImportExportModelAdmin):
    """Shared by tossups and bonuses: find by set, year, category or text; bulk files keyed by
    (set, packet, number)."""

    list_filter = ("packet__question_set__year", "packet__question_set__source", "category")
    list_select_related = ("packet__question_set",)
    autocomplete_fields = ("packet",)
    list_per_page = 50


@admin.register(Tossup)
class TossupAdmin(QuestionAdmin):
    resource_classes = [TossupResource]
    list_display = ("__str__", "answer_line", "category", "subcategory")
    search_fields = ("answer_line", "question", "packet__name", "packet__question_set__name", "external_id")


@admin.register(MediaFile)
class MediaFileAdmin(ReadOnlyAdmin):
    """Images and audio of multimodal tossups, by content hash (added by importing packets)."""

    list_display = ("sha256", "mime", "size", "revealed", "created_at")
    list_filter = ("mime", "revealed")
    search_fields = ("sha256",)


@admin.register(Bonus)
class BonusAdmin(QuestionAdmin):
    resource_classes = [BonusResource]
    list_display = ("label", "leadin", "category", "subcategory")

    @admin.display(description="bonus", ordering="packet")
    def label(self, obj: Bonus) -> str:
        return f"{obj.packet} #{obj.number}"

    search_fields = ("leadin", "parts", "packet__name", "packet__question_set__name", "external_id")


@admin.register(Flag)
class FlagAdmin(admin.ModelAdmin):
    list_display = ("tossup", "problem", "role", "reporter", "match", "created_at")
    list_filter = ("problem", "role", "created_at")
    search_fields = ("tossup__answer_line", "reporter", "comment", "match__join_code")
    autocomplete_fields = ("tossup",)
    raw_id_fields = ("match",)
    list_select_related = ("tossup__packet__question_set", "match")


# ---------------------------------------------------------------- matches (read-only records)


class TeamInline(admin.TabularInline):
    model = Team
    fields: tuple[str, ...] = ("name", "kind")
    readonly_fields: tuple[str, ...] = fields
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class PlayerInline(TeamInline):
    model = Player  # type: ignore[assignment]
    fields = ("name", "team", "kind", "weight_class")
    readonly_fields = fields


@admin.register(Match)
class MatchAdmin(admin.ModelAdmin):
    """A match's record: its creation request, spec, live state and ruling record as JSON, links to
    its event log and buzzes. Only deleting it (e.g. a test match) changes anything."""

    list_display = ("name", "join_code", "status", "preset", "created_at", "ended_at", "seq")
    list_filter = ("status", "preset", "created_at")
    search_fields = ("name", "join_code", "teams__name", "players__name")
    date_hierarchy = "created_at"
    inlines = (TeamInline, PlayerInline)
    fields = (
        ("name", "join_code", "status"),
        ("preset", "seq", "created_at", "ended_at"),
        "logs",
        "config_json",
        "spec_json",
        "state_json",
        "records_json",
        ("tossup_ids", "bonus_ids"),
    )
    readonly_fields = (
        "name",
        "join_code",
        "status",
        "preset",
        "seq",
        "created_at",
        "ended_at",
        "logs",
        "config_json",
        "spec_json",
        "state_json",
        "records_json",
        "tossup_ids",
        "bonus_ids",
    )

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # matches are created through services.create_match (moderator page)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # A running match is being read out by a driver: end it first.
        running = obj is not None and obj.status == Match.Status.RUNNING
        return not running and super().has_delete_permission(request, obj)

    def get_deleted_objects(self, objs: Any, request: HttpRequest) -> Any:
        # A match's teams, seats, logs and responses are part of it and go with it, although none
        # of them can be deleted on its own.
        deleted, model_count, _perms_needed, protected = super().get_deleted_objects(objs, request)
        return deleted, model_count, set(), protected

    @admin.display(description="logs")
    def logs(self, obj: Match) -> str:
        return format_html(
            "{} · {}",
            changelist_link(MatchEvent, f"{obj.seq} events", match__id__exact=obj.pk),
            changelist_link(Buzz, f"{obj.buzzes.count()} buzzes", match__id__exact=obj.pk),
        )

    @admin.display(description="config")
    def config_json(self, obj: Match) -> str:
        return pretty_json(obj.config)

    @admin.display(description="spec")
    def spec_json(self, obj: Match) -> str:
        return pretty_json(obj.spec)

    @admin.display(description="state")
    def state_json(self, obj: Match) -> str:
        return pretty_json(obj.state)

    @admin.display(description="records")
    def records_json(self, obj: Match) -> str:
        return pretty_json(obj.records)


@admin.register(MatchEvent)
class MatchEventAdmin(ReadOnlyAdmin):
    list_display = ("match", "seq", "event", "audience", "actor", "created_at")
    list_filter = ("event", "audience")
    search_fields = ("match__join_code", "match__name", "event", "actor")
    list_select_related = ("match",)
    show_full_result_count = False  # the log grows by a row per word


class SeatAdmin(admin.ModelAdmin):
    """Teams and players (seats) of a match. Only the name can be corrected here, and it goes
    through the one door (``services.rename``: the match spec, the row, the event log and every
    connected screen). Seats are added by joining; tokens and reclaim codes are never shown."""

    list_filter: tuple[str, ...] = ("kind", "match__status")
    list_select_related: tuple[str, ...] = ("match",)
    search_fields: tuple[str, ...] = ("name", "match__join_code", "match__name")
    fields: tuple[str, ...] = ("name", "kind", "match")
    readonly_fields: tuple[str, ...] = ("kind", "match")

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        ids = {"team_id": obj.pk} if isinstance(obj, Team) else {"player_id": obj.pk}
        try:
            services.rename(match_id=obj.match_id, name=obj.name, **ids)
        except game.RuleViolation as exc:  # the form already checked the name's length
            self.message_user(request, f"not renamed: {exc.message}", level=messages.ERROR)


@admin.register(Team)
class TeamAdmin(SeatAdmin):
    list_display = ("name", "kind", "match")


@admin.register(Player)
class PlayerAdmin(SeatAdmin):
    """Humans and bots (``kind`` = bot: the list filter)."""

    fields = ("name", "kind", "weight_class", "team", "match")
    readonly_fields = ("kind", "weight_class", "team", "match")

    list_display = ("name", "kind", "weight_class", "team", "match")
    list_filter = ("kind", "weight_class", "match__status")
    list_select_related = ("match", "team")
    search_fields = ("name", "team__name", "match__join_code", "match__name")


@admin.register(Buzz)
class BuzzAdmin(ReadOnlyAdmin):
    list_display = ("match", "seq", "player", "team", "tossup", "token_index", "guess", "ruling", "points")
    list_filter = ("kind", "verdict", "ruling")
    search_fields = ("match__join_code", "player__name", "team__name", "guess", "tossup__answer_line")
    list_select_related = ("match", "player", "team", "tossup__packet__question_set")


@admin.register(BonusPartResult)
class BonusPartResultAdmin(ReadOnlyAdmin):
    list_display = ("match", "seq", "team", "bonus", "part", "guess", "ruling", "points")
    list_filter = ("verdict", "ruling")
    search_fields = ("match__join_code", "team__name", "guess")
    list_select_related = ("match", "team", "bonus__packet__question_set")


@admin.register(Outbox)
class OutboxAdmin(ReadOnlyAdmin):
    list_display = ("id", "topic", "match", "created_at", "dispatched_at", "done_at", "attempts")
    list_filter = ("topic", ("done_at", admin.EmptyFieldListFilter))
    search_fields = ("topic", "match__join_code")
    list_select_related = ("match",)


@admin.register(Tournament)
class TournamentAdmin(admin.ModelAdmin):
    """A tournament's name, director and public feed (``competition.spectators``: the three
    booleans, private unless true) are edited here; its games come from its format, not from
    the admin."""

    fields = ("name", "director", "public_feed", "preset", "created_at")
    readonly_fields = ("preset", "created_at")
    list_display = ("name", "director", "preset", "created_at")
    search_fields = ("name",)


@admin.register(TournamentRoom)
class TournamentRoomAdmin(admin.ModelAdmin):
    """A room's name and its help call; the pairing code is the room's (read-only)."""

    fields = ("tournament", "name", "code", "help_at", "help_note")
    readonly_fields = ("tournament", "code")
    list_display = ("name", "tournament", "code", "help_at")
    list_select_related = ("tournament",)


@admin.register(DeskEntry)
class DeskEntryAdmin(ReadOnlyAdmin):
    """The control desk's history (``competition.review``): written once, never changed."""

    list_display = ("tournament", "action", "game", "room", "actor_label", "at")
    list_filter = ("action",)
    list_select_related = ("tournament", "game", "room")


@admin.register(Submission)
class SubmissionAdmin(ReadOnlyAdmin):
    """Writers' submissions (``competition.editorial``): reviewed on the editor's desk (``/editor/``)."""

    list_display = ("draft", "writer", "status", "tossup", "submitted_at")
    list_filter = ("status",)
    search_fields = ("writer__username", "draft__title")
    list_select_related = ("draft", "writer", "tossup")
