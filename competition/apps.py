from django.apps import AppConfig


class CompetitionConfig(AppConfig):
    name = "competition"
