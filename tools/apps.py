from django.apps import AppConfig


class ToolsConfig(AppConfig):
    """Installed so that Django finds its commands: ``demo``, ``serve``, ``bot_supervisor``,
    ``simulate_match``, ``simulate_tournament``, ``evaluate_bot``."""

    name = "tools"
