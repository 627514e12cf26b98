from django.conf import settings
from django.contrib.staticfiles.views import serve as serve_static
from django.urls import path, re_path

from frontend import views

app_name = "frontend"

urlpatterns = [
    path("", views.home, name="home"),
    path("moderator/", views.moderator, name="moderator"),
    path("moderator/<str:code>/", views.dashboard, name="dashboard"),
    path("play/", views.play, name="play"),
    path("watch/<str:code>/", views.watch, name="watch"),
    path("analysis/", views.analysis_page, name="analysis"),
    path("analysis/fit/<int:fit_id>/", views.analysis_page, name="analysis_fit"),
    path(
        "analysis/fit/<int:fit_id>/subject/<path:subject>/", views.analysis_subject, name="analysis_subject"
    ),
    path("api/match/<str:code>", views.api_match, name="api_match"),
    path("api/join", views.api_join, name="api_join"),
    re_path(r"^api/fits/(?P<fit_id>\d+)/export\.(?P<fmt>json|csv)$", views.api_fit_export, name="fit_export"),
    re_path(
        r"^api/fits/(?P<fit_id>\d+)/(?P<table>subjects|items|matrix)\.csv$",
        views.api_fit_table,
        name="fit_table",
    ),
    path("vendor/plotly.min.js", views.plotly_js, name="plotly_js"),
    # uvicorn serves no static files by itself: the demo on a LAN has no proxy in front, so the
    # app finders serve them (a production proxy serves collectstatic's STATIC_ROOT instead).
    re_path(
        rf"^{settings.STATIC_URL.strip('/')}/(?P<path>.*)$", serve_static, {"insecure": True}, name="static"
    ),
]
