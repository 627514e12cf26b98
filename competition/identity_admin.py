"""The admin of identities across matches (``/admin/competition/competitor/``): organisers rename
a handle, merge the identities of one person (team, bot) who joined under several, split one that
several people shared, and reset a lost secret. The work is ``competition.identities``; a change
reaches the fits at the next refit (the analysis page's "Refit now")."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import Count, QuerySet
from django.http import HttpRequest
from django.utils.html import format_html, format_html_join

from competition import identities
from competition.models import Competitor

REFIT_HINT = "The fits show it after the next refit (analysis page: Refit now)."


@admin.register(Competitor)
class CompetitorAdmin(admin.ModelAdmin):
    """Identities: handle (renamable), kind, and the seats and teams they held, match by match."""

    list_display = ("handle", "kind", "n_seats", "n_teams", "has_secret", "created_at")
    list_filter = ("kind",)
    search_fields = ("handle", "players__name", "teams__name", "players__match__join_code")
    fields = ("handle", "kind", "has_secret", "created_at", "seats")
    readonly_fields = ("has_secret", "created_at", "seats")
    actions = ("merge_selected", "split_by_match", "reset_secret")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Competitor]:
        return (
            super()
            .get_queryset(request)
            .annotate(seat_count=Count("players", distinct=True), team_count=Count("teams", distinct=True))
        )

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        # The kind is chosen once: a human's responses never turn into a bot's.
        return (*self.readonly_fields, "kind") if obj is not None else self.readonly_fields

    @admin.display(description="seats", ordering="seat_count")
    def n_seats(self, obj: Competitor) -> int:
        return obj.seat_count  # type: ignore[attr-defined]

    @admin.display(description="teams", ordering="team_count")
    def n_teams(self, obj: Competitor) -> int:
        return obj.team_count  # type: ignore[attr-defined]

    @admin.display(description="secret set", boolean=True)
    def has_secret(self, obj: Competitor) -> bool:
        return bool(obj.secret_hash)

    @admin.display(description="seats and teams")
    def seats(self, obj: Competitor) -> str:
        rows = [
            (p.match.join_code, p.match.name, f"seat {p.name!r} ({p.kind}) on {p.team.name}")
            for p in obj.players.select_related("match", "team").order_by("match_id")
        ] + [
            (t.match.join_code, t.match.name, f"team {t.name!r}")
            for t in obj.teams.select_related("match").order_by("match_id")
        ]
        if not rows:
            return "none"
        return format_html("<ul>{}</ul>", format_html_join("", "<li>{} · {}: {}</li>", rows))

    @admin.action(description="Merge the selected into the oldest (one subject; its handle and secret stay)")
    def merge_selected(self, request: HttpRequest, queryset: QuerySet[Competitor]) -> None:
        chosen = list(queryset.order_by("created_at", "id"))
        if len(chosen) < 2:
            self.message_user(request, "Select at least two identities to merge.", messages.WARNING)
            return
        try:
            target = identities.merge(chosen[0], chosen[1:])
        except ValueError as exc:
            self.message_user(request, f"Nothing merged: {exc}.", messages.ERROR)
            return
        self.message_user(request, f"Merged {len(chosen)} identities into {target.handle!r}. {REFIT_HINT}")

    @admin.action(description="Split each selected into one identity per match")
    def split_by_match(self, request: HttpRequest, queryset: QuerySet[Competitor]) -> None:
        made = [new.handle for c in queryset for new in identities.split_by_match(c)]
        if not made:
            self.message_user(
                request, "Nothing to split: each selected identity played one match.", messages.WARNING
            )
            return
        self.message_user(request, f"New identities: {', '.join(made)}. {REFIT_HINT}")

    @admin.action(description="Reset the secret (for an owner who lost the tablet)")
    def reset_secret(self, request: HttpRequest, queryset: QuerySet[Competitor]) -> None:
        humans = list(queryset.filter(kind=Competitor.Kind.HUMAN))
        if not humans:
            self.message_user(request, "Only a person's identity has a secret.", messages.WARNING)
            return
        for c in humans:
            secret = identities.reset_secret(c)
            self.message_user(
                request,
                f"{c.handle}: new secret {secret} — give it to its owner once (join with the handle and it).",
            )
