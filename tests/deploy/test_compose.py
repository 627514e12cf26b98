"""The docker compose deployment as far as this machine allows (no Docker engine): compose.yaml
names the services a club needs with their health checks and the migrate-on-start entrypoint,
the bot supervisor runs the dashboard's bots beside the server (what `serve` runs as its child),
and `docker compose config` accepts the file (skipped without a compose client)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from django.conf import settings

from tools import launcher

ROOT = Path(__file__).resolve().parents[2]
SERVICES = ("web", "worker", "bot-supervisor", "redis", "postgres")


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((ROOT / "compose.yaml").read_text())


def test_compose_names_the_services_each_with_a_health_check(compose: dict) -> None:
    services = compose["services"]
    assert set(SERVICES) <= set(services)
    probes = {
        "web": "/healthz",
        "worker": "inspect ping",
        "bot-supervisor": "bot_supervisor.alive",
        "redis": "redis-cli",
        "postgres": "pg_isready",
    }
    for name, probe in probes.items():
        test = services[name]["healthcheck"]["test"]
        assert test[0] in ("CMD", "CMD-SHELL") and probe in " ".join(test), name
    # Anything else is opt-in (a profile), so `docker compose up` starts exactly these five.
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


def test_the_bot_supervisor_runs_the_dashboards_bots_as_serve_does(compose: dict) -> None:
    """`serve` runs `manage.py bot_supervisor` as a child; under compose it is a service of the same
    image, behind the entrypoint (the database first), reaching web over the compose network."""
    service, web = compose["services"]["bot-supervisor"], compose["services"]["web"]
    command = service["command"]
    assert command[:3] == ["python", "manage.py", "bot_supervisor"] and "entrypoint" not in service
    assert command[command.index("--url") + 1] == "ws://web:8000"
    assert (service["image"], service["build"]) == (web["image"], web["build"])
    assert service["environment"] == web["environment"]  # same database, Redis, data and endpoints
    assert "web" in service["environment"]["ALLOWED_HOSTS"].split(",")
    assert service["depends_on"]["web"] == {"condition": "service_healthy"}
    assert service["depends_on"]["postgres"] == {"condition": "service_healthy"}
    # web offers the guessers whose files it sees; the supervisor runs them from the same files.
    assert "./data:/data:ro" in service["volumes"] and "./data:/data:ro" in web["volumes"]
    assert "botcache:/app/var/cache" in service["volumes"] and "botcache" in compose["volumes"]
    # The heartbeat the health check reads is the one the supervisor writes, in its log folder.
    from tools.management.commands import bot_supervisor

    assert "<log-dir>/bot_supervisor.alive" in (bot_supervisor.__doc__ or "")
    assert "/app/var/bot_supervisor.alive" in " ".join(service["healthcheck"]["test"])
    assert "var/cache" in (ROOT / "Dockerfile").read_text()  # the cache volume starts owned by tossup


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
    assert resolved["bot-supervisor"]["environment"]["SECRET_KEY"] == "a-test-key"
    env_file.write_text("")
    refused = subprocess.run(
        [*run, "--env-file", str(env_file), "config"], capture_output=True, text=True, timeout=60
    )
    assert refused.returncode != 0 and "set SECRET_KEY in .env" in refused.stderr


def test_dockerignore_keeps_local_state_out_of_the_image() -> None:
    patterns = {line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()}
    for needed in (".git", ".venv", "var", "**/*.sqlite3", "**/__pycache__", "**/.mypy_cache", ".env"):
        assert needed in patterns, needed
