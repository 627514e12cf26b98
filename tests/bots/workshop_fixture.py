"""A small TF-IDF bot trained in milliseconds for the workshop's tests (no calibration: its confidence
is the top cosine; it buzzes at ≥ 0.35 after 3 words)."""

from __future__ import annotations

from buzzer.bots.tfidf import TfidfGuesser
from buzzer.bots.workshop import TfidfBot

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


def fixture_bot() -> TfidfBot:
    bot = TfidfBot(fixture_model())
    bot.threshold, bot.min_tokens = THRESHOLD, 3
    return bot
