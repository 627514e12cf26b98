"""The moderator's "new match" form: scalar fields via a Django Form, the repeated team and
bot rows read from the POST lists (``team``, ``bot_name``, ``bot_class``, ``bot_guesser``: a
guesser the server runs on that seat, ``competition.botlaunch``, or "" for a bot run elsewhere)."""

from __future__ import annotations

from itertools import zip_longest
from typing import Any

from django import forms
from django.db.models import Count

from competition import botlaunch
from competition.models import Bonus, Packet, Tossup
from scoring.rules import known_presets, load_preset

WEIGHT_CLASSES = ("light", "mid", "heavy")
DEFAULT_TEAMS = ("Team A", "Team B")
DEFAULT_BOTS = ({"name": "tfidf", "weight_class": "light"},)


def packets_with_counts():
    """Packets annotated with ``n_tossups`` and ``n_bonuses``, largest set first."""
    return (
        Packet.objects.select_related("question_set")
        .annotate(n_tossups=Count("tossups", distinct=True), n_bonuses=Count("bonuses", distinct=True))
        .filter(n_tossups__gt=0)
        .order_by("question_set__name", "name")
    )


class MatchCreateForm(forms.Form):
    name = forms.CharField(max_length=200)
    packet = forms.ModelChoiceField(queryset=Packet.objects.none(), empty_label=None)
    n_tossups = forms.IntegerField(
        min_value=1,
        max_value=200,
        required=False,
        label="Number of tossups",
        help_text="blank: the whole packet",
    )
    preset = forms.ChoiceField(choices=(), label="Rules preset", help_text="how tossups and bonuses score")
    wpm = forms.IntegerField(min_value=60, max_value=600, initial=200, label="Reading speed (wpm)")
    auto_rule = forms.BooleanField(
        required=False,
        label="Auto-rule (apply the judge's verdict)",
        help_text="answers the judge is sure of are ruled at once; you rule only the doubtful ones",
    )
    auto_advance = forms.BooleanField(
        required=False,
        initial=True,
        label="Advance automatically",
        help_text=(
            "the next tossup starts 10 s after each tossup (and its bonus) ends, time for the room to "
            "read the recap; untick to wait for your Next (the dashboard changes the pace any time)"
        ),
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        packets = packets_with_counts()
        self.fields["packet"].queryset = packets
        self.fields["packet"].label_from_instance = lambda p: (
            f"{p} — {p.n_tossups} tossups, {p.n_bonuses} bonuses"
        )
        presets = known_presets()
        # Each preset explained where it is chosen (scoring/presets/<name>.json "description").
        self.preset_descriptions = {p: load_preset(p).description for p in presets}
        self.fields["preset"].choices = [(p, p) for p in presets]
        self.fields["preset"].initial = "hvc" if "hvc" in presets else presets[0]
        # --- bots the server runs: the guessers this server knows, offered per bot row ---
        self.registry = botlaunch.known_guessers()
        self.guesser_choices = [("", "run it yourself")] + [
            (g.key, f"server runs: {g.label} ({g.weight_class})") for g in self.registry.guessers
        ]
        self.teams: list[str] = list(DEFAULT_TEAMS)
        self.bots: list[dict[str, str]] = [dict(b) for b in DEFAULT_BOTS]
        if self.is_bound:
            self.teams = [t.strip() for t in self.data.getlist("team") if t.strip()]
            rows = zip_longest(
                self.data.getlist("bot_name"),
                self.data.getlist("bot_class"),
                self.data.getlist("bot_guesser")[: len(self.data.getlist("bot_name"))],
                fillvalue="",
            )
            self.bots = [
                {"name": n.strip(), "weight_class": c, "guesser": g} for n, c, g in rows if n.strip()
            ]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if not self.teams:
            raise forms.ValidationError("Add at least one human team.")
        for bot in self.bots:
            known = self.registry.get(bot["guesser"]) if bot.get("guesser") else None
            if bot.get("guesser") and known is None:
                raise forms.ValidationError(
                    f"Bot {bot['name']!r}: this server knows no guesser {bot['guesser']!r}."
                )
            if known is not None:
                bot["weight_class"] = known.weight_class  # the guesser declares its class
            if bot["weight_class"] not in WEIGHT_CLASSES:
                raise forms.ValidationError(f"Bot {bot['name']!r}: weight class must be light, mid or heavy.")
        names = self.teams + [b["name"] for b in self.bots]
        if len({n.casefold() for n in names}) != len(names):
            raise forms.ValidationError("Team and bot names must be unique.")
        if any(len(n) > 100 for n in names):
            raise forms.ValidationError("Team and bot names are at most 100 characters.")
        packet, n = cleaned.get("packet"), cleaned.get("n_tossups")
        if packet is not None and n is None:
            cleaned["n_tossups"] = packet.n_tossups
        elif packet is not None and n > packet.n_tossups:
            self.add_error("n_tossups", f"That packet has only {packet.n_tossups} tossups.")
        return cleaned

    def question_ids(self) -> tuple[list[int], list[int]]:
        """The first ``n_tossups`` tossups of the packet and as many of its bonuses, in packet order."""
        packet, n = self.cleaned_data["packet"], self.cleaned_data["n_tossups"]
        tossups = list(
            Tossup.objects.filter(packet=packet).order_by("number").values_list("id", flat=True)[:n]
        )
        bonuses = list(
            Bonus.objects.filter(packet=packet).order_by("number").values_list("id", flat=True)[:n]
        )
        return tossups, bonuses
