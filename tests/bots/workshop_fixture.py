"""A small TF-IDF bot trained in milliseconds for the workshop's tests (no calibration: its confidence
is the top cosine; it buzzes at ≥ 0.35 after 3 words), and a scripted LLM endpoint's replies."""

from __future__ import annotations

import json
from typing import Any

from buzzer.bots.tfidf import TfidfGuesser
from buzzer.bots.workshop import TfidfBot
from tests.support.fake_llm import completion, prompt_of

RECORDS = [
    ("This scientist discovered polonium and radium with her husband Pierre.", "Marie Curie"),
    ("She won Nobel prizes in physics and chemistry for work on radioactivity.", "Marie Curie"),
    ("This Warsaw-born physicist named polonium after her homeland.", "Marie Curie"),
    ("This city on the Seine has the Louvre and the Eiffel Tower.", "Paris"),
    ("The capital of France hosts Notre-Dame cathedral and the Sorbonne.", "Paris"),
    ("This composer wrote nocturnes, mazurkas and polonaises for the piano.", "Frédéric Chopin"),
    ("This pianist from Warsaw wrote the Minute Waltz and two piano concertos.", "Frédéric Chopin"),
    ("This river flows through Paris and empties into the English Channel.", "Seine"),
]

# A 40-word tossup: vague first lines, the giveaway (polonium, radium, Pierre) at the end.
VAGUE = (
    "This person came from a city that was then ruled by the Russian Empire. "
    "Later this person studied at a university in a capital on a river and taught students there for many years. "
)
GIVEAWAY = "With her husband Pierre she discovered polonium and radium. "
ANSWER_LINE = "Marie <b><u>Curie</u></b> [accept Maria Skłodowska; prompt on Madame]"


def fixture_model() -> TfidfGuesser:
    return TfidfGuesser.train(RECORDS * 4, calibrate=False)


THRESHOLD = 0.35  # buzz at this cosine, after 3 words
LLM_COMPLETION_TOKENS = 7


def fixture_bot() -> TfidfBot:
    bot = TfidfBot(fixture_model())
    bot.threshold, bot.min_tokens = THRESHOLD, 3
    return bot


def curie_llm(body: dict[str, Any]) -> tuple[int, bytes]:
    """A fake LLM endpoint (``tests.support.fake_llm``) that answers "Paris" (confidence 0.2) until its
    prompt holds "polonium", then "Marie Curie" (0.9); the prompt's words are its prompt tokens and
    it counts :data:`LLM_COMPLETION_TOKENS` completion tokens. Model ``error``: HTTP 500 every time."""
    if body["model"] == "error":
        return 500, b'{"error": {"message": "overloaded"}}'
    prompt = prompt_of(body)
    sure = "polonium" in prompt
    reply = {"guess": "Marie Curie" if sure else "Paris", "confidence": 0.9 if sure else 0.2}
    return 200, completion(json.dumps(reply), len(prompt.split()), LLM_COMPLETION_TOKENS)
