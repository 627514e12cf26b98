"""The writing workshop's URLs (``buzzer.workshop_views``; submissions and results:
``buzzer.editor_views``), under ``/workshop/`` (config/urls.py)."""

from django.urls import path

from buzzer import editor_views, workshop_views

app_name = "workshop"

urlpatterns = [
    path("", workshop_views.workshop_home, name="home"),
    path("draft/<int:pk>/", workshop_views.workshop_draft, name="draft"),
    path("writers/", workshop_views.workshop_writers, name="writers"),
    path("api/answer-line", workshop_views.api_answer_line, name="answer_line"),
    path("api/drafts/<int:pk>", workshop_views.api_draft_save, name="save"),
    path("api/drafts/<int:pk>/analyse", workshop_views.api_draft_analyse, name="analyse"),
    path("api/drafts/<int:pk>/versions", workshop_views.api_draft_versions, name="versions"),
    # submitting to the editor, and the writer's results after play (buzzer.editor_views)
    path("submissions/", editor_views.writer_submissions, name="submissions"),
    path("draft/<int:pk>/submit/", editor_views.submit_draft, name="submit"),
    path("results/", editor_views.results_page, name="results"),
]
