"""docker-compose.yml, deploy/nginx.conf and the Dockerfile, checked without a Docker daemon.

The machines that run CI have no Docker daemon, so the deployment files are checked for what
would break a venue start: Redis with AOF and a healthcheck, exactly one ingest (the single
writer), two edges behind a websocket-aware balancer, every hub command accepted by our own CLI
parser with files that exist in the image. Where a compose client exists, `config` must accept
the file too.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from hub.cli.main import build_parser
from hub.cli.offline import load_for_preparation
from hub.files.config import load_config

ROOT = Path(__file__).resolve().parent.parent
HUBS = ("ingest", "edge1", "edge2")
EDGES = ("edge1", "edge2")


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    data = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    assert isinstance(data, dict)
    return data


def option(command: list[str], name: str) -> str:
    return command[command.index(name) + 1]


def defaults(text: str) -> str:
    """Compose's ``${NAME:-default}`` interpolation with nothing set in the environment."""
    return re.sub(r"\$\{[A-Z_]+:-([^}]*)\}", r"\1", text)


TOKENS = ("DUPLICAST_COMMENTATOR_TOKEN", "DUPLICAST_OPERATOR_TOKEN")


def test_redis_keeps_the_journal_and_reports_health(compose: dict[str, Any]) -> None:
    redis = compose["services"]["redis"]
    command = " ".join(redis["command"])
    assert "--appendonly yes" in command
    assert "--appendfsync always" in command  # an acknowledged event survives a power cut
    assert "--maxmemory-policy noeviction" in command  # never evict the journal
    # a flooded (or stalled) pub/sub reader is cut, not allowed to grow Redis without bound;
    # (bench/flood_bench.py starts its Redis with the same limits)
    assert "--client-output-buffer-limit pubsub 16mb 4mb 10" in command
    assert redis["healthcheck"]["test"][-1] == "ping"
    assert any(v.endswith(":/data") for v in redis["volumes"])


def test_one_ingest_two_edges_each_a_valid_command(compose: dict[str, Any]) -> None:
    services = compose["services"]
    roles = {}
    parser = build_parser()
    for name in HUBS:
        service = services[name]
        assert service["depends_on"]["redis"]["condition"] == "service_healthy"
        command = service["command"]
        args = parser.parse_args([defaults(c) for c in command])  # exits on a bad option
        assert "--redis" not in command  # by environment: argv is public (ps, /proc)
        assert defaults(service["environment"]["DUPLICAST_REDIS_URL"]) == "redis://redis:6379/0"
        roles[name] = args.role
        # The event comes from the mounted folder, never from the image's samples/.
        assert str(args.config) == "/event/event.toml"
        assert "${DUPLICAST_EVENT_DIR:-./event}:/event:ro" in service["volumes"]
    assert roles == {"ingest": "ingest", "edge1": "edge", "edge2": "edge"}


def test_compose_supplies_no_token_and_requires_both(compose: dict[str, Any]) -> None:
    """No fallback token (``change-me-...`` was one): compose stops with a message unless the
    operator sets each token, and the hub refuses a weak one anyway."""
    text = (ROOT / "docker-compose.yml").read_text()
    assert "change-me" not in text.lower()
    env = compose["services"]["ingest"]["environment"]
    for token in TOKENS:
        assert re.fullmatch(rf"\$\{{{token}:\?[^}}]+\}}", env[token]), env[token]
    for name in EDGES:  # their proofs, from the file `duplicast proofs` printed: required
        proofs = compose["services"][name]["env_file"]
        assert re.fullmatch(r"\$\{DUPLICAST_EDGE_PROOFS_FILE:\?[^}]+\}", proofs), proofs


def test_nginx_never_logs_a_query_string_or_a_referer() -> None:
    """``?token=`` in overlay and websocket URLs must not land in the access log: a format of
    its own without ``$request``/``$request_uri``/``$args`` (nor the Referer, which is an
    overlay page's own URL, token included), and the access log uses it."""
    conf = (ROOT / "deploy" / "nginx.conf").read_text()
    formats = dict(re.findall(r"log_format\s+(\w+)\s+((?:'[^']*'\s*)+);", conf))
    assert formats, "nginx.conf defines no log_format"
    logs = re.findall(r"access_log\s+([^;]+);", conf)
    assert logs and all(line.split()[-1] in formats or line.strip() == "off" for line in logs)
    for fmt in formats.values():
        for leak in (
            "$request ",
            '$request"',
            "$request_uri",
            "$args",
            "$query_string",
            "$arg_",
            "$http_referer",
            "$is_args",
        ):
            assert leak not in fmt, leak
        assert "$uri" in fmt


@pytest.mark.parametrize("command", ["serve", "demo"])
def test_serve_refuses_default_or_weak_tokens(command: str) -> None:
    env = {"PATH": "/usr/bin:/bin"}
    for weak in ("change-me-operator", "short", "aaaaaaaaaaaaaaaaaaaaaaaa"):
        env["DUPLICAST_OPERATOR_TOKEN"] = weak
        result = subprocess.run(
            [sys.executable, "-m", "hub", command, "--redis", "redis://127.0.0.1:1/0"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 2, result.stderr
        assert f"duplicast {command}: refusing to start: DUPLICAST_OPERATOR_TOKEN" in result.stderr


def test_weak_token_rules() -> None:
    from hub.serve.auth import Auth, weak_token, weak_tokens

    assert weak_token("change-me-commentator") and weak_token("secret")
    assert weak_token("x" * 40) and weak_token("0123456789")
    assert weak_token("kq3Z-vYp8_Lw2mXc7RtB9sHd") is None
    assert weak_tokens(Auth()) == []  # no token: that role is off, which is not weak
    same = "kq3Z-vYp8_Lw2mXc7RtB9sHd"
    assert weak_tokens(Auth(same, same)) == [
        "DUPLICAST_COMMENTATOR_TOKEN and DUPLICAST_OPERATOR_TOKEN are the same"
    ]


def test_the_balancer_proxies_websockets_to_both_edges(compose: dict[str, Any]) -> None:
    lb = compose["services"]["lb"]
    assert set(lb["depends_on"]) == {"edge1", "edge2", "ingest"}  # (its control upstream)
    mount = next(v for v in lb["volumes"] if "nginx.conf" in v)
    conf = (ROOT / mount.split(":")[0]).read_text()
    upstream = re.search(r"upstream edges \{(.*?)\}", conf, re.S)
    assert upstream is not None
    assert "server edge1:8000" in upstream.group(1) and "server edge2:8000" in upstream.group(1)
    ws = re.search(r"location /ws \{(.*?)\}", conf, re.S)
    assert ws is not None
    block = ws.group(1)
    assert "proxy_http_version 1.1" in block
    assert "proxy_set_header Upgrade $http_upgrade" in block
    assert "proxy_set_header Connection $connection_upgrade" in block
    listen = re.search(r"listen (\d+);", conf)
    assert listen is not None and any(p.endswith(f":{listen.group(1)}") for p in lb["ports"])


def test_the_image_serves_the_overlays_it_copies() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    for folder in ("hub", "overlays", "samples"):
        assert f"COPY {folder} ./{folder}" in dockerfile
    # A wheel install puts `hub` in site-packages: the overlays are found through this.
    assert "DUPLICAST_HOME=/app" in dockerfile and "WORKDIR /app" in dockerfile


def test_runner_finds_overlays_through_duplicast_home(tmp_path: Path) -> None:
    (tmp_path / "overlays").mkdir()
    code = "from hub.roles import embedded; print(embedded.OVERLAYS)"
    env = {"DUPLICAST_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert out == str(tmp_path / "overlays")


def compose_client() -> list[str] | None:
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    if shutil.which("docker"):
        probe = subprocess.run(["docker", "compose", "version"], capture_output=True)
        if probe.returncode == 0:
            return ["docker", "compose"]
    return None


@pytest.mark.skipif(compose_client() is None, reason="no docker compose client on this machine")
def test_compose_client_accepts_the_file(tmp_path: Path) -> None:
    client = compose_client()
    assert client is not None
    (tmp_path / "edge.env").write_text("")  # compose reads the edges' proofs file
    overrides = ("docker-compose.venue.yml", "docker-compose.projector.yml")
    for extra in ([], *(["-f", str(ROOT / "deploy" / name)] for name in overrides)):
        env = {**os.environ, **{token: "kq3Z-vYp8_Lw2mXc7RtB9sHd" + token for token in TOKENS}}
        env["DUPLICAST_DECK_KEY_FILE"] = "/srv/secrets/deck.key"
        env["DUPLICAST_EDGE_PROOFS_FILE"] = str(tmp_path / "edge.env")
        for role in ("INGEST", "EDGE"):  # the venue override requires them
            env[f"DUPLICAST_{role}_REDIS_URL"] = f"redis://duplicast-{role.lower()}:pw@redis/0"
        result = subprocess.run(
            [*client, "-f", str(ROOT / "docker-compose.yml"), *extra, "config", "-q"],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
        )
        assert result.returncode == 0, result.stderr
        without = {k: v for k, v in os.environ.items() if k not in TOKENS}
        refused = subprocess.run(
            [*client, "-f", str(ROOT / "docker-compose.yml"), *extra, "config", "-q"],
            capture_output=True,
            text=True,
            timeout=60,
            env=without,
        )
        assert refused.returncode != 0 and "DUPLICAST_" in refused.stderr


def test_venue_override_loads_the_acl_file_and_its_healthcheck_works(tmp_path: Path) -> None:
    """The venue override starts Redis with the users of `duplicast acl`; its healthcheck
    command answers PONG against a real redis-server started the same way."""
    from redis_server import RedisServer

    from hub.cli.redis_acl import acl_file

    venue = yaml.safe_load((ROOT / "deploy" / "docker-compose.venue.yml").read_text())
    redis = venue["services"]["redis"]
    command = redis["command"]
    assert command[command.index("--aclfile") + 1] == "/etc/redis/users.acl"
    assert any(v.startswith("./deploy/users.acl:/etc/redis/users.acl") for v in redis["volumes"])
    text, _ = acl_file(load_config(ROOT / "samples" / "ifp6.toml"))
    (tmp_path / "users.acl").write_text(text)
    if shutil.which("redis-cli") is None:
        pytest.skip("no redis-cli on this machine")
    assert "pubsub 16mb 4mb 10" in command and "noeviction" in command  # as the main file
    # redis-server started with the override's very arguments (it refuses any it does not know)
    acl = str(tmp_path / "users.acl")
    extra = tuple(acl if a == "/etc/redis/users.acl" else a for a in command[1:])
    with RedisServer(tmp_path / "redis", extra=extra) as s:
        probe = redis["healthcheck"]["test"][1:]  # drop "CMD"
        out = subprocess.run(
            [*probe[:1], "-p", str(s.port), *probe[1:]], capture_output=True, text=True
        )
        assert out.stdout.strip() == "PONG", out.stderr
        anonymous = subprocess.run(["redis-cli", "-p", str(s.port), "ping"], capture_output=True)
        assert b"NOAUTH" in anonymous.stdout + anonymous.stderr


def test_only_the_ingest_gets_the_deck_key(compose: dict[str, Any]) -> None:
    """Issue #9.6: compose handed the deck key to every edge; edges hold no cards of their own.
    Issue #10.3/6: the key is a file the operator made once, given as a secret, required."""
    services = compose["services"]
    ingest = services["ingest"]
    assert ingest["secrets"] == ["deck_key", "console_tokens"]
    assert option(ingest["command"], "--key-file") == "/run/secrets/deck_key"
    secret = compose["secrets"]["deck_key"]["file"]
    assert re.fullmatch(r"\$\{DUPLICAST_DECK_KEY_FILE:\?[^}]+\}", secret), secret
    for name in EDGES:
        assert services[name]["secrets"] == ["console_proofs"]  # the web consoles' (#22, #30)
        assert "--key-file" not in services[name]["command"]
        assert not any("DECK_KEY" in k for k in services[name]["environment"])
    for name in HUBS:
        assert not any("DECK_KEY" in k for k in services[name]["environment"])


def test_web_console_tokens_reach_the_processes_that_serve_websockets(
    compose: dict[str, Any],
) -> None:
    """Issue #22: the file `duplicast acl --console-tokens-out` wrote, as a secret (none:
    /dev/null, no web console signs in) read by every process that serves /ws; issue #30.10:
    the ingest reads the tokens, the edges their proofs (`duplicast proofs
    --console-proofs-out`), never the tokens."""
    secrets = compose["secrets"]
    assert secrets["console_tokens"]["file"] == "${DUPLICAST_CONSOLE_TOKENS_FILE:-/dev/null}"
    assert secrets["console_proofs"]["file"] == "${DUPLICAST_CONSOLE_PROOFS_FILE:-/dev/null}"
    ingest = compose["services"]["ingest"]
    assert ingest["environment"]["DUPLICAST_CONSOLE_TOKENS_FILE"] == "/run/secrets/console_tokens"
    assert "console_tokens" in ingest["secrets"]
    for name in EDGES:
        env = compose["services"][name]["environment"]
        assert env["DUPLICAST_CONSOLE_TOKENS_FILE"] == "/run/secrets/console_proofs"
        assert compose["services"][name]["secrets"] == ["console_proofs"]


def test_compose_runs_the_event_from_a_mounted_folder(compose: dict[str, Any]) -> None:
    """Issue #10.6: no service names samples/ (the image's sample); the event folder and file
    are variables; the balancer publishes on loopback only."""
    text = (ROOT / "docker-compose.yml").read_text()
    assert "samples/" not in text.split("services:", 1)[1]
    assert "DUPLICAST_EVENT_FILE" in text and "DUPLICAST_EVENT_DIR" in text
    assert compose["services"]["lb"]["ports"] == ["127.0.0.1:8080:8080"]
    # The template the README starts an event from is a tournament file `draw` can complete.
    assert load_for_preparation(ROOT / "samples" / "event.toml").decks.file == "decks.enc"
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "samples/ifp6.toml" not in dockerfile.split("CMD", 1)[1]


def test_dockerignore_keeps_the_build_context_small() -> None:
    """Issue #10.6: the 390 MB .venv went into the build context. Everything the image copies
    is still sent; a virtualenv, the history, test output and secrets are not."""
    patterns = [
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    for needed in (".venv", ".git", "test-artifacts", "tests", "event", "*.key"):
        assert needed in patterns, needed
    copied = re.findall(r"^COPY (.+?) \S+$", (ROOT / "Dockerfile").read_text(), re.M)
    sources = {part for line in copied for part in line.split()}
    assert sources == {"pyproject.toml", "README.md", "hub", "overlays", "samples"}
    assert not sources & set(patterns)


@pytest.mark.skipif(compose_client() is None, reason="no docker compose client on this machine")
def test_compose_takes_the_event_folder_file_and_key_from_variables(tmp_path: Path) -> None:
    """Issue #10.6: the operator's folder, file and key file reach the services, and compose
    stops with a message when the key file is not given."""
    client = compose_client()
    assert client is not None
    base = {k: v for k, v in os.environ.items() if not k.startswith("DUPLICAST_")}
    env = {
        **base,
        **{token: "kq3Z-vYp8_Lw2mXc7RtB9sHd" + token for token in TOKENS},
        "DUPLICAST_EVENT_DIR": str(tmp_path / "finals"),
        "DUPLICAST_EVENT_FILE": "finals.toml",
        "DUPLICAST_DECK_KEY_FILE": str(tmp_path / "finals.key"),
        "DUPLICAST_EDGE_PROOFS_FILE": str(tmp_path / "edge.env"),
    }
    (tmp_path / "edge.env").write_text("")
    run = subprocess.run(
        [*client, "-f", str(ROOT / "docker-compose.yml"), "config"],
        capture_output=True, text=True, timeout=60, env=env,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    resolved = yaml.safe_load(run.stdout)
    for name in HUBS:
        service = resolved["services"][name]
        assert option(service["command"], "--config") == "/event/finals.toml"
        mounts = [v if isinstance(v, str) else f"{v['source']}:{v['target']}" for v in
                  service["volumes"]]  # fmt: skip
        assert any(m.startswith(f"{tmp_path / 'finals'}:/event") for m in mounts), mounts
    assert resolved["secrets"]["deck_key"]["file"] == str(tmp_path / "finals.key")
    without = {k: v for k, v in env.items() if k != "DUPLICAST_DECK_KEY_FILE"}
    refused = subprocess.run(
        [*client, "-f", str(ROOT / "docker-compose.yml"), "config", "-q"],
        capture_output=True, text=True, timeout=60, env=without,
    )  # fmt: skip
    assert refused.returncode != 0 and "DUPLICAST_DECK_KEY_FILE" in refused.stderr


def test_projector_override_separates_the_feed_and_gives_the_projector_the_key() -> None:
    """deploy/docker-compose.projector.yml: the ingest with ``--feed separate`` and one
    projector, which holds the deck orders (the live feed shows cards) as the ingest does."""
    override = yaml.safe_load((ROOT / "deploy" / "docker-compose.projector.yml").read_text())
    services = override["services"]
    ingest, projector = services["ingest"]["command"], services["projector"]["command"]
    assert option(ingest, "--role") == "ingest" and option(ingest, "--feed") == "separate"
    assert option(projector, "--role") == "projector"
    assert option(projector, "--key-file") == "/run/secrets/deck_key"
    assert services["projector"]["secrets"] == ["deck_key"]
    # it serves no client and verifies nothing: no token (issue #30.10)
    assert not any("TOKEN" in k for k in services["projector"]["environment"])
    main = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    base = main["services"]["ingest"]["command"]
    assert [a for a in ingest if a not in ("--feed", "separate")] == base


def test_edges_trust_the_balancer_and_nginx_says_who_the_client_is(
    compose: dict[str, Any],
) -> None:
    """Issue #20: behind nginx every peer was nginx. compose tells the edges (only them) which
    addresses are the balancer; nginx overwrites X-Forwarded-For with the peer it sees (a
    client cannot write its own) and passes the browser's Host on, port included (the edge
    compares it with the page's Origin)."""
    from hub.serve.proxies import TRUSTED_PROXIES_ENV, TrustedProxies

    services = compose["services"]
    for name in ("edge1", "edge2"):
        value = defaults(services[name]["environment"][TRUSTED_PROXIES_ENV])
        proxies = TrustedProxies(value.split(","))
        assert proxies.trusts("172.18.0.5") and not proxies.trusts("203.0.113.7")
    assert TRUSTED_PROXIES_ENV not in services["ingest"]["environment"]
    conf = (ROOT / "deploy" / "nginx.conf").read_text()
    for location in re.findall(r"location \S+ \{(.*?)\n        \}", conf, re.S):
        assert "proxy_set_header X-Forwarded-For $remote_addr;" in location
        assert "proxy_set_header Host $client_host;" in location
        assert "$host;" not in location and "$proxy_add_x_forwarded_for" not in location
    assert re.search(r"map \$http_host \$client_host \{\s*default \$http_host;", conf)
    ws = re.search(r"location /ws \{(.*?)\}", conf, re.S)
    assert ws is not None and "limit_conn spectators 256;" in ws.group(1)
    # only token-less (spectator) upgrades are counted by nginx: an empty key is not
    assert re.search(r"map \$arg_token \$spectator_address \{\s*''\s+\$binary_remote_addr;", conf)


def test_every_role_gets_its_own_users_url_by_environment() -> None:
    """Each hub service of every compose file takes its Redis URL from its environment, from a
    variable of its role (the venue override requires those of the ingest and the edges), and
    each role's user is one `duplicast acl` writes; no command line carries a URL."""
    from hub.cli.redis_acl import ROLE_USERS

    files = ("docker-compose.yml", "deploy/docker-compose.venue.yml",
             "deploy/docker-compose.projector.yml")  # fmt: skip
    variables: dict[str, str] = {}
    for name in files:
        services = yaml.safe_load((ROOT / name).read_text())["services"]
        for service, spec in services.items():
            assert "--redis" not in spec.get("command", []), (name, service)
            url = spec.get("environment", {}).get("DUPLICAST_REDIS_URL")
            if service in ("redis", "lb") or (url is None and service in variables):
                continue  # not a hub, or an override keeping the main file's environment
            assert url is not None, (name, service)
            variable = re.fullmatch(r"\$\{(DUPLICAST_(\w+)_REDIS_URL):[-?].*\}", url)
            assert variable is not None, url
            role = variables.setdefault(service.rstrip("12"), variable.group(1))
            assert role == variable.group(1), (name, service)
            if name.endswith("venue.yml"):
                assert url.startswith(f"${{{role}:?"), url  # required at the venue
    assert variables == {
        "ingest": "DUPLICAST_INGEST_REDIS_URL",
        "edge": "DUPLICAST_EDGE_REDIS_URL",
        "projector": "DUPLICAST_PROJECTOR_REDIS_URL",
    }
    for service in variables:
        assert f"duplicast-{service}" in ROLE_USERS


COMPOSE_FILES = ("docker-compose.yml", "deploy/docker-compose.venue.yml",
                 "deploy/docker-compose.projector.yml")  # fmt: skip


def test_no_edge_is_given_a_token_in_any_compose_file(compose: dict[str, Any]) -> None:
    """Issue #30.10: an edge holding the tokens (or the console tokens file) could derive the
    keys operator commands and web console events are signed with. In every compose file the
    edges get neither: no token variable in their environment, the proofs file instead of the
    tokens file; only the ingest reads the tokens."""
    anchors = (ROOT / "docker-compose.yml").read_text().split("services:", 1)[0]
    edge_anchor = anchors.split("x-edge-env:", 1)[1].split("\nx-", 1)[0]
    assert "TOKEN}" not in edge_anchor and "*tokens" not in edge_anchor
    for name in COMPOSE_FILES:
        services = yaml.safe_load((ROOT / name).read_text())["services"]
        for service, spec in services.items():
            if not service.startswith("edge"):
                continue
            env = spec.get("environment", {})
            for key, value in env.items():
                assert not re.search(r"\$\{DUPLICAST_\w*TOKEN\b", str(value)), (name, key)
                assert key not in TOKENS, (name, service, key)
            assert env.get("DUPLICAST_CONSOLE_TOKENS_FILE") in (None, "/run/secrets/console_proofs")
            assert "console_tokens" not in spec.get("secrets", []), (name, service)
            assert "deck_key" not in spec.get("secrets", []), (name, service)


@pytest.mark.skipif(compose_client() is None, reason="no docker compose client on this machine")
def test_compose_resolves_proofs_for_the_edges_and_tokens_for_the_ingest(tmp_path: Path) -> None:
    """Issue #30.10, the README's steps: `duplicast proofs` writes the edges' lines and console
    proofs; compose, with every file, resolves to edges holding only proofs (no token, nor
    any console token, anywhere in their configuration) and an ingest holding the tokens."""
    from hub.wire.signing import is_proof, session_proof

    client = compose_client()
    assert client is not None
    tokens = {token: "kq3Z-vYp8_Lw2mXc7RtB9sHd" + token for token in TOKENS}
    console = "Wm5r-Tq2_Zx8nHc4LpV7yKe-table1"
    console_tokens, console_proofs = tmp_path / "console-tokens.txt", tmp_path / "proofs.txt"
    console_tokens.write_text(f"table1 1 {console}\n")
    base = {k: v for k, v in os.environ.items() if not k.startswith("DUPLICAST_")}
    env = {**base, **tokens, "DUPLICAST_CONSOLE_TOKENS_FILE": str(console_tokens)}
    proofs = subprocess.run(
        [sys.executable, "-m", "hub", "proofs", "--console-proofs-out", str(console_proofs)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proofs.returncode == 0, proofs.stderr
    (tmp_path / "edge.env").write_text(proofs.stdout)
    env |= {
        "DUPLICAST_EDGE_PROOFS_FILE": str(tmp_path / "edge.env"),
        "DUPLICAST_CONSOLE_PROOFS_FILE": str(console_proofs),
        "DUPLICAST_DECK_KEY_FILE": str(tmp_path / "deck.key"),
        "DUPLICAST_INGEST_REDIS_URL": "redis://duplicast-ingest:pw@redis/0",
        "DUPLICAST_EDGE_REDIS_URL": "redis://duplicast-edge:pw@redis/0",
    }
    secrets = (*tokens.values(), console)
    for extra in ([], *(["-f", str(ROOT / name)] for name in COMPOSE_FILES[1:])):
        run = subprocess.run(
            [*client, "-f", str(ROOT / "docker-compose.yml"), *extra, "config"],
            capture_output=True, text=True, timeout=60, env=env,
        )  # fmt: skip
        assert run.returncode == 0, run.stderr
        resolved = yaml.safe_load(run.stdout)
        files = {name: spec.get("file") for name, spec in resolved["secrets"].items()}
        for name in EDGES:
            service = resolved["services"][name]
            for token in TOKENS:
                assert service["environment"][token] == session_proof(tokens[token])
                assert is_proof(service["environment"][token])
            text = yaml.safe_dump(service)
            assert not any(secret in text for secret in secrets), name
            used = [s if isinstance(s, str) else s["source"] for s in service["secrets"]]
            assert [files[s] for s in used] == [str(console_proofs)]
        assert console not in console_proofs.read_text()
        ingest = resolved["services"]["ingest"]["environment"]
        assert {token: ingest[token] for token in TOKENS} == tokens
        for name, service in resolved["services"].items():
            if name not in ("ingest", *EDGES):  # redis, lb, projector: no token at all
                assert not any(s in yaml.safe_dump(service) for s in secrets), name


def test_the_readme_compose_block_sets_what_compose_requires() -> None:
    """The README's "With Docker Compose" block exports every variable docker-compose.yml
    requires (``${NAME:?…}``), the edges' proofs file made by `duplicast proofs` among them."""
    readme = (ROOT / "README.md").read_text()
    block = readme.split("### With Docker Compose", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    required = set(re.findall(r"\$\{(\w+):\?", (ROOT / "docker-compose.yml").read_text()))
    exported = set(re.findall(r"\b(DUPLICAST_\w+)=", block))
    assert "DUPLICAST_EDGE_PROOFS_FILE" in required
    assert required <= exported, required - exported
    assert re.search(r"^duplicast proofs > \S+", block, re.M)
