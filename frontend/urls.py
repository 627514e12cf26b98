from django.urls import path, re_path

from competition.game import MEDIA_URL
from frontend import (
    analysis_views,
    api,
    bot_views,
    desk_views,
    export_views,
    health,
    media_views,
    pages,
    probe_views,
    recap,
    tournament_views,
)

app_name = "frontend"

urlpatterns = [
    path("", pages.home, name="home"),
    path("moderator/", pages.moderator, name="moderator"),
    path("moderator/upload/", pages.upload, name="upload"),
    path("moderator/<str:code>/", pages.dashboard, name="dashboard"),
    path("play/", pages.play, name="play"),
    path("tournament/<int:tournament_id>/", tournament_views.tournament_page, name="tournament"),
    path(
        "api/tournament/<int:tournament_id>/standings",
        tournament_views.api_standings,
        name="tournament_standings",
    ),
    path(
        "api/tournament/<int:tournament_id>/export.qbj",
        tournament_views.api_tournament_export,
        name="tournament_export",
    ),
    path("watch/<str:code>/", pages.watch, name="watch"),
    path("match/<str:code>/recap/", recap.recap, name="recap"),
    path("analysis/", analysis_views.analysis_page, name="analysis"),
    path("analysis/fit/<int:fit_id>/", analysis_views.analysis_page, name="analysis_fit"),
    path(
        "analysis/fit/<int:fit_id>/subject/<path:subject>/",
        analysis_views.analysis_subject,
        name="analysis_subject",
    ),
    path("analysis/refit/", analysis_views.analysis_refit, name="analysis_refit"),
    path("analysis/bots/", bot_views.bots_page, name="bots"),
    path("api/fits/progress", analysis_views.api_fit_progress, name="fit_progress"),
    path("api/match/<str:code>/export/<str:fmt>", export_views.api_match_export, name="match_export"),
    path("api/event.qbj", export_views.api_event_export, name="event_export"),
    path("api/match/<str:code>", api.api_match, name="api_match"),
    path("api/join", api.api_join, name="api_join"),
    path("api/match/<str:code>/players", api.api_roster, name="api_roster"),
    path("api/match/<str:code>/questions", api.api_questions, name="api_questions"),
    path("api/match/<str:code>/players/<int:player_id>/reclaim", api.api_reclaim, name="api_reclaim"),
    path("api/match/<str:code>/bots", bot_views.api_bots, name="api_bots"),
    path("api/match/<str:code>/bots/add", bot_views.api_bot_add, name="api_bot_add"),
    path("api/match/<str:code>/bots/<int:player_id>/launch", bot_views.api_bot_launch, name="api_bot_launch"),
    path("api/match/<str:code>/bots/<int:player_id>/stop", bot_views.api_bot_stop, name="api_bot_stop"),
    re_path(
        r"^api/fits/(?P<fit_id>\d+)/export\.(?P<fmt>json|csv)$",
        export_views.api_fit_export,
        name="fit_export",
    ),
    re_path(
        r"^api/fits/(?P<fit_id>\d+)/(?P<table>subjects|items|matrix)\.csv$",
        export_views.api_fit_table,
        name="fit_table",
    ),
    path("vendor/plotly.min.js", media_views.plotly_js, name="plotly_js"),
    path("healthz", health.healthz, name="healthz"),
    re_path(
        rf"^{MEDIA_URL.strip('/')}/(?P<sha256>[0-9a-f]{{64}})$", media_views.media_file, name="media_file"
    ),
    # review: the tournament director's control desk (frontend.desk_views)
    path("tournament/new/", desk_views.tournament_new, name="tournament_new"),
    path("tournament/<int:tournament_id>/control/", desk_views.control_page, name="tournament_control"),
    path(
        "api/tournament/<int:tournament_id>/games/<int:game_id>/accept",
        desk_views.api_accept,
        name="tournament_accept",
    ),
    path(
        "api/tournament/<int:tournament_id>/games/<int:game_id>/send-back",
        desk_views.api_send_back,
        name="tournament_send_back",
    ),
    path(
        "api/tournament/<int:tournament_id>/rooms/<int:room_id>/help/clear",
        desk_views.api_room_help_clear,
        name="tournament_help_clear",
    ),
    path("api/match/<str:code>/desk", desk_views.api_desk, name="api_desk"),
    path("api/match/<str:code>/desk/submit", desk_views.api_submit, name="api_desk_submit"),
    path("api/match/<str:code>/desk/help", desk_views.api_help, name="api_desk_help"),
    path("room/", desk_views.pair_page, name="room"),
    path("room/<str:code>/", desk_views.room_pair, name="room_pair"),
    path("analysis/probe/", probe_views.probe_page, name="probe"),  # probe (issue 32)
    path("workshop/api/probe", probe_views.api_probe, name="workshop_probe"),
    # /static/ is served by servestatic's middleware (config/settings.py).
    # stats (issue 33 item 7): the tournament as YellowFruit and SQBS files
    path(
        "api/tournament/<int:tournament_id>/export.yft",
        tournament_views.api_tournament_yft,
        name="tournament_yft",
    ),
    path(
        "api/tournament/<int:tournament_id>/export.sqbs",
        tournament_views.api_tournament_sqbs,
        name="tournament_sqbs",
    ),
]

# spares: the control desk's scoresheet review (frontend/review_views.py)
from frontend import review_views  # noqa: E402

urlpatterns.append(path("api/match/<str:code>/review", review_views.api_review, name="api_review"))
urlpatterns.append(path("api/match/<str:code>/review/buzz", review_views.api_add_buzz, name="api_add_buzz"))
