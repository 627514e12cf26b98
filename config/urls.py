from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

urlpatterns = [
    path(
        "accounts/login/",
        auth_views.LoginView.as_view(template_name="frontend/login.html", redirect_authenticated_user=True),
        name="login",
    ),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("workshop/", include("buzzer.workshop_urls")),  # workshop (issue 32)
    path("editor/", include("buzzer.editor_urls")),  # the editor's desk (issue 32)
    path("", include("frontend.urls")),
]
