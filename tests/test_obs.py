"""The OBS link (issue #33 item 5, hub/roles/obs_link.py) against a real OBS Studio: Debian's
``obs-studio`` (29.0.2, obs-websocket 5.1.0 built in) run headless under ``xvfb-run`` with its
websocket server on a free port and a password, and a real hub (role all, a programme delay
set, part of the sample session played) whose mixer is driven over REST with the operator
token, as a Stream Deck drives it.

What is checked: a Take switches OBS's programme scene (read back from OBS itself) and sends the
slot's refresh (seen in OBS's own websocket debug log: Debian's build has no browser source, so
OBS answers that the input has no such button, and the link says so); a repeated Take or a
change of an unmapped slot sends nothing; a compare slot of a deal not yet released reaches OBS
only once the programme shows it; a wrong password is said in words and the hub serves on; an
OBS restart is synced to the current state; ``duplicast serve`` refuses a wrong setting in one
line. The plan itself (pure) is checked for invariants with Hypothesis.

Skipped, with the reason, only where ``obs`` or ``xvfb-run`` is not installed
(``apt-get install obs-studio xvfb``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hub.engine.onair import ONAIR_SLOTS
from hub.roles.obs_link import (
    ObsLink,
    ObsPlan,
    ObsSettings,
    ObsSettingsError,
    obs_settings,
    start_obs_link,
)
from tests.hubharness import OPERATOR
from tests.redis_server import free_port
from tests.test_overlays_hub import HubThread

ROOT = Path(__file__).resolve().parent.parent
PASSWORD = "obs-test-password-4711"
DELAY = 1.0
PLAYED = 1300  # events of the sample session: some deals released, others at the tables
OP = {"Authorization": f"Bearer {OPERATOR}"}
SCENES = {"leaderboard": "Standings", "seat": "Seat", "compare": "Split screen"}
DEFAULT = "Wide"
REFRESHED = "Seat overlay"  # an input of the Seat scene the link refreshes on a seat Take


def until(check: Callable[[], Any], timeout: float = 10.0, what: str = "") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or check}")
        time.sleep(0.05)


# ---------------------------------------------------------------------------- settings


def test_settings_from_the_environment() -> None:
    assert ObsSettings.from_env({}) is None
    got = ObsSettings.from_env(
        {
            "DUPLICAST_OBS_URL": "ws://10.0.0.5:4466",
            "DUPLICAST_OBS_PASSWORD": "pw",
            "DUPLICAST_OBS_SCENES": "compare = Split screen; seat=Seat cam\ndefault=Wide",
            "DUPLICAST_OBS_REFRESH": "compare=Split A, Split B",
        }
    )
    assert got is not None
    assert (got.host, got.port, got.password, got.url) == (
        "10.0.0.5",
        4466,
        "pw",
        "ws://10.0.0.5:4466",
    )
    assert got.scenes == {"compare": "Split screen", "seat": "Seat cam"}
    assert list(got.scenes) == ["compare", "seat"], "the order is the priority"
    assert got.default == "Wide" and got.refresh == {"compare": ("Split A", "Split B")}
    assert "pw" not in repr(got), "the password is kept out of logs"
    v6 = ObsSettings.from_env({"DUPLICAST_OBS_URL": "ws://[::1]", "DUPLICAST_OBS_SCENES": "seat=S"})
    assert v6 is not None and (v6.host, v6.port) == ("[::1]", 4455)


@pytest.mark.parametrize(
    ("env", "words"),
    [
        ({"DUPLICAST_OBS_URL": "http://x:4455"}, "expected ws://HOST:PORT"),
        ({"DUPLICAST_OBS_URL": "wss://x:4455"}, "expected ws://HOST:PORT"),
        ({"DUPLICAST_OBS_URL": "ws://x:port"}, "is not a number"),
        ({"DUPLICAST_OBS_URL": "ws://x"}, "neither DUPLICAST_OBS_SCENES nor"),
        ({"DUPLICAST_OBS_SCENES": "board=X"}, "'board' is not one of leaderboard"),
        ({"DUPLICAST_OBS_SCENES": "seat"}, "'seat' is not slot=name"),
        ({"DUPLICAST_OBS_SCENES": "seat=A;seat=B"}, "'seat' is given twice"),
        ({"DUPLICAST_OBS_REFRESH": "default=X"}, "'default' is not one of"),
    ],
)
def test_a_wrong_setting_is_named(env: dict[str, str], words: str) -> None:
    env = {"DUPLICAST_OBS_URL": "ws://127.0.0.1:4455", **env}
    with pytest.raises(ObsSettingsError, match=words):
        ObsSettings.from_env(env)


def test_the_audience_is_the_programme_output_when_a_delay_is_set() -> None:
    env = {"DUPLICAST_OBS_URL": "ws://127.0.0.1:4455", "DUPLICAST_OBS_SCENES": "seat=S"}

    class Config:
        program_delay: float | None = None
        program_outputs: dict[str, float] = {}

    assert obs_settings(Config(), {}) is None
    got = obs_settings(Config(), env)
    assert got is not None and got[1] == "public"
    delayed = Config()
    delayed.program_delay, delayed.program_outputs = 20.0, {"venue": 5.0}
    assert obs_settings(delayed, env)[1] == "program"  # type: ignore[index]
    venue = obs_settings(delayed, {**env, "DUPLICAST_OBS_OUTPUT": "venue"})
    assert venue is not None and venue[1] == "program:venue"
    with pytest.raises(ObsSettingsError, match="no programme output 'x'"):
        obs_settings(delayed, {**env, "DUPLICAST_OBS_OUTPUT": "x"})
    with pytest.raises(ObsSettingsError, match="has no programme delay"):
        obs_settings(Config(), {**env, "DUPLICAST_OBS_OUTPUT": "venue"})


def test_serve_refuses_a_wrong_setting_in_one_line() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DUPLICAST_")}
    env |= {"DUPLICAST_OBS_URL": "http://127.0.0.1:4455", "DUPLICAST_OBS_SCENES": "seat=S"}
    done = subprocess.run(
        [sys.executable, "-m", "hub", "serve", "--role", "all", "--config", "samples/ifp6.toml"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("duplicast serve: refusing to start: DUPLICAST_OBS_URL: expected ws://")


# ---------------------------------------------------------------------------- the plan

slot_values = st.one_of(
    st.just({"visible": False}),
    st.fixed_dictionaries({"visible": st.just(True), "seat": st.integers(1, 3)}),
    st.fixed_dictionaries(
        {"visible": st.just(True), "seat": st.integers(1, 2), "cut": st.just(True)}
    ),
)
states = st.fixed_dictionaries({slot: slot_values for slot in ONAIR_SLOTS})


@settings(max_examples=150, deadline=None)
@given(st.lists(states, min_size=1, max_size=12))
def test_the_plan_follows_the_slots(sequence: list[dict[str, Any]]) -> None:
    plan = ObsPlan(SCENES, DEFAULT, {"seat": (REFRESHED,)})
    before: dict[str, Any] | None = None
    for slots in sequence:
        target = plan.target
        moved, refresh = plan.step(slots)
        assert moved >= (plan.target != target), "a new target is a switch"
        shown = {s for s, v in slots.items() if v["visible"]}
        mapped = [s for s in SCENES if s in shown]
        # always a scene of a mapped slot on air, else the default
        assert plan.target in ({SCENES[s] for s in mapped} or {DEFAULT})
        if before is not None:
            came = [
                s
                for s in ONAIR_SLOTS
                if slots[s]["visible"]
                and {k: v for k, v in slots[s].items() if k != "cut"}
                != {k: v for k, v in before[s].items() if k != "cut"}
            ]
            taken = [s for s in SCENES if s in came]
            if taken:
                assert plan.target == SCENES[taken[0]], "a Take brings its slot's scene"
                assert moved, "a Take switches (OBS may have been switched by hand)"
            elif not moved:
                assert plan.target == target
            assert refresh == ([REFRESHED] if "seat" in came else [])
            again = plan.step(slots)
            assert again == (False, []), "an unchanged state asks for nothing"
        before = slots


def test_the_plan_leaves_obs_alone_without_a_scene_for_what_is_on_air() -> None:
    plan = ObsPlan({"compare": "Split"})
    hidden = {slot: {"visible": False} for slot in ONAIR_SLOTS}
    assert plan.step(hidden) == (False, []) and plan.target is None
    on = {**hidden, "compare": {"visible": True, "deal": 1}}
    assert plan.step(on) == (True, []) and plan.target == "Split"
    assert plan.step(hidden) == (False, []) and plan.target == "Split", "no default: it stays"


# ---------------------------------------------------------------------------- OBS Studio

needs_obs = pytest.mark.skipif(
    shutil.which("obs") is None or shutil.which("xvfb-run") is None,
    reason="OBS Studio is not installed (apt-get install obs-studio xvfb): "
    "the link is tested against a real OBS",
)


class ObsStudio:
    """Debian's OBS Studio under ``xvfb-run`` in a home of its own: websocket server on
    ``port`` with ``PASSWORD``, a 64x36 canvas at 10 fps (a light load on a shared machine),
    obs-websocket's debug log (every request it receives) in OBS's own log files."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.port = free_port()
        self.log = home / "obs.log"
        self.proc: subprocess.Popen[bytes] | None = None
        conf = home / ".config" / "obs-studio"
        (conf / "plugin_config" / "obs-websocket").mkdir(parents=True)
        (conf / "basic" / "profiles" / "Duplicast").mkdir(parents=True)
        (conf / "basic" / "scenes").mkdir(parents=True)
        (conf / "global.ini").write_text(
            "[General]\nFirstRun=true\nEnableAutoUpdates=false\n\n"
            "[Basic]\nProfile=Duplicast\nProfileDir=Duplicast\n"
            "SceneCollection=Duplicast\nSceneCollectionFile=Duplicast\n\n"
            # obs-websocket 5.1 (OBS 29) reads its settings here; 5.3 and later from
            # plugin_config/obs-websocket/config.json (both written)
            "[OBSWebSocket]\nFirstLoad=false\nServerEnabled=true\nAlertsEnabled=false\n"
            f"ServerPort={self.port}\nAuthRequired=true\nServerPassword={PASSWORD}\n"
        )
        (conf / "plugin_config" / "obs-websocket" / "config.json").write_text(
            json.dumps(
                {
                    "alerts_enabled": False,
                    "auth_required": True,
                    "first_load": False,
                    "server_enabled": True,
                    "server_password": PASSWORD,
                    "server_port": self.port,
                }
            )
        )
        (conf / "basic" / "profiles" / "Duplicast" / "basic.ini").write_text(
            "[General]\nName=Duplicast\n\n[Video]\nBaseCX=64\nBaseCY=36\nOutputCX=64\n"
            "OutputCY=36\nFPSType=0\nFPSCommon=10\n"
        )

    def start(self) -> None:
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                ["xvfb-run", "-a", "obs", "--disable-shutdown-check", "--websocket_debug"],
                env={**os.environ, "HOME": str(self.home)},
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # (its own group: xvfb-run, Xvfb, obs stop together)
            )
        try:
            until(self.listening, 60, "OBS's websocket server")
        except AssertionError:
            self.stop()
            raise AssertionError(self.log.read_text(errors="replace")[-3000:]) from None

    def listening(self) -> bool:
        with socket.socket() as s:
            return s.connect_ex(("127.0.0.1", self.port)) == 0

    def stop(self) -> None:
        if self.proc is None:
            return
        proc, self.proc = self.proc, None
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                proc.wait(15)
                break
            except subprocess.TimeoutExpired:
                continue
        until(lambda: not self.listening(), 15, "OBS to stop listening")

    def __enter__(self) -> ObsStudio:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def client(self) -> Any:
        import obsws_python

        return obsws_python.ReqClient(
            host="127.0.0.1", port=self.port, password=PASSWORD, timeout=5
        )

    def scene(self) -> str:
        client = self.client()
        try:
            return str(client.get_current_program_scene().current_program_scene_name)
        finally:
            client.disconnect()

    def received(self, request: str, needle: str = "") -> int:
        """How many requests of type ``request`` (whose logged message has ``needle``) OBS's
        websocket server logged as received."""
        logs = sorted((self.home / ".config" / "obs-studio" / "logs").glob("*.txt"))
        text = "".join(p.read_text(errors="replace") for p in logs)  # (flushed line by line)
        messages = text.split("[WebSocketServer::onMessage] ")
        return sum(
            1
            for m in messages[1:]
            if m.startswith("Incoming") and f'"requestType": "{request}"' in m and needle in m
        )


@pytest.fixture(scope="module")
def obs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ObsStudio]:
    with ObsStudio(tmp_path_factory.mktemp("obs-home")) as studio:
        studio.start()
        prepare(studio)
        yield studio


def prepare(studio: ObsStudio) -> None:
    """The scenes of the test, and an input standing for the seat's overlay."""
    client = studio.client()
    try:
        have = {s["sceneName"] for s in client.get_scene_list().scenes}
        for scene in [*SCENES.values(), DEFAULT]:
            if scene not in have:
                client.create_scene(scene)
        # Debian's OBS has no browser source (obs-browser is not packaged): a text source
        # stands for the overlay, so OBS receives the refresh and answers it has no such button.
        client.create_input("Seat", REFRESHED, "text_ft2_source_v2", {"text": "seat"}, True)
        client.set_current_program_scene(DEFAULT)
    finally:
        client.disconnect()


class ObsHub(HubThread):
    """The hub (role all, a programme delay) and OBS links started on its loop."""

    def link(self, password: str = PASSWORD, port: int = 0) -> ObsLink:
        env = {
            "DUPLICAST_OBS_URL": f"ws://127.0.0.1:{port}",
            "DUPLICAST_OBS_PASSWORD": password,
            "DUPLICAST_OBS_SCENES": ";".join(f"{k}={v}" for k, v in SCENES.items())
            + f";default={DEFAULT}",
            "DUPLICAST_OBS_REFRESH": f"seat={REFRESHED}",
        }
        got = obs_settings(self.config, env)
        assert got is not None and got[1] == "program"
        assert self.source is not None
        store, registry = self.source.store, self.source.metrics.registry

        async def started() -> ObsLink:
            return start_obs_link(store, *got, registry)

        link: ObsLink = self.run(started())
        return link

    def unlink(self, link: ObsLink) -> None:
        self.run(link.stop())


@pytest.fixture(scope="module")
def hub() -> Iterator[ObsHub]:
    h = ObsHub("obs")
    h.config = dataclasses.replace(h.config, program_delay=DELAY)
    h.start()
    h.preload(PLAYED)
    yield h
    h.stop()


@pytest.fixture(scope="module")
def link(hub: ObsHub, obs: ObsStudio) -> Iterator[ObsLink]:
    got = hub.link(port=obs.port)
    until(lambda: got.connected, 15, "the link to identify")
    yield got
    hub.unlink(got)


def control(hub: ObsHub, action: str, body: Any = None) -> dict[str, Any]:
    got = httpx.post(f"{hub.url}/api/control/{action}", json=body, headers=OP, timeout=5)
    assert got.status_code == 200, got.text
    answer: dict[str, Any] = got.json()
    return answer


def take(hub: ObsHub, slot: str, value: dict[str, Any]) -> None:
    control(hub, "preview", {"slot": slot, "value": value})
    control(hub, "take")


def programme_onair(hub: ObsHub) -> dict[str, Any]:
    got = httpx.get(f"{hub.url}/api/onair", params={"feed": "program"}, timeout=5)
    assert got.status_code == 200, got.text
    slots: dict[str, Any] = got.json()["data"]["slots"]
    return slots


def sent(link: ObsLink, request: str, result: str = "ok") -> int:
    return link.requests.get((request, result), 0)


@needs_obs
def test_a_take_switches_the_programme_scene_and_refreshes_the_source(
    hub: ObsHub, obs: ObsStudio, link: ObsLink
) -> None:
    # the first state: the leaderboard is on air (the sample's default) -> its scene
    until(lambda: obs.scene() == SCENES["leaderboard"], 10, "the leaderboard's scene")
    refreshes = obs.received("PressInputPropertiesButton", REFRESHED)
    take(hub, "seat", {"seat": 3})
    until(lambda: obs.scene() == "Seat", 5, "OBS on the Seat scene after the Take")
    until(lambda: obs.received("PressInputPropertiesButton", REFRESHED) == refreshes + 1, 5)
    assert obs.received("PressInputPropertiesButton", '"propertyName": "refreshnocache"')
    # Debian's OBS has no browser source: OBS answers, the link says it in words, and goes on
    until(lambda: sent(link, "PressInputPropertiesButton", "refused") >= 1, 5)
    assert link.problem is not None and "Seat overlay" in link.problem
    assert "Unable to find a property by that name" in link.problem
    metrics = hub.source.metrics.render(private=True).decode()  # type: ignore[union-attr]
    assert "duplicast_obs_connected 1.0" in metrics
    assert 'duplicast_obs_requests_total{request="SetCurrentProgramScene",result="ok"}' in metrics


@needs_obs
def test_the_same_state_again_sends_nothing(hub: ObsHub, obs: ObsStudio, link: ObsLink) -> None:
    take(hub, "seat", {"seat": 4})
    until(lambda: obs.scene() == "Seat", 5)
    time.sleep(0.5)
    switches = obs.received("SetCurrentProgramScene")
    refreshes = obs.received("PressInputPropertiesButton")
    take(hub, "seat", {"seat": 4})  # a retried button press: the same value
    control(hub, "hide", {"slot": "ticker"})  # a slot without a scene
    control(hub, "show", {"slot": "ticker"})
    time.sleep(1.0)  # (the link looks 10 times a second)
    assert obs.received("SetCurrentProgramScene") == switches
    assert obs.received("PressInputPropertiesButton") == refreshes
    control(hub, "hide", {"slot": "seat"})  # its slot off air: the leaderboard's scene
    until(lambda: obs.scene() == SCENES["leaderboard"], 5)
    assert obs.received("SetCurrentProgramScene") == switches + 1


@needs_obs
def test_a_scene_switched_by_hand_stays_until_the_next_take(
    hub: ObsHub, obs: ObsStudio, link: ObsLink
) -> None:
    take(hub, "seat", {"seat": 5})
    until(lambda: obs.scene() == "Seat", 5)
    client = obs.client()
    try:
        client.set_current_program_scene(DEFAULT)  # the vision mixer's own choice
    finally:
        client.disconnect()
    time.sleep(2.5)  # more than a heartbeat
    assert obs.scene() == DEFAULT, "the link does not fight a hand on OBS"
    take(hub, "seat", {"seat": 6})  # the next Take of the slot: its scene again
    until(lambda: obs.scene() == "Seat", 5, "OBS back on the Seat scene")


@needs_obs
def test_a_compare_of_a_deal_not_released_reaches_obs_with_the_programme(
    hub: ObsHub, obs: ObsStudio, link: ObsLink
) -> None:
    ops = hub.ops()
    released = {int(r["deal"]) for r in ops["release"] if r["released"]}
    playing = sorted({int(t["deal"]) for t in ops["tables"] if t["deal"] is not None} - released)
    assert playing, "the sample session has a deal in play at this point"
    deal = playing[0]
    before = obs.scene()
    take(hub, "compare", {"deal": deal, "seat": 1, "tables": [1, 2]})
    assert hub.rest("/api/onair", OPERATOR)["slots"]["compare"]["visible"] is True
    time.sleep(1.5)  # more than the delay and the link's look
    assert programme_onair(hub)["compare"] == {"visible": False}, "the programme hides it"
    assert obs.scene() == before, "OBS does not show what the programme does not"
    hub.play(hub.events[hub.sent :])  # the session finishes: every deal is released
    hub.sent = len(hub.events)
    until(lambda: programme_onair(hub)["compare"].get("visible"), 20, "the release")
    until(lambda: obs.scene() == SCENES["compare"], 5, "OBS on the split screen")


@needs_obs
def test_a_wrong_password_is_said_in_words_and_the_hub_serves_on(
    hub: ObsHub, obs: ObsStudio
) -> None:
    wrong = hub.link(password="not-the-password", port=obs.port)
    try:
        until(lambda: wrong.connect_failures >= 2, 10, "two refused attempts")
        assert not wrong.connected
        assert wrong.problem == (
            f"OBS at ws://127.0.0.1:{obs.port} refused the password in DUPLICAST_OBS_PASSWORD"
        )
        started = time.monotonic()
        assert programme_onair(hub)["leaderboard"]["visible"] is True
        assert time.monotonic() - started < 1.0
    finally:
        hub.unlink(wrong)
    nothing = hub.link(port=free_port())  # nothing listens there
    try:
        until(lambda: nothing.problem is not None, 10)
        assert nothing.problem is not None and nothing.problem.startswith("nothing listens at")
    finally:
        hub.unlink(nothing)


@needs_obs
def test_an_obs_restart_is_synced_to_the_current_state(
    hub: ObsHub, obs: ObsStudio, link: ObsLink
) -> None:
    refused = sent(link, "PressInputPropertiesButton", "refused")
    take(hub, "seat", {"seat": 2})
    until(lambda: obs.scene() == "Seat", 5)
    until(lambda: sent(link, "PressInputPropertiesButton", "refused") > refused, 5)
    connects = link.connects
    obs.stop()
    until(lambda: not link.connected, 10, "the link to notice OBS went away")
    assert link.problem in (
        f"OBS at ws://127.0.0.1:{obs.port} closed the connection (OBS quit or restarted?)",
        f"nothing listens at ws://127.0.0.1:{obs.port} (is OBS running, with Tools → WebSocket "
        "Server Settings → Enable WebSocket server?)",
    )
    control(hub, "hide", {"slot": "seat"})  # while OBS is away: owed the leaderboard's scene
    take(hub, "leaderboard", {"view": "running"})
    started = time.monotonic()
    assert programme_onair(hub)["seat"]["visible"] is False
    assert time.monotonic() - started < 1.0, "OBS away does not slow the hub"
    obs.start()
    until(lambda: link.connects == connects + 1, 30, "the link back")
    until(lambda: obs.scene() == SCENES["leaderboard"], 5, "OBS synced to the state")
    assert link.problem is None


def test_the_link_is_off_without_its_url() -> None:
    assert obs_settings(object(), {"DUPLICAST_OBS_SCENES": "seat=S"}) is None


async def test_obs_down_costs_the_loop_nothing() -> None:
    """A link to an address where nothing answers: the loop keeps its pace while it fails."""

    class Store:
        def available(self, key: Any) -> bool:
            return True

        def seq(self, key: Any) -> int:
            return 1

        def snapshot(self, key: Any) -> tuple[int, dict[str, Any]]:
            return 1, {"slots": {"seat": {"visible": True, "seat": 1}}}

    def hang(settings: ObsSettings) -> Any:
        time.sleep(2.0)  # a connect that hangs up to the timeout
        raise TimeoutError("timed out")

    settings = ObsSettings("127.0.0.1", free_port(), scenes={"seat": "Seat"})
    link = ObsLink(settings, Store(), "public", connect=hang)
    link.start()
    worst = 0.0
    try:
        for _ in range(40):
            t = time.perf_counter()
            await asyncio.sleep(0.05)
            worst = max(worst, time.perf_counter() - t - 0.05)
    finally:
        await link.stop()
    assert link.plan.target == "Seat"
    # A connect run on the loop would hold it 2 s; a loaded machine's timer jitter stays far
    # below that (0.07 s seen at load 20 on 2 cores).
    assert worst < 0.5, f"the loop was held {worst:.3f} s"


@needs_obs
@pytest.mark.redis
def test_duplicast_serve_runs_the_link(obs: ObsStudio, redis_url: str, tmp_path: Path) -> None:
    """The command a crew runs: ``duplicast serve`` with ``DUPLICAST_OBS_*`` set follows its
    programme into OBS (a tournament of its own with a delay; the mixer over REST)."""
    from tests.test_serve_cli import Served

    text = (ROOT / "samples" / "ifp6.toml").read_text()
    config = tmp_path / "obs.toml"
    config.write_text(
        text.replace('id = "ifp-demo"', f'id = "obs-{os.getpid()}-{free_port()}"', 1)
        + "\n[broadcast]\ndelay = 1\n"
    )
    port = free_port()
    client = obs.client()
    try:
        client.set_current_program_scene(SCENES["leaderboard"])  # the link must move it
    finally:
        client.disconnect()
    env = {k: v for k, v in os.environ.items() if not k.startswith("DUPLICAST_")} | {
        "DUPLICAST_OPERATOR_TOKEN": OPERATOR,
        "DUPLICAST_OBS_URL": f"ws://127.0.0.1:{obs.port}",
        "DUPLICAST_OBS_PASSWORD": PASSWORD,
        "DUPLICAST_OBS_SCENES": "table=Seat;default=Wide",
    }
    command = [sys.executable, "-m", "hub", "serve", "--role", "all", "--config", str(config)]
    served = Served(
        [*command, "--redis", redis_url, "--port", str(port)], env, tmp_path / "serve.log"
    )
    try:
        until(lambda: obs.scene() == DEFAULT, 10, f"the default scene: {served.stderr()}")
        url = f"http://127.0.0.1:{port}/api/control"
        for action, body in (("preview", {"slot": "table", "value": {"table": 2}}), ("take", {})):
            got = httpx.post(f"{url}/{action}", json=body, headers=OP, timeout=5)
            assert got.status_code == 200, got.text
        until(lambda: obs.scene() == "Seat", 5, "OBS on the table's scene")
        assert "OBS link: connected to ws://127.0.0.1:" in served.stderr()
        assert PASSWORD not in served.stderr(), "the password stays out of the log"
    finally:
        served.stop()


@pytest.mark.redis
def test_an_edge_leaves_the_link_to_the_ingest(redis_url: str, tmp_path: Path) -> None:
    """An environment shared by every process (a compose file): one link, not one per edge."""
    from tests.test_serve_cli import Served, environ, serve_command

    env = environ() | {"DUPLICAST_OBS_URL": "ws://127.0.0.1:1", "DUPLICAST_OBS_SCENES": "seat=S"}
    served = Served(serve_command(redis_url, free_port()), env, tmp_path / "edge.log")
    try:
        assert (
            "duplicast serve: warning: DUPLICAST_OBS_URL is set, but the OBS link runs in the "
            "ingest (or --role all), not in this edge: ignored here"
        ) in served.stderr()
        assert "OBS link:" not in served.stderr(), "no link started"
    finally:
        served.stop()
