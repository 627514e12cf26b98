from django.apps import AppConfig


class IrtConfig(AppConfig):
    name = "irt"
