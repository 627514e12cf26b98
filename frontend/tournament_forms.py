"""The "new tournament" form: what ``create_tournament FILE.json`` takes (name, preset, format,
teams, packets), as fields. Teams are typed one per line, in seed order (best first)::

    Team name: Alice, Bob, tfidf (bot light)

a player marked ``(bot)`` or ``(bot <weight class>)`` is an AI player (the bot of that name)."""

from __future__ import annotations

import re
from typing import Any

from django import forms

from competition.models import QuestionSet
from frontend.forms import WEIGHT_CLASSES
from scoring.rules import known_presets

_BOT = re.compile(r"^(?P<name>.+?)\s*\(bot(?:\s+(?P<weight>\w+))?\)$", re.IGNORECASE)


def packet_order(name: str) -> tuple[int, str]:
    """Packets named by numbers in number order, others after them by name."""
    return (int(name), "") if name.isdigit() else (10**6, name)


def parse_teams(text: str) -> list[dict[str, Any]]:
    """The teams of ``text`` (one per line, see the module docstring) as ``create_tournament``
    takes them. Raises forms.ValidationError naming the line of the first malformed one."""
    teams = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        name, colon, rest = line.partition(":")
        if not colon or not name.strip():
            raise forms.ValidationError(f"line {number}: write “Team name: player, player, …”")
        players = []
        for raw in (p.strip() for p in rest.split(",")):
            if not raw:
                continue
            bot = _BOT.match(raw)
            if bot is None:
                players.append({"name": raw, "kind": "human"})
                continue
            weight = (bot["weight"] or "light").lower()
            if weight not in WEIGHT_CLASSES:
                raise forms.ValidationError(
                    f"line {number}: {raw!r}: a bot's weight class is one of {', '.join(WEIGHT_CLASSES)}"
                )
            players.append({"name": bot["name"], "kind": "bot", "weight_class": weight})
        if not players:
            raise forms.ValidationError(f"line {number}: team {name.strip()!r} has no players")
        teams.append({"name": name.strip(), "players": players})
    if len(teams) < 2:
        raise forms.ValidationError("a tournament needs at least 2 teams, one per line")
    return teams


class TournamentCreateForm(forms.Form):
    name = forms.CharField(max_length=200)
    preset = forms.ChoiceField(choices=(), label="Rules preset")
    question_set = forms.ModelChoiceField(queryset=QuestionSet.objects.none(), empty_label=None)
    packets = forms.CharField(
        required=False,
        help_text="packet names in play order, comma-separated; blank: every packet of the set in order",
    )
    tossups_per_game = forms.IntegerField(
        min_value=1, required=False, help_text="play only the first n tossups of each packet; blank: all"
    )
    round_robin = forms.ChoiceField(choices=[("single", "single"), ("double", "double")], initial="single")
    groups = forms.IntegerField(min_value=1, initial=1)
    qualifier = forms.IntegerField(
        min_value=0, initial=0, help_text="teams per group to a qualifier round robin"
    )
    playoff = forms.TypedChoiceField(
        choices=[(0, "none"), (2, "final (2)"), (4, "4 teams"), (8, "8 teams")], coerce=int, initial=0
    )
    teams = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 6}),
        help_text="one team per line, seed order: “Team name: Alice, Bob, tfidf (bot light)”",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        presets = known_presets()
        self.fields["preset"].choices = [(p, p) for p in presets]
        self.fields["preset"].initial = "naqt" if "naqt" in presets else presets[0]
        self.fields["question_set"].queryset = QuestionSet.objects.order_by("name")

    def clean_teams(self) -> list[dict[str, Any]]:
        return parse_teams(self.cleaned_data["teams"])

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        qset = data.get("question_set")
        if qset is None:
            return data
        packets = {p.name: p.id for p in qset.packets.all()}
        names = [n.strip() for n in data.get("packets", "").split(",") if n.strip()] or sorted(
            packets, key=packet_order
        )
        missing = [n for n in names if n not in packets]
        if missing:
            self.add_error("packets", f"set {qset.name!r} has no packets named {', '.join(missing)}")
        elif not names:
            self.add_error("question_set", f"set {qset.name!r} has no packets")
        else:
            data["packet_ids"] = [packets[n] for n in names]
        return data

    def tournament_args(self) -> dict[str, Any]:
        """``competition.tournaments.create_tournament``'s arguments (bar ``director``); call
        after ``is_valid()``."""
        d = self.cleaned_data
        return {
            "name": d["name"],
            "teams": d["teams"],
            "packet_ids": d["packet_ids"],
            "fmt": {
                "round_robin": d["round_robin"],
                "groups": d["groups"],
                "qualifier": d["qualifier"],
                "playoff": d["playoff"],
            },
            "preset": d["preset"],
            "tossups_per_game": d.get("tossups_per_game"),
        }
