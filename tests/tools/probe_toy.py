"""A toy question set and a toy bot whose fall under the distractor probe can be computed by hand.

The set (:func:`toy_tossups`): six Literature tossups, each three 10-word clue sentences and a 6-word
giveaway ("For 10 points, name this novel."), 36 words, every answer a made-up name that appears in no
sentence; one Science tossup, which has no donor of its category.

The bot (:class:`LastClueGuesser`) knows every clue sentence of the set (not the giveaways): its answer
is the answer of the **last complete clue sentence it recognises** in the prefix, and it buzzes as soon
as it recognises one. With one distractor — another tossup's clue — inserted, on every Literature tossup:

- ``start``: it buzzes at the end of the distractor, with the donor's answer (precision 1 → 0); at 25 %
  of the original words (9 of 36, with the distractor before them) its answer is the donor's;
- ``middle`` (before the third clue): at 75 % (27 words: clues 1–2, the distractor, 7 words of clue 3)
  the last clue it recognises is the distractor (accuracy 1 → 0); it still buzzes right on clue 1;
- ``before_giveaway``: at 100 % the last clue it recognises is the distractor (accuracy 1 → 0).

Originally it is wrong at 25 % (no sentence complete after 9 words) and right at 50/75/100 %.
"""

from __future__ import annotations

import json
from pathlib import Path

from tossup_bot import Guess, Guesser, TossupPrefix

from irt.probe import sentences

ANSWERS = ("Zorvantha", "Quellibrin", "Mardostique", "Pelvranox", "Tuskellion", "Virmandel")
NAMES = (
    "Ashgrove Dunmere Felwick",
    "Brackley Oststrand Hemmel",
    "Corwin Lathmoor Ipswade",
    "Delby Ravensholt Jorrin",
    "Eskwith Tamberlow Kinloss",
    "Fenmarch Ulverby Lorimer",
)
THINGS = (("glass", "orchard"), ("copper", "lantern"), ("silent", "harbour"))
CATEGORY = "Literature"


def clue(i: int, j: int) -> str:
    """Clue ``j`` (0–2) of tossup ``i``: ten words, no answer in it."""
    adjective, noun = THINGS[j]
    return f"This novel's {adjective} {noun} guards the tower of {NAMES[i].split()[j]} forever."


def toy_tossups() -> list[dict[str, object]]:
    """The set as qbreader JSON objects (``type``, ``question``, ``answer``, ``category``, set, year…)."""
    items: list[dict[str, object]] = [
        {
            "type": "tossup",
            "set": "2022 Toy Set",
            "year": 2022,
            "packet": 1,
            "number": i + 1,
            "category": CATEGORY,
            "question": " ".join([clue(i, 0), clue(i, 1), clue(i, 2), "For 10 points, name this novel."]),
            "answer": f"<b><u>{answer}</u></b>",
        }
        for i, answer in enumerate(ANSWERS)
    ]
    items.append(
        {
            "type": "tossup",
            "set": "2022 Toy Set",
            "year": 2022,
            "packet": 1,
            "number": 7,
            "category": "Science",
            "question": "This element's yellow crystals burn with a bright blue flame in oxygen. "
            "For 10 points, name this element.",
            "answer": "<b><u>sulfur</u></b>",
        }
    )
    return items


def write_toy_set(path: Path) -> Path:
    """The set as a qbreader JSONL file at ``path``."""
    path.write_text("".join(json.dumps(item) + "\n" for item in toy_tossups()), encoding="utf-8")
    return path


def known_clues() -> dict[str, str]:
    """Every clue sentence of the set → its tossup's answer."""
    return {clue(i, j): answer for i, answer in enumerate(ANSWERS) for j in range(3)}


class LastClueGuesser(Guesser):
    """The toy bot (module docstring). ``bot`` is accepted and ignored (the workshop's loader option)."""

    def __init__(self, bot: str = "") -> None:
        self.clues = known_clues()

    def guess_tossup(self, prefix: TossupPrefix) -> Guess:
        recognised = [self.clues[s] for s in sentences(prefix.text) if s in self.clues]
        if not recognised:
            return Guess("", 0.0)
        return Guess(recognised[-1], 0.9, buzz=True)
