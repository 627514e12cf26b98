from django.apps import AppConfig


class ToolsConfig(AppConfig):
    """Installed only so that Django finds ``manage.py simulate_match``."""

    name = "tools"
