"""The live write path: what changes a running match, and this process's memory of its rows.

- :mod:`.rowcache`: the process's cache of match rows (the parsed spec and ruling record by
  their part keys, and the row each match was last written or read as, for the words' fast path).
- :mod:`.store`: the one door (:func:`.store.apply_command`): lock the row, apply a command to the
  engine, store the sequence-numbered events, project them, publish on commit; gap recovery.
- :mod:`.projection`: the queryable buzz log (``Buzz``, ``BonusPartResult``) kept in step with
  the events a command stored.
- :mod:`.ticks`: the reading driver's words, stored in one statement when they only reveal words.

Imports point one way (``pyproject.toml``'s contracts): ``ticks`` → ``store`` → ``projection`` →
``competition.selectors`` → ``rowcache``; the services above call ``store``.
"""
