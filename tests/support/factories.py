"""Small builders for database tests (no real data needed)."""

from __future__ import annotations

from typing import Any

from competition import services
from competition.models import Bonus, Match, Packet, QuestionSet, Tossup

ANSWERS = ["Moby-Dick", "Magna Carta", "mitochondria", "Kilimanjaro", "Ravel"]


def tossup_text(i: int, words: int = 20, power_at: int = 8) -> str:
    tokens = [f"clue{i}w{k}" for k in range(words)]
    tokens.insert(power_at, "(*)")
    return " ".join(tokens)


def make_packet(n_tossups: int = 2, n_bonuses: int = 2, words: int = 20) -> tuple[list[Tossup], list[Bonus]]:
    qset, _ = QuestionSet.objects.get_or_create(name="Test set", defaults={"year": 2024, "source": "test"})
    packet, _ = Packet.objects.get_or_create(question_set=qset, name="1")
    tossups = [
        Tossup.objects.create(
            packet=packet,
            number=i + 1,
            question=tossup_text(i, words),
            answer_line=f"<b><u>{ANSWERS[i % len(ANSWERS)]}</u></b>",
            category="Literature",
        )
        for i in range(n_tossups)
    ]
    bonuses = [
        Bonus.objects.create(
            packet=packet,
            number=i + 1,
            leadin="For 10 points each:",
            parts=[
                {"text": f"Part {k}.", "answer_line": f"<b><u>bonusanswer{k}</u></b>", "value": 10}
                for k in range(3)
            ],
        )
        for i in range(n_bonuses)
    ]
    return tossups, bonuses


def make_match(*, config: dict[str, Any] | None = None, bots: bool = True, **packet: Any) -> Match:
    tossups, bonuses = make_packet(**packet)
    match = services.create_match(
        name="Test match",
        tossup_ids=[t.id for t in tossups],
        bonus_ids=[b.id for b in bonuses],
        preset="naqt",
        teams=["Red", "Blue"],
        bots=[{"name": "bot", "weight_class": "light"}] if bots else [],
        # A quick match: 600 wpm, the judge rules, 2 s between questions (the default is 10 s).
        config={"wpm": 600, "auto_rule": True, "between_questions": 2.0, **(config or {})},
    )
    services.join_match(code=match.join_code, name="alice", team="Red")
    services.join_match(code=match.join_code, name="amy", team="Red")
    services.join_match(code=match.join_code, name="bob", team="Blue")
    return match
