"""``manage.py create_organiser USERNAME [--password-stdin]``: an organiser account for scripts.

Organisers log in to create matches, see the match list and open dashboards, and use the admin
(``/admin/``) with every permission on the competition and irt models (the admin itself keeps
matches, logs and fits read-only). Without
``--password-stdin`` a random password is generated and printed once (the only time it is
shown). ``createsuperuser`` works too; this command needs no prompts.
"""

from __future__ import annotations

import secrets
import sys
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser


class Command(BaseCommand):
    help = "Create an organiser account (prints a generated password unless --password-stdin)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument(
            "--password-stdin",
            action="store_true",
            help="read the password from the first line of standard input",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        User = get_user_model()
        username = opts["username"].strip()
        if not username:
            raise CommandError("the username is empty")
        if User.objects.filter(username=username).exists():
            raise CommandError(
                f"organiser {username!r} already exists (change its password with changepassword)"
            )
        generated = not opts["password_stdin"]
        password = secrets.token_urlsafe(12) if generated else sys.stdin.readline().rstrip("\r\n")
        if not password:
            raise CommandError("no password on standard input")
        user = User(username=username, is_staff=True)
        try:
            validate_password(password, user)
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from exc
        user.set_password(password)
        user.save()
        user.user_permissions.set(
            Permission.objects.filter(content_type__app_label__in=("competition", "irt"))
        )
        if generated:
            self.stdout.write(f"organiser {username} created; password: {password}")
        else:
            self.stdout.write(f"organiser {username} created")
