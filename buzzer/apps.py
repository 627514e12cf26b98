from django.apps import AppConfig


class BuzzerConfig(AppConfig):
    name = "buzzer"
