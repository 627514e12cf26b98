"""The image's entrypoint: wait for the database, apply the migrations, then become the command.

    python docker/entrypoint.py web        uvicorn serving config.asgi: WEB_PROCESSES processes
                                            (default 2) sharing HOST:PORT (default 0.0.0.0:8000)
    python docker/entrypoint.py worker     a Celery worker on the celery and irt queues
    python docker/entrypoint.py CMD ARG…   anything else, e.g. python manage.py createsuperuser

``web`` and ``worker`` are the commands ``manage.py serve`` supervises (tools/launcher.py), minus
Redis: under compose, Redis and the restarts are compose's. The database is waited for up to
``DB_WAIT_SECONDS`` (60), then the process exits 1 saying why. Containers that start together
migrate one at a time (a PostgreSQL advisory lock): the first applies the migrations, the others
find nothing left to do. ``TOSSUP_MIGRATE=0`` skips waiting and migrating (a bot container, which
only talks to the server over its websocket).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
# Key of the advisory lock held while migrating (any constant no other code of this database uses).
MIGRATION_LOCK = 0x7055_0001


def wait_for_database(timeout: float) -> None:
    """Return once the default database accepts a connection; SystemExit(1) after ``timeout`` s."""
    from django.db import OperationalError, connection

    deadline = time.monotonic() + timeout
    while True:
        try:
            connection.ensure_connection()
            return
        except OperationalError as exc:
            connection.close()
            if time.monotonic() >= deadline:
                sys.exit(f"entrypoint: no database after {timeout:.0f} s ({str(exc).strip()})")
            print(f"entrypoint: waiting for the database ({str(exc).strip()[:120]})", file=sys.stderr)
            time.sleep(1)


def migrate() -> None:
    """``manage.py migrate --noinput``, one container at a time on PostgreSQL."""
    from django.core.management import call_command
    from django.db import connection

    locked = connection.vendor == "postgresql"
    if locked:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock(%s)", [MIGRATION_LOCK])
    try:
        call_command("migrate", interactive=False, verbosity=1)
    finally:
        if locked:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s)", [MIGRATION_LOCK])
        connection.close()  # the command below opens its own


def command(argv: list[str]) -> list[str]:
    """The command line to exec for ``argv`` (``web``, ``worker`` or a command of its own)."""
    from tools import launcher

    if argv == ["web"]:
        port = int(os.environ.get("PORT", "8000"))
        workers = int(os.environ.get("WEB_PROCESSES", "2"))
        return launcher.server_command(port, os.environ.get("HOST", "0.0.0.0"), workers)
    if argv == ["worker"]:
        return launcher.worker_command()
    return argv


def main(argv: list[str]) -> None:
    if not argv:
        sys.exit(__doc__)
    os.chdir(BASE_DIR)
    sys.path.insert(0, str(BASE_DIR))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    cmd = command(argv)
    if os.environ.get("TOSSUP_MIGRATE", "1") != "0":
        import django

        django.setup()
        wait_for_database(float(os.environ.get("DB_WAIT_SECONDS", "60")))
        migrate()
    sys.stdout.flush()
    os.execvp(cmd[0], cmd)


if __name__ == "__main__":
    main(sys.argv[1:])
