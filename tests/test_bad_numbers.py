"""Non-finite floats (NaN, ±inf) and integers no client can hold, thrown at every entry point
where numbers come in: console events (msgpack and JSON Lines), operator commands (the engine,
an edge's websocket in JSON and in msgpack, REST, the ingest's control channel on Redis), the
tournament file, and the command line. Each answers with a coded refusal and changes nothing;
none answers ``unavailable`` (an edge used to, for an integer msgpack cannot pack) or accepts a
NaN (a clock adjust of NaN seconds used to pass ``abs(seconds) > limit``)."""

from __future__ import annotations

import asyncio
import json
import math
import re
import tomllib
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hub.bus.memory import MemoryBus
from hub.bus.redis import RedisBus
from hub.cli.main import build_parser
from hub.domain.config import ConfigError, parse_config
from hub.domain.numbers import MAX_SAFE_INT
from hub.engine.core import Engine
from hub.roles.edge import EdgeSource
from hub.wire import codec
from hub.wire.signing import sign, signed_command, signing_key
from tests.factories import config_data
from tests.hubharness import OPERATOR, edge_hub, ingest_hub, unique_tournament
from tests.test_clock import clocked

FUZZ = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

NON_FINITE = st.sampled_from([math.nan, math.inf, -math.inf, -math.nan])
HUGE_INT = st.one_of(
    st.integers(min_value=MAX_SAFE_INT + 1, max_value=2**64 - 1),  # msgpack can carry these
    st.integers(max_value=-(MAX_SAFE_INT + 1), min_value=-(2**63)),
    st.integers(min_value=2**64, max_value=2**200),  # JSON can, msgpack cannot
)
BAD = st.one_of(NON_FINITE, HUGE_INT)


def msgpack_can_carry(value: Any) -> bool:
    return not isinstance(value, int) or -(2**63) <= value < 2**64


def nest(value: Any, path: list[str]) -> Any:
    for key in reversed(path):
        value = {key: value}
    return value


# Operator commands, each with one slot the bad number goes into.
COMMANDS = [
    ({"op": "clock", "action": "adjust"}, "seconds"),
    ({"op": "clock", "action": "level"}, "level"),
    ({"op": "onair", "slot": "ticker"}, "value"),
    ({"op": "confirm", "deal": 1, "by": "TD"}, "table"),
    ({"op": "confirm", "table": 1, "by": "TD"}, "deal"),
    ({"op": "void", "deal": 1, "by": "TD", "reason": "r"}, "table"),
    ({"op": "penalty", "table": 1, "seat": 1, "by": "TD", "reason": "r"}, "chips"),
    ({"op": "penalty", "table": 1, "seat": 1, "by": "TD", "reason": "r"}, "points"),
]


@st.composite
def bad_commands(draw: st.DrawFn) -> dict[str, Any]:
    base, slot = draw(st.sampled_from(COMMANDS))
    bad = draw(BAD)
    if slot == "value":  # onair's value is a free object: hide the number anywhere in it
        path = draw(st.lists(st.sampled_from(["a", "b", "text"]), min_size=1, max_size=4))
        bad = nest(draw(st.sampled_from([bad, [1, bad], {"ok": 1, "x": bad}])), path)
    return {**base, slot: bad}


# -- the engine: every transport ends here -----------------------------------------------------


@FUZZ
@given(command=bad_commands())
def test_engine_refuses_every_bad_number_in_an_operator_command(command: dict[str, Any]) -> None:
    engine = clocked()
    before = engine.payload(("live", "clock")), engine.payload(("live", "onair"))
    out = engine.control(command, 100.0)
    assert not out.ok and out.code == "bad_request", (command, out.ack)
    assert out.record is None  # nothing to journal
    assert (engine.payload(("live", "clock")), engine.payload(("live", "onair"))) == before


def test_a_nan_clock_adjust_is_refused_by_the_clock_itself() -> None:
    """The bug as found: ``abs(nan) > MAX_ADJUST`` is False, so NaN seconds were journaled."""
    from hub.domain.clock import Clock
    from hub.domain.errors import Rejection

    with pytest.raises(Rejection) as info:
        Clock.check({"action": "adjust", "seconds": math.nan}, 3)
    assert info.value.code == "bad_request" and "finite" in info.value.message
    engine = clocked()
    out = engine.control({"op": "clock", "action": "adjust", "seconds": math.nan}, 1.0)
    assert out.code == "bad_request"
    assert out.message == "field 'seconds': nan is not a finite number"


EVENT_FIELDS = ["ts", "table", "seq", "deal", "seat", "amount", "card", "points", "fan"]


@FUZZ
@given(field=st.sampled_from(EVENT_FIELDS), bad=BAD, wire=st.sampled_from(["msgpack", "json"]))
def test_console_events_with_bad_numbers_are_bad_schema(field: str, bad: Any, wire: str) -> None:
    """Through the codec the ingest (msgpack) or `replay`/`console replay` (JSON Lines) uses:
    a NaN cannot be written in JSON (``NaN`` is refused by the decoder), ``1e400`` reads as
    infinity; both, and every huge integer, end in a coded refusal."""
    engine = Engine(parse_config(config_data(), "<t>"), None)
    event = {"v": 1, "tournament": "t-test", "table": 1, "console": "table1", "seq": 1}
    event.update(type="bet", deal=1, seat=1, amount=200)
    event[field] = bad
    if wire == "msgpack":
        if not msgpack_can_carry(bad):
            with pytest.raises(codec.CodecError):
                codec.pack(event)
            return
        raw = codec.unpack(codec.pack(event))
    else:
        text = json.dumps(event).replace("Infinity", "1e400")  # how a JSON writer spells inf
        try:
            raw = codec.from_json(text)
        except codec.CodecError:
            assert math.isnan(bad)  # the literal NaN: refused by the decoder itself
            return
    out = engine.submit(raw, 1.0)
    assert not out.ok and out.code == "bad_schema", (field, bad, out.ack)
    assert out.record is None or out.record["kind"] == "refused"  # journaled as a refusal only


# -- the tournament file ------------------------------------------------------------------------


def leaves(data: Any, path: str = "") -> list[str]:
    if isinstance(data, dict):
        return [p for k, v in data.items() for p in leaves(v, f"{path}.{k}" if path else k)]
    if isinstance(data, list):
        return [p for i, v in enumerate(data) for p in leaves(v, f"{path}[{i}]")]
    return [path]


def put(data: Any, path: str, value: Any) -> None:
    keys: list[Any] = [int(i) if i else k for k, i in re.findall(r"([^.\[\]]+)|\[(\d+)\]", path)]
    keys = [k for k in keys if k != ""]
    for key in keys[:-1]:
        data = data[key]
    data[keys[-1]] = value


@FUZZ
@given(st.data())
def test_a_bad_number_anywhere_in_the_tournament_file_is_named(data: st.DataObject) -> None:
    config = config_data()
    config["clock"] = {"levels": [{"minutes": 10}, {"minutes": 5, "break": True}]}
    path = data.draw(st.sampled_from(leaves(config)))
    bad = data.draw(st.one_of(NON_FINITE, st.integers(min_value=2**63, max_value=2**100)))
    put(config, path, bad)
    with pytest.raises(ConfigError) as info:
        parse_config(config, "<t>")
    assert info.value.key == path, (path, info.value)


@pytest.mark.parametrize(
    ("line", "key"),
    [
        ("release_delay = nan", "tournament.release_delay"),
        ("release_delay = inf", "tournament.release_delay"),
        ("release_delay = -inf", "tournament.release_delay"),
        ("deals = 99999999999999999999", "tournament.deals"),
    ],
)
def test_toml_inf_and_nan_literals_are_refused_with_their_line(line: str, key: str) -> None:
    text = '[tournament]\nid = "x"\nname = "X"\nseats = 3\n' + line + "\n"
    with pytest.raises(ConfigError) as info:
        parse_config(tomllib.loads(text), "event.toml", text)
    assert info.value.key == key and info.value.line == 5
    assert str(info.value).startswith(f"event.toml:5: {key}: ")


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "-1"])
def test_command_line_paces_are_finite(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        build_parser().parse_args(["console", "simulate", f"--pace={value}"])
    assert info.value.code == 2
    assert "--pace: expected a finite number >= 0" in capsys.readouterr().err


# -- an edge: answers bad_request itself, never `unavailable` --------------------------------


@FUZZ
@given(command=bad_commands())
def test_an_edge_refuses_bad_numbers_without_asking_the_ingest(command: dict[str, Any]) -> None:
    async def run() -> dict[str, Any]:
        bus = MemoryBus()
        await bus.connect()
        edge = EdgeSource(bus, "nobody", answer_timeout=0.2)
        await edge.start()
        try:
            return await edge.control(command)  # no ingest: asking it would be `unavailable`
        finally:
            await edge.stop()
            await bus.close()

    answer = asyncio.run(run())
    assert answer["ok"] is False and answer["code"] == "bad_request", (command, answer)


# -- the real thing: Redis, an ingest, an edge, websockets in both formats, REST ---------------

JSON_CASES = [
    ('{"op":"clock","action":"adjust","seconds":1e400}', "seconds"),
    ('{"op":"clock","action":"adjust","seconds":-1e400}', "seconds"),
    ('{"op":"clock","action":"level","level":18446744073709551616}', "level"),
    ('{"op":"confirm","table":18446744073709551617,"deal":1,"by":"TD"}', "table"),
    ('{"op":"void","table":1,"deal":340282366920938463463374607431768211456,"by":"TD",'
     '"reason":"r"}', "deal"),
    ('{"op":"onair","slot":"ticker","value":{"a":[1,{"b":1e999}]}}', "value.a[1].b"),
    ('{"op":"penalty","table":1,"seat":1,"chips":-1e400,"by":"TD","reason":"r"}', "chips"),
]  # fmt: skip
MSGPACK_CASES = [
    ({"op": "clock", "action": "adjust", "seconds": math.nan}, "seconds"),
    ({"op": "clock", "action": "adjust", "seconds": math.inf}, "seconds"),
    ({"op": "clock", "action": "level", "level": 2**64 - 1}, "level"),
    ({"op": "confirm", "table": 1, "deal": -(2**63), "by": "TD"}, "deal"),
    ({"op": "onair", "slot": "ticker", "value": {"x": -math.inf}}, "value.x"),
    ({"op": "penalty", "table": 1, "seat": 1, "points": math.nan, "by": "T", "reason": "r"},
     "points"),
]  # fmt: skip


async def answer_of(ws: Any, binary: bool) -> dict[str, Any]:
    while True:
        raw = await asyncio.wait_for(ws.recv(), 10)
        message = codec.unpack(raw) if binary else json.loads(raw)
        if message.get("type") in ("ok", "error") and message.get("op") != "subscribe":
            return dict(message)


@pytest.mark.redis
@pytest.mark.asyncio
async def test_bad_numbers_through_a_real_edge_and_ingest_on_redis(redis_url: str) -> None:
    bus = RedisBus(redis_url)
    await bus.connect()
    config, decks = unique_tournament("numbers")
    prefix = f"dup:{config.id}"
    try:
        async with (
            ingest_hub(bus, config, decks) as (_source, _ingest_server),
            edge_hub(bus, config.id) as (_edge, server),
        ):
            url = f"{server.ws_url}?token={OPERATOR}"
            async with websockets.connect(url) as ws:
                for text, field in JSON_CASES:
                    await ws.send(text)
                    answer = await answer_of(ws, False)
                    assert answer["code"] == "bad_request", (text, answer)
                    assert answer["message"].startswith(f"field '{field}': "), answer
            async with websockets.connect(url + "&format=msgpack") as ws:
                for command, field in MSGPACK_CASES:
                    await ws.send(codec.pack(command))
                    answer = await answer_of(ws, True)
                    assert answer["code"] == "bad_request", (command, answer)
                    assert answer["message"].startswith(f"field '{field}': "), answer
                # A good command still goes through to the ingest and back.
                onair = {"op": "onair", "slot": "ticker", "value": {"n": 1}}
                await ws.send(codec.pack(signed_command(OPERATOR, onair)))  # (as pages sign)
                assert (await answer_of(ws, True))["type"] == "ok"
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.port}") as http:
                for body in ('{"slot":"ticker","value":{"n":1e400}}',
                             '{"slot":"ticker","value":{"n":18446744073709551616}}'):  # fmt: skip
                    r = await http.post(
                        "/api/onair",
                        content=body,
                        headers={"Authorization": f"Bearer {OPERATOR}"},
                        timeout=10,
                    )
                    assert r.status_code == 400 and r.json()["error"] == "bad_request", r.text
            # The ingest's own control channel, reached without an edge: NaN in msgpack.
            replies = bus.subscribe(f"{prefix}:reply:probe")
            await replies.ready()
            nan = {"op": "clock", "action": "adjust", "seconds": math.nan}
            await bus.publish(f"{prefix}:control", codec.pack({**nan, "id": "1", "reply": "probe"}))
            async with asyncio.timeout(10):
                reply = codec.unpack((await replies.__anext__()).data)
            assert reply["code"] == "unsigned", reply  # not the operator's: refused unread
            # signed by the operator, with a NaN in its text: refused, nothing journaled
            text = '{"op":"clock","action":"adjust","seconds":NaN,"nonce":"n0n0n0n0n0n0n0n0"}'
            nan = {"op": "clock", "signed": text, "sig": sign(signing_key(OPERATOR), text)}
            await bus.publish(f"{prefix}:control", codec.pack({**nan, "id": "2", "reply": "probe"}))
            async with asyncio.timeout(10):
                reply = codec.unpack((await replies.__anext__()).data)
            assert reply["ok"] is False and reply["code"] == "bad_request", reply
            await replies.aclose()
            # Only the one good on-air command was journaled.
            journal = await bus.read(f"{prefix}:journal")
            assert len(journal) == 1
    finally:
        keys = [f"{prefix}:{n}" for n in ("journal", "topics", "consoles", "rejected", "ingest")]
        await bus.delete(*keys, f"{prefix}:ingest:token")
        await bus.close()


@pytest.mark.redis
@pytest.mark.asyncio
async def test_console_replay_of_a_log_with_bad_numbers_refuses_them_by_code(
    redis_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`duplicast console replay`: ``1e400`` goes to the hub and is refused (bad_schema); an
    integer msgpack cannot carry is refused before sending (it used to end the command with a
    traceback); a JSON ``NaN`` makes the log unreadable, said in one line."""
    from hub.cli.main import main

    bus = RedisBus(redis_url)
    await bus.connect()
    config, decks = unique_tournament("numlog")
    deal = config.deal_orders[1][0]
    base = {"v": 1, "tournament": config.id, "table": 1, "console": "table1"}
    log = tmp_path / "log.jsonl"
    lines = [
        json.dumps({**base, "seq": 1, "type": "start", "deal": deal}).replace(
            f'"deal": {deal}', f'"deal": {deal}, "ts": 1e400'
        ),
        json.dumps({**base, "seq": 2, "type": "start", "deal": deal, "amount": 2**64}),
        json.dumps({**base, "seq": 3, "type": "start", "deal": deal}),
    ]
    log.write_text("\n".join(lines) + "\n")
    nan_log = tmp_path / "nan.jsonl"
    nan_log.write_text(lines[2].replace("}", ', "ts": NaN}') + "\n")
    try:
        async with ingest_hub(bus, config, decks) as (source, _server):
            for _ in range(100):
                if source.ready():
                    break
                await asyncio.sleep(0.05)
            argv = ["console", "--redis", redis_url, "replay", "--tournament", config.id]
            code = await asyncio.to_thread(main, [*argv, str(log), "--no-outbox"])
            out = capsys.readouterr()
            assert code == 1 and "Traceback" not in out.err, out
            assert "REJECTED bad_schema: field 'ts' must be a finite number, not inf" in out.out
            assert "NOT SENT bad_schema: cannot encode as msgpack" in out.out
            assert "1 accepted, 2 rejected" in out.out
            code = await asyncio.to_thread(main, [*argv, str(nan_log), "--no-outbox"])
            out = capsys.readouterr()
            assert code == 1 and out.err.strip().splitlines() == [
                f"duplicast console: {nan_log}:1: JSON constant NaN is not allowed"
            ], out.err
            journal = [codec.unpack(data) for _, data in await bus.read(f"dup:{config.id}:journal")]
            # one event accepted; the inf ts's refusal journaled as one (issue #20.12)
            assert sorted(r["kind"] for r in journal) == ["console", "refused"]
    finally:
        prefix = f"dup:{config.id}"
        keys = [f"{prefix}:{n}" for n in ("journal", "topics", "consoles", "rejected", "ingest")]
        await bus.delete(*keys, f"{prefix}:ingest:token")
        await bus.close()
