"""``python -m tossup_bot``: the same as the ``tossup-bot`` command."""

from tossup_bot.cli import main

raise SystemExit(main())
