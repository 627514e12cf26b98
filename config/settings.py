"""Tossup settings: one module, every deployment knob read from the environment.

Defaults are the embedded demo: SQLite in the project folder and Redis at
``REDIS_URL`` (the demo and test launchers start a private redis-server and set it).
Production sets ``DATABASE_URL=postgres://…``.
"""

import contextlib
import os
import secrets
import tempfile
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env") if (BASE_DIR / ".env").exists() else None

VAR_DIR = Path(env("TOSSUP_VAR_DIR", default=str(BASE_DIR / "var")))  # per-install state, gitignored


def instance_name(database: dict) -> str:
    """A short stable name for the instance that serves ``database`` (a ``DATABASES`` entry): the
    first 12 hex digits of the SHA-256 of its engine, host, port and name. Processes of one
    instance share a database, so they derive the same name; another database, another name."""
    import hashlib

    who = "|".join(str(database.get(k) or "") for k in ("ENGINE", "HOST", "PORT", "NAME"))
    return hashlib.sha256(who.encode()).hexdigest()[:12]


def channel_layers(redis_url: str, prefix: str) -> dict:
    """The Channels layer on ``redis_url`` whose groups and channels start with ``prefix``."""
    return {
        "default": {
            "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
            "CONFIG": {"hosts": [redis_url], "prefix": prefix},
        }
    }


def load_or_create_secret_key(path: Path) -> str:
    """The install's SECRET_KEY from ``path``; on first use a random key is written there
    (mode 0600). Safe when several processes start at once: the key is written to a private
    temporary file and hard-linked into place, so every process reads the one winner.

    Raises ImproperlyConfigured when the file cannot be created (read-only install: set
    ``SECRET_KEY`` in the environment instead)."""
    try:
        key = path.read_text().strip()
    except FileNotFoundError:
        key = ""
    if key:
        return key
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".secret-")  # mode 0600
        try:
            with os.fdopen(fd, "w") as f:
                f.write(secrets.token_urlsafe(50) + "\n")
            with contextlib.suppress(FileExistsError):  # another process won the race
                os.link(tmp, path)
        finally:
            os.unlink(tmp)
        return path.read_text().strip()
    except OSError as exc:
        raise ImproperlyConfigured(f"cannot store a SECRET_KEY in {path} ({exc}); set SECRET_KEY") from exc


SECRET_KEY = env("SECRET_KEY", default="") or load_or_create_secret_key(VAR_DIR / "secret_key")
# Off unless asked for (DEBUG=1): a debug page shows settings and tracebacks to anyone.
DEBUG = env.bool("DEBUG", default=False)
# `serve --lan` sets ALLOWED_HOSTS to the machine's addresses for its children.
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])

INSTALLED_APPS = [
    "daphne",  # first: its runserver serves ASGI_APPLICATION, so `runserver` serves websockets too
    "django.contrib.admin",  # /admin/: competition/admin.py, irt/admin.py
    "django.contrib.contenttypes",
    "django.contrib.auth",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "servestatic",  # its configuration checks (the middleware below serves the files)
    "channels",
    "import_export",  # bulk question files in the admin
    "competition",
    "buzzer",
    "scoring",
    "irt",
    "frontend",
    "tools",  # demo, serve, bot_supervisor, the simulator's commands; no app imports it
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Static files straight from the app folders (finders): uvicorn on a LAN has no proxy in
    # front and the demo runs no collectstatic; unknown /static/ paths fall through to a 404.
    "servestatic.middleware.ServeStaticMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]

ROOT_URLCONF = "config.urls"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]

DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'tossup.sqlite3'}")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Several processes (server, worker, importers) share the file: wait for locks, don't fail.
    DATABASES["default"].setdefault("OPTIONS", {})["timeout"] = 30
    DATABASES["default"]["OPTIONS"]["transaction_mode"] = "IMMEDIATE"
    # The test database in a file, not shared-cache memory: the server's database threads
    # (buzzer/dbpools.py) use connections of their own, and shared-cache memory databases
    # refuse concurrent connections ("table is locked") where a file waits for the lock.
    DATABASES["default"]["TEST"] = {
        "NAME": str(Path(tempfile.gettempdir()) / f"tossup-test-{os.getpid()}.sqlite3")
    }
# Persistent connections, one per database thread (opening one cost about half of a word's
# service time on PostgreSQL); a connection found broken is replaced before its next use.
DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=600)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
# Threads per server process for the database calls of the live path (ticks, buzzes,
# commands) and of connecting clients (authentication, snapshots): see buzzer/dbpools.py.
# SQLite takes one writer at a time and makes the others sleep-and-retry, so one live thread.
_SQLITE = DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3"
LIVE_DB_THREADS = env.int("LIVE_DB_THREADS", default=1 if _SQLITE else 4)
CONNECT_DB_THREADS = env.int("CONNECT_DB_THREADS", default=2)
# Autocommit connections on which the reading drivers store their words from the event loop
# (buzzer.dbpools.TICK_CONNECTIONS); a word that finds them all busy takes a live thread.
TICK_DB_CONNECTIONS = env.int("TICK_DB_CONNECTIONS", default=LIVE_DB_THREADS)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env("REDIS_URL", default="redis://127.0.0.1:6379/0")
# One instance of Tossup is the processes that serve one database; two instances may share a Redis
# (two demos on one machine, a test run beside an event) and must never see each other's
# broadcasts, queued fits, leases or presence. Every Redis key Tossup writes — channel-layer
# groups, Celery's queues, the cache, driver leases, presence — starts with REDIS_PREFIX.
TOSSUP_INSTANCE = env("TOSSUP_INSTANCE", default="") or instance_name(DATABASES["default"])
REDIS_PREFIX = f"tossup:{TOSSUP_INSTANCE}:"

CHANNEL_LAYERS = channel_layers(REDIS_URL, REDIS_PREFIX)

CELERY_BROKER_URL = env("CELERY_BROKER_URL", default=REDIS_URL)
CELERY_RESULT_BACKEND = env("CELERY_RESULT_BACKEND", default=REDIS_URL)
CELERY_TASK_ACKS_LATE = True
# Tasks store their work in the database and nobody reads Celery results: without this,
# sending a task subscribes to the result store first, which stalls ~15 s while Redis is down.
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# IRT fits run on their own queue so a long refit never delays other work.
CELERY_TASK_ROUTES = {"irt.tasks.*": {"queue": "irt"}}
CELERY_TASK_TIME_LIMIT = 1800
# A task whose worker died unacked (acks late) is redelivered once it has been out this long,
# and the unacked set is scanned every 5 s, so a killed fit restarts about a minute after it
# began (the broker's default: an hour). Tasks running longer are redelivered too: fits are
# idempotent and claimed by one runner (irt.pipeline.fit_scope), and retry countdowns stay
# below this (irt.tasks.RETRY_BACKOFF_MAX).
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env.int("CELERY_VISIBILITY_TIMEOUT", default=60),
    "unacked_restore_interval": 5,
    "unacked_restore_throttle": 1,
    "global_keyprefix": REDIS_PREFIX,  # this instance's queues (kombu's Redis transport)
}
CELERY_RESULT_BACKEND_TRANSPORT_OPTIONS = {"global_keyprefix": REDIS_PREFIX}
# Publishing to a broker that is down fails fast (the outbox keeps the work; see
# competition.outbox.sweep_outbox) instead of blocking the caller.
CELERY_BROKER_CONNECTION_TIMEOUT = 2

# Media files of multimodal tossups (competition.models.MediaFile), by content hash; served by
# frontend.media_views.media_file, never from the internet.
MEDIA_ROOT = Path(env("MEDIA_ROOT", default=str(VAR_DIR / "media")))

STATIC_URL = "/static/"
STATIC_ROOT = Path(env("STATIC_ROOT", default=str(BASE_DIR / "staticfiles")))
# From the app folders by default (the demo and `./run` never collect); the image runs collectstatic
# and sets SERVESTATIC_USE_FINDERS=0, so production serves only what is in STATIC_ROOT.
SERVESTATIC_USE_FINDERS = env.bool("SERVESTATIC_USE_FINDERS", default=True)

# Organisers log in to create matches, list them and open dashboards.
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "frontend:moderator"
LOGOUT_REDIRECT_URL = "frontend:home"
# /api/ answers a failed CSRF check in its JSON error shape.
CSRF_FAILURE_VIEW = "frontend.errors.csrf_failure"

# Shared by every server process, so per-client limits hold across `serve --workers N`.
# Short timeouts: while Redis is down a join is let through without a count, not held up.
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": REDIS_PREFIX,
        "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
    }
}
# /api/join per client IP (django-ratelimit rate syntax).
JOIN_RATE_LIMIT = env("JOIN_RATE_LIMIT", default="10/m")

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

# Where the real data sets live (never copied into the repo); tests skip when absent.
SHARED_DATA_DIR = Path(env("TOSSUP_SHARED_DATA", default=str(BASE_DIR.parent / "shared" / "data")))

# Bots the server starts from the dashboard (competition/botlaunch.py, docs/BOTS.md "Bots the server
# runs"): the TF-IDF reference bot's training file (default: the qbreader dump under SHARED_DATA_DIR),
# model caches of the bots it starts, and a JSON file of the organiser's LLM endpoints ([{"name", "url", "model", "key_env", …}]).
BOT_TFIDF_TRAIN = env("TOSSUP_BOT_TFIDF_TRAIN", default="")
BOT_CACHE_DIR = Path(env("TOSSUP_BOT_CACHE_DIR", default=str(VAR_DIR / "cache")))
BOT_LLM_ENDPOINTS = env("TOSSUP_LLM_ENDPOINTS", default="")
# workshop (issue 32): comma-separated TF-IDF model files (TfidfGuesser.save; PATH@THRESHOLD buzzes at
# that confidence after 3 words) the writing workshop asks instead of the built-in bots (tests; empty:
# the built-in bots this server has).
WORKSHOP_BOTS = env("TOSSUP_WORKSHOP_BOTS", default="")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="WARNING")},
}
