"""Template helpers of the analyst pages: a number, or a "—" that says why it is missing."""

from __future__ import annotations

import math

from django import template
from django.template.defaultfilters import floatformat
from django.utils.html import format_html

register = template.Library()


@register.simple_tag
def num(value: float | None, digits: int, reason: str) -> str:
    """``value`` with ``digits`` decimals, or a "—" whose hover text (``title``) is ``reason``."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return format_html('<abbr class="missing" title="{}">—</abbr>', reason)
    return floatformat(value, digits)
