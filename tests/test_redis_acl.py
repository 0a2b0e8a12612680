"""`duplicast acl` on a real redis-server: each console may publish only to its own table."""

from __future__ import annotations

import asyncio
import socket
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from redis.exceptions import NoPermissionError, ResponseError
from redis_server import RedisServer

from hub.bus.redis import RedisBus, RetryPolicy
from hub.cli.main import main
from hub.cli.redis_acl import EDGE_USER, EXPORT_USER, INGEST_USER, Credential, acl_file
from hub.client.console import ConsoleClient
from hub.engine.core import Engine
from hub.files.config import load_config
from hub.roles.embedded import IngestSource
from hub.wire import codec
from hub.wire.channels import Channels

pytestmark = [pytest.mark.redis]

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "samples" / "ifp6.toml"
FAST = RetryPolicy(deadline=0.5, base=0.01, cap=0.05)
USERS = (INGEST_USER, EDGE_USER, EXPORT_USER, "table1")  # one of each kind


@pytest.fixture
def acl_server(tmp_path: Path):
    config = load_config(SAMPLE)
    text, credentials = acl_file(config)
    (tmp_path / "users.acl").write_text(text)
    with RedisServer(tmp_path / "redis", extra=("--aclfile", str(tmp_path / "users.acl"))) as s:
        yield config, credentials, s


async def test_a_console_can_write_only_its_own_table(acl_server) -> None:
    config, credentials, server = acl_server
    host = f"127.0.0.1:{server.port}"
    prefix = f"dup:{config.id}"
    pad = RedisBus(credentials["table1"].url(host), retry=FAST)
    await pad.connect()
    try:
        await pad.publish(f"{prefix}:console:1", b"x")  # its own table
        for channel in (f"{prefix}:console:2", f"{prefix}:feed", f"{prefix}:control"):
            with pytest.raises(NoPermissionError):
                await pad.publish(channel, b"x")
        with pytest.raises(NoPermissionError):
            await pad.read(f"{prefix}:journal")
        with pytest.raises(NoPermissionError):
            await pad.append_many(f"{prefix}:journal", [b"forged", b"events"])
        own = pad.subscribe(f"{prefix}:ack:table1")
        await own.ready()
        other = pad.subscribe(f"{prefix}:ack:table2")
        with pytest.raises(ResponseError):
            await other.ready()
        await own.aclose()
        # The event epoch it keys its outbox to: read, never written (issue #20.13).
        assert await pad.get(f"{prefix}:epoch") is None
        with pytest.raises(NoPermissionError):
            await pad.set_once(f"{prefix}:epoch", b"forged")
        with pytest.raises(NoPermissionError):
            await pad.get(f"{prefix}:journal")
    finally:
        await pad.close()
    # Nobody gets in without a user; a wrong password is refused (raw RESP, no client).
    assert raw(server.port, b"PING\r\n").startswith(b"-NOAUTH")
    assert raw(server.port, b"AUTH table1 guess\r\n").startswith(b"-WRONGPASS")
    assert raw(server.port, b"AUTH probe x\r\nPING\r\n") == b"+OK\r\n+PONG\r\n"


def raw(port: int, command: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=2) as sock:
        sock.sendall(command)
        time.sleep(0.05)
        return sock.recv(256)


async def test_hub_and_consoles_play_with_their_own_users(acl_server, tmp_path: Path) -> None:
    config, credentials, server = acl_server
    host = f"127.0.0.1:{server.port}"
    hub_bus = RedisBus(credentials[INGEST_USER].url(host))
    await hub_bus.connect()
    source = IngestSource(hub_bus, Engine(config), own_bus=False)
    await source.start()
    pad_bus = RedisBus(credentials["table1"].url(host))
    await pad_bus.connect()
    try:
        deal = config.deal_orders[1][0]
        outbox = tmp_path / "outbox.sqlite"
        async with ConsoleClient(pad_bus, config.id, 1, "table1", outbox=outbox) as pad:
            ack = await asyncio.wait_for(pad.send({"type": "start", "deal": deal}), 10)
            assert ack.ok
        with sqlite3.connect(outbox) as db:  # keyed to the hub's epoch, read with its own user
            (epoch,) = db.execute("SELECT value FROM meta WHERE key = 'epoch'").fetchone()
        assert epoch == (await hub_bus.get(f"dup:{config.id}:epoch") or b"").decode()
        journal = await hub_bus.read(f"dup:{config.id}:journal")
        assert [codec.unpack(data)["console"] for _, data in journal] == ["table1"]
    finally:
        await source.stop()
        await pad_bus.close()
        await hub_bus.close()


def test_acl_command_writes_private_files(tmp_path: Path, capsys) -> None:
    acl, creds = tmp_path / "users.acl", tmp_path / "consoles.txt"
    args = ["acl", "--config", str(SAMPLE), "--out", str(acl), "--credentials-out", str(creds)]
    assert main([*args, "--host", "venue-redis:6379"]) == 0
    text, urls = acl.read_text(), creds.read_text()
    assert acl.stat().st_mode & 0o777 == 0o600 and creds.stat().st_mode & 0o777 == 0o600
    assert "user default off" in text
    lines = [line for line in urls.splitlines() if not line.startswith("#")]
    assert len(lines) == 4 + 6  # four roles and six consoles
    for line in lines:
        user, url = line.split()
        password = url.split(":")[2].split("@")[0]
        assert url.startswith(f"redis://{user}:") and url.endswith("@venue-redis:6379/0")
        assert password not in text  # only its hash is in the ACL file
    # TLS and another database: each line keeps the scheme, the database and the CA
    tls = "rediss://venue-redis:6380/3?ssl_ca_certs=/etc/duplicast/ca.crt"
    assert main([*args, "--url", tls]) == 0
    for line in [ln for ln in creds.read_text().splitlines() if not ln.startswith("#")]:
        user, url = line.split()
        assert url.startswith(f"rediss://{user}:") and url.endswith(
            "@venue-redis:6380/3?ssl_ca_certs=/etc/duplicast/ca.crt"
        )
    capsys.readouterr()
    for bad, why in [
        ("unix:///run/redis/redis.sock", "rediss://HOST:PORT/DB (TLS)"),
        ("redis://someone:pw@venue-redis:6379/0", "holds a login"),
        ("redis://venue-redis:6379/x", "the database is a number"),
    ]:
        assert main([*args, "--url", bad]) == 1
        assert why in capsys.readouterr().err
    bare = tmp_path / "bare.toml"
    bare.write_text(SAMPLE.read_text().split("[consoles]")[0])
    assert main(["acl", "--config", str(bare), "--out", str(acl), "--credentials-out",
                 str(creds)]) == 1  # fmt: skip
    assert "[consoles]" in capsys.readouterr().err


async def test_every_user_selects_another_database_by_port_and_by_socket(tmp_path: Path) -> None:
    """A venue gives the event database 3 of a Redis it shares (``redis://user:pw@host/3``),
    or names Redis by its socket file with a database (``unix://user:pw@/path/redis.sock?db=2``):
    every user of `duplicast acl` logs in, selects it and plays there; nothing lands in
    database 0. The users could not SELECT, so with such a URL the hub exited at start
    (``this user has no permissions to run the 'select' command``)."""
    config = load_config(SAMPLE)
    names = Channels(config.id)
    text, credentials = acl_file(config)
    (tmp_path / "users.acl").write_text(text)
    sock = tmp_path / "redis.sock"
    extra = ("--aclfile", str(tmp_path / "users.acl"), "--unixsocket", str(sock))
    with RedisServer(tmp_path / "redis", extra=(*extra, "--unixsocketperm", "700")) as server:
        host = f"127.0.0.1:{server.port}"
        forms: list[tuple[str, Callable[[Credential], str]]] = [
            ("port", lambda c: c.url(host, 3)),
            ("socket", lambda c: f"unix://{c.user}:{c.password}@{sock}?db=2"),
        ]
        for form, url in forms:
            buses = {user: RedisBus(url(credentials[user]), retry=FAST) for user in USERS}
            try:
                hub = buses[INGEST_USER]
                source = IngestSource(hub, Engine(config), own_bus=False)
                await source.start()
                try:
                    outbox = tmp_path / f"{form}.sqlite"
                    deal = config.deal_orders[1][0]
                    async with ConsoleClient(
                        buses["table1"], config.id, 1, "table1", outbox=outbox
                    ) as pad:
                        ack = await asyncio.wait_for(pad.send({"type": "start", "deal": deal}), 10)
                        assert ack.ok, form
                finally:
                    await source.stop()
                edge = buses[EDGE_USER]
                feed = edge.subscribe(names.feed)
                await asyncio.wait_for(feed.ready(), 10)
                await feed.aclose()
                assert await edge.hgetall(names.topics), form  # the feed's snapshots
                journal = await buses[EXPORT_USER].read(names.journal)
                assert [codec.unpack(data)["console"] for _, data in journal] == ["table1"], form
            finally:
                for bus in buses.values():
                    await bus.close()
        in_zero = RedisBus(credentials[EXPORT_USER].url(host), retry=FAST)
        try:
            assert await in_zero.read(names.journal) == []
        finally:
            await in_zero.close()
