"""A throw-away database for tests and benchmarks that run the real server and worker as subprocesses:
a fresh PostgreSQL database on the server of ``DATABASE_URL`` when that is PostgreSQL
(as on CI), else a SQLite file."""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit


@contextlib.contextmanager
def scratch_database(tmp_path: Path) -> Iterator[str]:
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        yield f"sqlite:///{tmp_path / 'tossup.sqlite3'}"
        return
    import psycopg

    name = f"tossup_scratch_{uuid.uuid4().hex[:10]}"
    parts = urlsplit(url)
    admin = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield urlunsplit(parts._replace(path=f"/{name}"))
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
