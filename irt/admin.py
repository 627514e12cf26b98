"""IRT records in the admin, read-only: responses are written by matches and imports, fits by the
worker (``irt.pipeline``); the admin lists and searches them. A fit's tables are also on the
analysis pages and downloadable there."""

from __future__ import annotations

from django.contrib import admin

from competition.admin import ReadOnlyAdmin, pretty_json
from irt.models import Fit, ItemScore, Response, SubjectSkill


@admin.register(Fit)
class FitAdmin(ReadOnlyAdmin):
    list_display = (
        "id",
        "dataset",
        "status",
        "progress",
        "n_responses",
        "n_subjects",
        "n_items",
        "duration_s",
        "created_at",
        "finished_at",
    )
    list_filter = ("status", "dataset", "created_at")
    search_fields = ("dataset", "snapshot_hash")
    exclude = ("settings", "summary")
    readonly_fields = ("settings_json", "summary_json")

    @admin.display(description="settings")
    def settings_json(self, obj: Fit) -> str:
        return pretty_json(obj.settings)

    @admin.display(description="summary")
    def summary_json(self, obj: Fit) -> str:
        return pretty_json(obj.summary)


@admin.register(SubjectSkill)
class SubjectSkillAdmin(ReadOnlyAdmin):
    list_display = ("subject", "kind", "skill", "skill_se", "n_responses", "fit")
    list_filter = ("kind", "fit__dataset")
    search_fields = ("subject",)
    list_select_related = ("fit",)
    show_full_result_count = False


@admin.register(ItemScore)
class ItemScoreAdmin(ReadOnlyAdmin):
    list_display = ("item", "tossup", "difficulty", "discriminability", "advscore", "n_responses", "fit")
    list_filter = ("fit__dataset",)
    search_fields = ("item", "tossup__answer_line")
    list_select_related = ("fit", "tossup__packet__question_set")
    show_full_result_count = False


@admin.register(Response)
class ResponseAdmin(ReadOnlyAdmin):
    list_display = ("dataset", "subject", "subject_kind", "item", "correct", "position", "source")
    list_filter = ("dataset", "subject_kind", "correct")
    search_fields = ("subject", "item", "source", "match__join_code")
    show_full_result_count = False
