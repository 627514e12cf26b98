"""Pure answer judge for quizbowl answer lines (no Django).

``judge(answer_line, given)`` parses an answer line in qbreader / qb-answer-checker conventions (HTML
``<b><u>…</u></b>`` marks the required part; plain text means the whole main answer is required; Protobowl
``{…}`` braces also mark it) and suggests ``accept | prompt | reject | needs_moderator`` for a player's
answer. The moderator always confirms or overrides the suggestion.

Modules, in the order a verdict is built:

- ``text``: normalisation — HTML-marked text → folded word tokens (case, diacritics, numbers, plurals);
- ``grammar``: the answer-line parser (main answer, accept / prompt / reject / do-not-accept directives,
  timing clauses) shared with the bots (``buzzer.bots.answers``);
- ``matching``: how closely a given answer matches one listed answer (strict / exact / fuzzy / loose);
- ``decision``: clause precedence and timing → ``Judgement`` (``judge``), whose ``verdict`` is a
  ``competition.vocabulary.Verdict``;
- ``cli``: ``python -m scoring.judge "<answer line>" "<given>"``;
- ``protests``: the judge's accuracy per dispute class (misspelling, incomplete, initials, either, word
  salad) on a protest set built from real answer lines and hand-labelled cases, split dev / held-out
  (``python -m scoring.judge.protests``).
"""

from competition.vocabulary import Verdict
from scoring.judge.cli import main
from scoring.judge.decision import Judgement, judge
from scoring.judge.grammar import AnswerLine, main_answer, parse_answer_line

__all__ = ["AnswerLine", "Judgement", "Verdict", "judge", "main", "main_answer", "parse_answer_line"]
