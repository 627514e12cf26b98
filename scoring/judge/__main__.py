"""``python -m scoring.judge "<answer line>" "<given>"``: see ``scoring.judge.cli``."""

from scoring.judge.cli import main

raise SystemExit(main())
