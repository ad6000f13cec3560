"""The deployment files against the code: docker-compose.yml, deploy/k8s/, deploy/Dockerfile and
.env.example. No Docker engine or cluster runs here, so every command is parsed by the real
command-line parsers (typer's for `ingest`, Celery's for `celery`, Flower's option list), every
environment variable is checked against `Settings`, and the files go through
the Compose specification's JSON schema and `kubernetes-validate --strict`, which work offline."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib import import_module
from importlib.resources import files
from typing import Any

import click
import pytest
import typer
import yaml
from celery import Celery
from celery.bin.base import CLIContext
from celery.bin.celery import celery as celery_cli
from dotenv import dotenv_values
from flower.options import default_options as flower_options
from jsonschema import Draft202012Validator, ValidationError
from sqlalchemy.engine import make_url
from yamllint import linter
from yamllint.config import YamlLintConfig

from deploy import gen_env_example
from shared import layout
from shared.settings import Settings
from tests.support.paths import ROOT
from worker.app import ROUTES
from worker.cli.main import app as ingest_app

K8S = ROOT / "deploy" / "k8s"
DOCKERFILE = (ROOT / "deploy" / "Dockerfile").read_text()
COMPOSE_TEXT = (ROOT / "docker-compose.yml").read_text()
COMPOSE = yaml.safe_load(COMPOSE_TEXT)
APPLIED = yaml.safe_load((K8S / "kustomization.yaml").read_text())["resources"]
MANIFESTS = [doc for name in APPLIED for doc in yaml.safe_load_all((K8S / name).read_text())]
EXAMPLE_SECRETS = list(yaml.safe_load_all((K8S / "secret.example.yaml").read_text()))
APP_IMAGE = "hospital-ingest"

SETTINGS = {name.upper() for name in Settings.model_fields}
# Variables that are not our settings, each read by something named here. Keep it short.
EXTERNAL = {
    "POSTGRES_USER",  # the postgres image
    "POSTGRES_DB",
    "POSTGRES_PASSWORD",
    "FLOWER_BASIC_AUTH",  # Flower's login (user:password)
    "REDIS_ADDRESS",  # KEDA's Redis trigger (host:port of REDIS_URL)
    "INGEST_IMAGE",  # compose: which image to run
    "TIKTOKEN_CACHE_DIR",  # tiktoken's vocabulary folder
    "PROMETHEUS_MULTIPROC_DIR",  # prometheus_client: prefork children's counts (worker-io)
    "OMP_THREAD_LIMIT",  # Tesseract's threads per process (worker-ocr)
}
IMAGE_ONLY = {"PATH", "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE", "UV_COMPILE_BYTECODE"}
IMAGE_ONLY |= {"UV_LINK_MODE", "UV_PYTHON_DOWNLOADS", "UV_PROJECT_ENVIRONMENT"}
QUEUES = {route["queue"] for route in ROUTES.values()}


def image_default(instruction: str) -> list[str]:
    """The exec-form ENTRYPOINT or CMD of the Dockerfile."""
    (found,) = re.findall(rf"^{instruction} (\[.*\])$", DOCKERFILE, re.MULTILINE)
    return json.loads(found)


def our_services() -> dict[str, dict[str, Any]]:
    return {n: s for n, s in COMPOSE["services"].items() if APP_IMAGE in str(s.get("image"))}


def compose_argv(service: dict[str, Any]) -> list[str]:
    return (service.get("entrypoint") or image_default("ENTRYPOINT")) + (
        service.get("command") or image_default("CMD")
    )


def our_containers() -> list[tuple[str, dict[str, Any]]]:
    """(workload name, container) for every container running our image in the manifests."""
    found = []
    for doc in MANIFESTS:
        template = doc.get("spec", {}).get("template", {})
        for container in template.get("spec", {}).get("containers", []):
            if container["image"] == APP_IMAGE:
                found.append((doc["metadata"]["name"], container))
    return found


def our_init_containers() -> list[tuple[str, dict[str, Any]]]:
    """(workload name, init container) for every init container running our image."""
    found = []
    for doc in MANIFESTS:
        spec = doc.get("spec", {}).get("template", {}).get("spec", {})
        for container in spec.get("initContainers", []):
            if container["image"] == APP_IMAGE:
                found.append((doc["metadata"]["name"], container))
    return found


def k8s_argv(container: dict[str, Any]) -> list[str]:
    return (container.get("command") or image_default("ENTRYPOINT")) + (
        container.get("args") or image_default("CMD")
    )


def parse_ingest(args: list[str]) -> Any:
    """Parse `ingest ARGS` with the real typer app: unknown commands or options raise."""
    command = typer.main.get_command(ingest_app)  # typer's own (vendored) click
    name = "ingest"
    while hasattr(command, "list_commands"):  # a group
        assert args, f"`{name}` needs a subcommand"
        name, *args = args
        found = command.get_command(command.context_class(command), name)
        assert found is not None, f"`ingest {name}` is not a command of worker.cli.main"
        command = found
    return command.make_context(name, list(args))


def celery_context(sub: str, args: list[str]) -> click.Context:
    """Celery's parser for one subcommand; its option types read the app from `ctx.obj`."""
    obj = CLIContext(app=import_module("worker.app").app, no_color=True, workdir=None)
    return celery_cli.commands[sub].make_context(sub, list(args), obj=obj)


def parse_celery(args: list[str]) -> tuple[str, click.Context]:
    """Parse `celery -A worker.app SUB ARGS` with Celery's own parser (Flower: its options)."""
    assert args[:2] == ["-A", "worker.app"], args
    assert isinstance(import_module("worker.app").app, Celery)
    sub, *rest = args[2:]
    assert sub in celery_cli.commands, f"`celery {sub}` is not a Celery command"
    if sub == "flower":  # Flower takes tornado options; check each against its option list
        for option in rest:
            name = option.lstrip("-").partition("=")[0].replace("-", "_")
            assert name in flower_options, f"flower has no option {option}"
        return sub, click.Context(celery_cli.commands[sub])
    return sub, celery_context(sub, rest)


def check_argv(argv: list[str]) -> tuple[str, click.Context]:
    program, *args = argv
    if program == "ingest":
        return "ingest", parse_ingest(args)
    assert program == "celery", f"unknown entry point {program}"
    return parse_celery(args)


def celery_processes(argvs: dict[str, list[str]], sub: str) -> dict[str, click.Context]:
    return {
        name: ctx
        for name, argv in argvs.items()
        if argv[0] == "celery" and (parsed := check_argv(argv))[0] == sub
        for ctx in [parsed[1]]
    }


def all_argvs() -> dict[str, list[str]]:
    compose = {f"compose:{n}": compose_argv(s) for n, s in our_services().items()}
    k8s = {f"k8s:{n}": k8s_argv(c) for n, c in our_containers()}
    k8s |= {f"k8s:{n}/{c['name']}": k8s_argv(c) for n, c in our_init_containers()}
    return compose | k8s


# --- entry points ----------------------------------------------------------------------------


def test_every_command_is_a_real_entry_point() -> None:
    argvs = all_argvs()
    assert {"compose:migrate", "compose:api", "compose:beat", "compose:flower"} <= argvs.keys()
    for name, argv in argvs.items():
        try:
            check_argv(argv)
        except Exception as error:  # click's and typer's usage errors, failed assertions
            pytest.fail(f"{name}: {' '.join(argv)}: {error}")
    migrate = ["ingest", "db", "upgrade"]
    assert argvs["compose:migrate"] == argvs["k8s:ingest-api/migrate"] == migrate
    assert argvs["compose:api"] == argvs["k8s:ingest-api"] == ["ingest", "api"]


def test_workers_consume_every_queue_and_their_probes_ping_their_own_node() -> None:
    for where in ("compose:", "k8s:"):
        argvs = {n: a for n, a in all_argvs().items() if n.startswith(where)}
        workers = celery_processes(argvs, "worker")
        consumed = [q for ctx in workers.values() for q in ctx.params["queues"]]
        assert sorted(consumed) == sorted(QUEUES), f"{where} each queue, exactly once"
        for ctx in workers.values():
            # prefork: the only pool that enforces hard time limits (Qdrant server here)
            assert ctx.params["pool"].__module__ == "celery.concurrency.prefork"
    probes = {n: s["healthcheck"]["test"][1] for n, s in our_services().items() if "worker" in n}
    probes |= {
        n: c["livenessProbe"]["exec"]["command"][2] for n, c in our_containers() if "worker" in n
    }
    assert len(probes) == 6  # cpu, io and ocr workers, in compose and Kubernetes
    for name, probe in probes.items():
        argv = probe.replace("$$", "$").split()
        sub, ctx = check_argv(argv)
        worker = next(a for n, a in all_argvs().items() if n.endswith(name))
        (hostname,) = [a.removeprefix("--hostname=") for a in worker if a.startswith("--hostname=")]
        node = hostname.replace("%h", "$HOSTNAME")  # the pod's or container's host name
        assert (sub, ctx.params["destination"]) == ("inspect", [node]), name


# --- environment variables -------------------------------------------------------------------


def test_every_environment_variable_is_a_setting_or_a_known_external_one() -> None:
    known = SETTINGS | EXTERNAL
    named: dict[str, set[str]] = {
        "compose ${...}": set(re.findall(r"\$\{(\w+)", COMPOSE_TEXT)),
        "compose environment": {
            key for s in COMPOSE["services"].values() for key in s.get("environment", {})
        },
        "k8s config and secrets": {
            key
            for doc in MANIFESTS + EXAMPLE_SECRETS
            if doc["kind"] in ("ConfigMap", "Secret")
            for key in {**doc.get("data", {}), **doc.get("stringData", {})}
        },
        "k8s container env": {e["name"] for _, c in our_containers() for e in c.get("env", [])},
        "Dockerfile ENV": set(re.findall(r"^\s+(\w+)=", DOCKERFILE, re.MULTILINE)) - IMAGE_ONLY,
    }
    for where, names in named.items():
        assert names, where
        assert names <= known, f"{where}: unknown {sorted(names - known)}"
    assert {"DATABASE_URL", "REDIS_URL", "QDRANT_URL"} <= named["compose environment"]
    assert "QDRANT_PATH" not in str(COMPOSE) + str(MANIFESTS)  # local Qdrant: one process only
    for _, container in our_containers() + our_init_containers():
        names = {e["name"] for e in container.get("env", [])}
        assert not names & {"DATABASE_URL", "REDIS_URL"}, "only from the ConfigMap and Secret"


def test_the_api_beside_celery_workers_has_a_qdrant_server() -> None:
    """`ingest api` refuses REDIS_URL with a local index folder (`shared.layout`): compose and
    Kubernetes give the API a broker and a Qdrant server."""
    compose = compose_config(POSTGRES_PASSWORD="pg-secret", FLOWER_BASIC_AUTH="ops:flower")
    (configmap,) = [doc["data"] for doc in MANIFESTS if doc["kind"] == "ConfigMap"]
    (api,) = [container for name, container in our_containers() if name == "ingest-api"]
    assert {"configMapRef": {"name": "ingest-config"}} in api["envFrom"]
    k8s = {**configmap, "REDIS_URL": "redis://redis:6379/0"}  # the Secret's, filled in
    for where, env in {"compose": compose["services"]["api"]["environment"], "k8s": k8s}.items():
        settings = Settings(
            redis_url=env["REDIS_URL"],
            qdrant_url=env.get("QDRANT_URL"),
            _env_file=None,  # type: ignore[call-arg]
        )
        assert layout.api_refusal(settings) == "", where
    local = Settings(redis_url="redis://redis:6379/0", qdrant_url=None, _env_file=None)  # type: ignore[call-arg]
    assert "QDRANT_URL" in layout.api_refusal(local)


# --- migrations before serving, images, KEDA's Secret ---------------------------------------


def test_every_pod_that_uses_the_database_migrates_first_and_no_job_is_applied() -> None:
    """An init container, not a Job: a Job's template is immutable, so `kubectl apply -k` with
    a new image tag would fail on it; an init container runs again with every new image."""
    assert "Job" not in {d["kind"] for d in MANIFESTS}
    migrating = {n for n, c in our_init_containers() if k8s_argv(c) == ["ingest", "db", "upgrade"]}
    serving = {n for n, c in our_containers() if n != "ingest-flower"}
    assert serving and migrating == serving
    for _, container in our_init_containers():
        assert container["envFrom"] == [
            {"configMapRef": {"name": "ingest-config"}},
            {"secretRef": {"name": "ingest-secrets"}},
        ]


def test_the_example_names_a_release_tag_not_latest() -> None:
    (image,) = yaml.safe_load((K8S / "kustomization.yaml").read_text())["images"]
    assert image["newTag"] and image["newTag"] != "latest"
    assert ":latest" not in "".join((K8S / n).read_text() for n in APPLIED)


def test_keda_reads_redis_from_the_apps_own_secret() -> None:
    (auth,) = [d for d in MANIFESTS if d["kind"] == "TriggerAuthentication"]
    refs = {r["parameter"]: (r["name"], r["key"]) for r in auth["spec"]["secretTargetRef"]}
    assert refs == {
        "address": ("ingest-secrets", "REDIS_ADDRESS"),
        "password": ("ingest-secrets", "REDIS_PASSWORD"),
    }
    (secret,) = [d for d in EXAMPLE_SECRETS if d["metadata"]["name"] == "ingest-secrets"]
    assert {"REDIS_URL", "REDIS_ADDRESS", "REDIS_PASSWORD"} <= secret["stringData"].keys()
    for scaled in [d for d in MANIFESTS if d["kind"] == "ScaledObject"]:
        for trigger in scaled["spec"]["triggers"]:
            assert "address" not in trigger["metadata"]
            assert trigger["authenticationRef"] == {"name": auth["metadata"]["name"]}


def test_compose_waits_for_a_healthy_qdrant() -> None:
    assert "healthcheck" in COMPOSE["services"]["qdrant"]
    for name, service in our_services().items():
        if name not in ("migrate", "flower"):
            assert service["depends_on"]["qdrant"] == {"condition": "service_healthy"}, name


def test_env_example_lists_exactly_the_settings_and_is_generated() -> None:
    text = (ROOT / ".env.example").read_text()
    assert text == gen_env_example.render(), "run: uv run python deploy/gen_env_example.py"
    listed = re.findall(r"^# ([A-Z][A-Z0-9_]*)=", text, re.MULTILINE)
    assert sorted(listed) == sorted(SETTINGS)
    required = re.findall(r"^([A-Z][A-Z0-9_]*)=$", text, re.MULTILINE)
    assert set(required) <= EXTERNAL and "FLOWER_BASIC_AUTH" in required


# --- the rules of the design ------------------------------------------------------------------


def test_redis_never_evicts_and_persists() -> None:
    command = COMPOSE["services"]["redis"]["command"]
    pairs = dict(zip(command[1::2], command[2::2], strict=False))
    assert command[0] == "redis-server"
    assert pairs["--maxmemory-policy"] == "noeviction"
    assert pairs["--appendonly"] == "yes"
    assert any(v.endswith(":/data") for v in COMPOSE["services"]["redis"]["volumes"])


def test_beat_runs_exactly_once() -> None:
    compose_beats = [n for n, s in our_services().items() if "beat" in compose_argv(s)]
    assert compose_beats == ["beat"]
    assert COMPOSE["services"]["beat"]["deploy"] == {"replicas": 1}
    k8s_beats = [n for n, c in our_containers() if "beat" in k8s_argv(c)]
    assert k8s_beats == ["ingest-beat"]
    (deployment,) = [d for d in MANIFESTS if d["metadata"]["name"] == "ingest-beat"]
    assert deployment["spec"]["replicas"] == 1
    assert deployment["spec"]["strategy"] == {"type": "Recreate"}  # never two during a rollout
    scaled = {d["spec"]["scaleTargetRef"]["name"] for d in MANIFESTS if d["kind"] == "ScaledObject"}
    assert "ingest-beat" not in scaled


def test_flower_needs_a_password() -> None:
    flower = COMPOSE["services"]["flower"]
    assert re.fullmatch(
        r"\$\{FLOWER_BASIC_AUTH:\?[^}]+\}", flower["environment"]["FLOWER_BASIC_AUTH"]
    )
    everything = COMPOSE_TEXT + "".join((K8S / n).read_text() for n in APPLIED)
    assert "FLOWER_UNAUTHENTICATED_API" not in everything and "basic-auth" not in everything
    (container,) = [c for n, c in our_containers() if n == "ingest-flower"]
    (auth,) = [e for e in container["env"] if e["name"] == "FLOWER_BASIC_AUTH"]
    assert (
        set(auth) == {"name", "valueFrom"} and "optional" not in auth["valueFrom"]["secretKeyRef"]
    )
    secrets = [d for d in MANIFESTS if d["kind"] == "Secret"]
    assert secrets == [], "no Secret with values is applied from the repository"
    example = {k: v for d in EXAMPLE_SECRETS for k, v in d["stringData"].items()}
    assert example["FLOWER_BASIC_AUTH"] == ""


def test_kubernetes_api_probes_worker_resources_and_queue_scaling() -> None:
    (api,) = [c for n, c in our_containers() if n == "ingest-api"]
    assert api["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert api["startupProbe"]["httpGet"]["path"] == "/healthz"
    assert api["readinessProbe"]["httpGet"]["path"] == "/readyz"
    workers = {n: c for n, c in our_containers() if n.startswith("ingest-worker-")}
    for container in workers.values():
        assert {"cpu", "memory"} <= container["resources"]["requests"].keys()
    scaled = {
        d["spec"]["scaleTargetRef"]["name"]: d["spec"]["triggers"]
        for d in MANIFESTS
        if d["kind"] == "ScaledObject"
    }
    assert scaled.keys() == workers.keys()
    for name, triggers in scaled.items():
        (trigger,) = triggers
        args = workers[name]["args"][1:]
        queues = celery_context("worker", args).params["queues"]
        assert trigger["type"] == "redis" and [trigger["metadata"]["listName"]] == queues
    kinds = {d["kind"] for d in MANIFESTS}
    assert {"Deployment", "Service", "ConfigMap", "ScaledObject", "TriggerAuthentication"} <= kinds


def test_image_is_slim_non_root_locked_and_carries_the_vocabulary() -> None:
    assert re.search(r"^ARG PYTHON_IMAGE=python:3\.11-slim", DOCKERFILE, re.MULTILINE)
    assert "uv sync --frozen --no-dev" in DOCKERFILE
    assert re.search(r"^USER ingest$", DOCKERFILE, re.MULTILINE)
    assert "TIKTOKEN_CACHE_DIR=/opt/tiktoken" in DOCKERFILE and "cl100k_base" in DOCKERFILE
    assert "FROM scratch AS tiktoken" in DOCKERFILE  # replaceable by --build-context tiktoken=
    assert re.search(r"^HEALTHCHECK .*\n.*/healthz", DOCKERFILE, re.MULTILINE)
    assert image_default("ENTRYPOINT") == ["ingest"]


# --- the tools that read these files ----------------------------------------------------------


def test_yaml_lints_clean() -> None:
    config = YamlLintConfig("extends: relaxed\nrules:\n  line-length: {max: 140}\n")
    for path in [ROOT / "docker-compose.yml", *K8S.glob("*.yaml")]:
        problems = [p for p in linter.run(path.read_text(), config) if p.level == "error"]
        assert problems == [], f"{path.name}: {problems}"


def test_kubernetes_validate_strict() -> None:
    files = [str(K8S / n) for n in APPLIED] + [str(K8S / "secret.example.yaml")]
    result = subprocess.run(
        [sys.executable, "-m", "kubernetes_validate", "--strict", *files],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("passed for resource") == 11, result.stdout


# Compose's interpolation: `$$`, `${NAME}`, `${NAME:-default}`, `${NAME-default}`,
# `${NAME:?message}`, `${NAME?message}` (the forms of the Compose specification).
VARIABLE = re.compile(r"\$(?:\$|\{(\w+)(?:(:?[-?])([^}]*))?\})")


def interpolate(node: Any, env: dict[str, str]) -> Any:
    """`node` (loaded YAML) with every variable replaced as `docker compose config` does."""
    if isinstance(node, dict):
        return {key: interpolate(value, env) for key, value in node.items()}
    if isinstance(node, list):
        return [interpolate(value, env) for value in node]
    if not isinstance(node, str):
        return node

    def one(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        name, operator, argument = match.groups()
        value = env.get(name)
        if operator is None:
            return value or ""
        missing = not value if operator.startswith(":") else value is None
        if operator.endswith("-"):
            return argument if missing else str(value)
        if missing:
            raise ValueError(f"required variable {name} is missing a value: {argument}")
        return str(value)

    return VARIABLE.sub(one, node)


def compose_config(**shell: str) -> dict[str, Any]:
    """docker-compose.yml resolved with `.env.example` as `.env` and `shell` on top (the
    shell's variables win, as in Compose), checked against the Compose specification's JSON
    schema (compose-spec.json as check-jsonschema ships it: no Docker binary needed)."""
    env = {k: v for k, v in dotenv_values(ROOT / ".env.example").items() if v is not None}
    resolved = interpolate(yaml.safe_load(COMPOSE_TEXT), {**env, **shell})
    checker = Draft202012Validator.FORMAT_CHECKER
    Draft202012Validator(compose_schema(), format_checker=checker).validate(resolved)
    return resolved


def compose_schema() -> dict[str, Any]:
    """The Compose specification's JSON schema, as the check-jsonschema package ships it."""
    vendor = files("check_jsonschema.builtin_schemas.vendor")
    return json.loads((vendor / "compose-spec.json").read_text())


def test_the_compose_schema_refuses_what_compose_refuses() -> None:
    """The schema check has teeth: an unknown key and a wrong type are refused."""
    broken = yaml.safe_load(COMPOSE_TEXT)
    broken["services"]["api"]["restart_policy"] = "always"
    schema = compose_schema()
    with pytest.raises(ValidationError, match="restart_policy"):
        Draft202012Validator(schema).validate(broken)
    broken = yaml.safe_load(COMPOSE_TEXT)
    broken["services"]["api"]["ports"] = "8000:8000"
    with pytest.raises(ValidationError):
        Draft202012Validator(schema).validate(broken)


def test_compose_accepts_the_file_and_demands_the_passwords() -> None:
    password = "p@ss%w0rd/x:y"  # what breaks a URL built by pasting
    resolved = compose_config(POSTGRES_PASSWORD=password, FLOWER_BASIC_AUTH="ops:flower-secret")
    assert resolved["services"]["flower"]["environment"]["FLOWER_BASIC_AUTH"] == "ops:flower-secret"
    assert resolved["services"]["postgres"]["environment"]["POSTGRES_PASSWORD"] == password
    assert resolved["services"]["api"]["image"] == "hospital-ingest:latest"
    for name in ("worker-io", "api", "migrate"):
        environment = resolved["services"][name]["environment"]
        settings = Settings(
            database_url=environment["DATABASE_URL"],
            database_password=environment["DATABASE_PASSWORD"],
            _env_file=None,  # type: ignore[call-arg]
        )
        url = make_url(settings.database_url)
        assert (url.username, url.password, url.host, url.database) == (
            "ingest",
            password,
            "postgres",
            "ingest",
        )
    with pytest.raises(ValueError, match="FLOWER_BASIC_AUTH"):
        compose_config(POSTGRES_PASSWORD="pg-secret")
    with pytest.raises(ValueError, match="POSTGRES_PASSWORD"):
        compose_config(FLOWER_BASIC_AUTH="ops:flower-secret")
