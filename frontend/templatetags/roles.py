"""``{% load roles %}``: ``user|organiser`` in templates (``frontend.access.is_organiser``): a
writer-only account is logged in but no organiser."""

from __future__ import annotations

from typing import Any

from django import template

from competition.roles import is_organiser

register = template.Library()


@register.filter
def organiser(user: Any) -> bool:
    return is_organiser(user)
