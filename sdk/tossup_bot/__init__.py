"""tossup-bot: write a quizbowl bot and seat it in a Tossup match.

Subclass :class:`Guesser`, then ``tossup-bot --url ws://HOST:PORT --code JOIN --token TOKEN --guesser
mymodule:MyGuesser`` (or :func:`run_bot` from your own asyncio code). See Tossup's docs/BOTS.md.
"""

from tossup_bot.client import play_url, run_bot
from tossup_bot.guesser import NO_GUESS, BonusPart, Guess, Guesser, TossupPrefix
from tossup_bot.loader import GuesserLoadError, load_guesser, parse_options

__all__ = [
    "NO_GUESS",
    "BonusPart",
    "Guess",
    "Guesser",
    "GuesserLoadError",
    "TossupPrefix",
    "load_guesser",
    "parse_options",
    "play_url",
    "run_bot",
]
