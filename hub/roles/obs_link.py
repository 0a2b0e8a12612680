"""The OBS link: OBS Studio follows the mixer through obs-websocket v5 (issue #33 item 5,
docs/overlays.md "OBS Studio").

When what is on air in a slot changes *as the programme shows it* (the ``onair`` topic of the
programme output, ``program`` when ``[broadcast] delay`` is set, else ``public``: the entry a
programme browser source and ``GET /api/onair?feed=program`` read), OBS's programme scene is
switched to that slot's scene (``SetCurrentProgramScene``) and the slot's browser sources are
refreshed (``PressInputPropertiesButton`` ``refreshnocache``). A compare slot of a deal not yet
released is hidden on the programme, so its scene waits for the release, as the programme does.

Three parts, each with one job:

- `ObsSettings`: the link's configuration from the environment (``DUPLICAST_OBS_*``), refused
  in words when it does not parse (`ObsSettingsError`).
- `ObsPlan`: pure. Given each new ``slots`` value, which scene OBS should show and which
  sources want a refresh. An unchanged state asks for nothing (idempotent).
- `ObsLink`: the I/O. It polls the feed store's entry (a dictionary look-up, 10 times a
  second), and a worker task talks to OBS with ``obsws-python`` (a blocking client, so every
  call runs in a thread, bounded by a timeout): the hub's loop never waits on OBS. What is
  owed to OBS is a state, not a queue: the target scene and a set of sources to refresh
  (bounded by the configuration), so OBS down for an hour costs nothing and gets one switch
  when it is back. Reconnects with backoff (0.5 s doubling to 15 s); on every (re)connection
  it syncs OBS to the target; a heartbeat every ``HEARTBEAT`` seconds finds an OBS that went
  away while nothing was owed. A scene chosen by hand in OBS is left alone until the next Take
  of a listed slot (or OBS reconnects).

Metrics (private registry): ``duplicast_obs_connected``, ``duplicast_obs_connects``,
``duplicast_obs_connect_failures``, ``duplicast_obs_requests{request,result}``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlsplit

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from hub.engine.onair import ONAIR_SLOTS
from hub.wire.topics import PUBLIC, TopicKey, program_outputs

__all__ = [
    "URL_ENV",
    "ObsLink",
    "ObsPlan",
    "ObsSettings",
    "ObsSettingsError",
    "obs_settings",
    "start_obs_link",
]

log = logging.getLogger("duplicast.obs")

URL_ENV = "DUPLICAST_OBS_URL"
PASSWORD_ENV = "DUPLICAST_OBS_PASSWORD"
SCENES_ENV = "DUPLICAST_OBS_SCENES"
REFRESH_ENV = "DUPLICAST_OBS_REFRESH"
OUTPUT_ENV = "DUPLICAST_OBS_OUTPUT"
DEFAULT_KEY = "default"  # DUPLICAST_OBS_SCENES: the scene when no mapped slot is on air

POLL = 0.1  # the store's onair entry is looked at this often
HEARTBEAT = 2.0  # an idle connection is checked this often (an OBS restarted meanwhile)
TIMEOUT = 3.0  # connect and each request
BACKOFF_FIRST = 0.5
BACKOFF_MAX = 15.0
REFRESH_BUTTON = "refreshnocache"  # the browser source's "Refresh cache of current page"


class ObsSettingsError(ValueError):
    """A ``DUPLICAST_OBS_*`` value that does not parse: one line naming the variable."""


def _pairs(name: str, text: str, keys: tuple[str, ...]) -> dict[str, str]:
    """``slot=Value; slot=Value`` (``;`` or new lines between pairs), keys from ``keys``."""
    out: dict[str, str] = {}
    for part in text.replace("\n", ";").split(";"):
        if not part.strip():
            continue
        key, eq, value = part.partition("=")
        key, value = key.strip(), value.strip()
        if not eq or not value:
            raise ObsSettingsError(f"{name}: {part.strip()!r} is not slot=name")
        if key not in keys:
            raise ObsSettingsError(f"{name}: {key!r} is not one of {', '.join(keys)}")
        if key in out:
            raise ObsSettingsError(f"{name}: {key!r} is given twice")
        out[key] = value
    return out


@dataclass(frozen=True)
class ObsSettings:
    """Where OBS is and what it does for each slot (docs/overlays.md "OBS Studio")."""

    host: str
    port: int
    password: str = field(default="", repr=False)
    scenes: dict[str, str] = field(default_factory=dict)  # slot -> scene, in priority order
    default: str | None = None  # the scene when no mapped slot is on air (None: leave it)
    refresh: dict[str, tuple[str, ...]] = field(default_factory=dict)  # slot -> sources
    output: str | None = None  # the programme output followed (None: the default one)

    @property
    def url(self) -> str:
        return f"ws://{self.host}:{self.port}"

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> ObsSettings | None:
        """The link's settings, or None when ``DUPLICAST_OBS_URL`` is unset (no link)."""
        url = environ.get(URL_ENV, "").strip()
        if not url:
            return None
        parts = urlsplit(url)
        if parts.scheme != "ws" or not parts.hostname or parts.path not in ("", "/"):
            raise ObsSettingsError(
                f"{URL_ENV}: expected ws://HOST:PORT (obs-websocket v5, e.g. ws://127.0.0.1:4455),"
                f" got {url!r}"
            )
        try:
            port = parts.port or 4455
        except ValueError:
            raise ObsSettingsError(f"{URL_ENV}: the port of {url!r} is not a number") from None
        host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
        scenes = _pairs(SCENES_ENV, environ.get(SCENES_ENV, ""), (*ONAIR_SLOTS, DEFAULT_KEY))
        default = scenes.pop(DEFAULT_KEY, None)
        refresh = {
            slot: tuple(s.strip() for s in names.split(",") if s.strip())
            for slot, names in _pairs(
                REFRESH_ENV, environ.get(REFRESH_ENV, ""), ONAIR_SLOTS
            ).items()
        }
        if not scenes and not refresh:
            raise ObsSettingsError(
                f"{URL_ENV} is set but neither {SCENES_ENV} nor {REFRESH_ENV} says what OBS "
                f"should do (e.g. {SCENES_ENV}='compare=Split screen;default=Wide')"
            )
        return cls(
            host=host,
            port=port,
            password=environ.get(PASSWORD_ENV, ""),
            scenes=scenes,
            default=default,
            refresh=refresh,
            output=environ.get(OUTPUT_ENV, "").strip() or None,
        )

    def audience(self, config: Any) -> str:
        """The feed audience followed: the programme output's when a delay is set (``program``
        or ``program:NAME``), else the public one."""
        outputs = program_outputs(config)
        if not outputs:
            if self.output is not None:
                raise ObsSettingsError(f"{OUTPUT_ENV}: this tournament has no programme delay")
            return PUBLIC
        name = self.output or next(iter(outputs))
        if name not in outputs:
            known = ", ".join(outputs)
            raise ObsSettingsError(f"{OUTPUT_ENV}: no programme output {name!r} (outputs {known})")
        return outputs[name][0]


# ---------------------------------------------------------------------------- the plan (pure)


def _shown(value: Any) -> dict[str, Any] | None:
    """What a slot shows: its selection while visible (the transition flag ``cut`` aside),
    None while hidden."""
    if not isinstance(value, Mapping) or value.get("visible") is not True:
        return None
    return {k: v for k, v in value.items() if k not in ("visible", "cut")}


class ObsPlan:
    """Which scene OBS should show, and which sources want a refresh, as the slots change.

    - The first state seen: the scene of the first slot (in ``scenes``' order) on air, else
      the default scene, else none (OBS is left as it is).
    - A slot that comes on air, or changes its selection on air: its scene (if several in one
      change, the first in ``scenes``' order), and its sources refreshed.
    - The slot whose scene is the target goes off air: the first other mapped slot on air,
      else the default scene, else the target stays.
    - Anything else (an unmapped slot, a value that shows the same): nothing.

    ``step`` says whether OBS should be switched: the target moved, or a listed slot was
    taken (its scene again: someone may have switched OBS by hand since).
    """

    def __init__(
        self,
        scenes: Mapping[str, str],
        default: str | None = None,
        refresh: Mapping[str, tuple[str, ...]] | None = None,
    ) -> None:
        self.scenes = dict(scenes)
        self.default = default
        self.refresh = dict(refresh or {})
        self.target: str | None = None
        self.owner: str | None = None  # the slot whose scene the target is (None: default)
        self.shown: dict[str, dict[str, Any] | None] | None = None

    def _fallback(self, shown: Mapping[str, Any]) -> tuple[str | None, str | None]:
        for slot, scene in self.scenes.items():
            if shown.get(slot) is not None:
                return slot, scene
        return None, self.default

    def step(self, slots: Mapping[str, Any]) -> tuple[bool, list[str]]:
        """Take the slots' new value: (switch OBS to the target, sources to refresh)."""
        shown = {slot: _shown(slots.get(slot)) for slot in ONAIR_SLOTS}
        before, self.shown = self.shown, shown
        old_target = self.target
        if before is None:
            owner, target = self._fallback(shown)
            if target is not None:
                self.owner, self.target = owner, target
            return self.target != old_target, []
        changed = [slot for slot in ONAIR_SLOTS if shown[slot] != before[slot]]
        came = [slot for slot in changed if shown[slot] is not None]
        refresh = [name for slot in came for name in self.refresh.get(slot, ())]
        taken = [slot for slot in self.scenes if slot in came]
        if taken:
            self.owner, self.target = taken[0], self.scenes[taken[0]]
            return True, list(dict.fromkeys(refresh))
        if self.owner is not None and shown[self.owner] is None:  # its slot left the air
            owner, target = self._fallback(shown)
            if target is not None:
                self.owner, self.target = owner, target
        return self.target != old_target, list(dict.fromkeys(refresh))


# ---------------------------------------------------------------------------- the I/O


class Store(Protocol):
    """What the link reads of a feed store (``hub.serve.feed``, ``hub.serve.edge_feed``)."""

    def available(self, key: TopicKey) -> bool: ...
    def seq(self, key: TopicKey) -> int: ...
    def snapshot(self, key: TopicKey) -> tuple[int, dict[str, Any]]: ...


def _words(exc: BaseException, settings: ObsSettings) -> str:
    """Why OBS could not be reached or refused the link, in words."""
    text = str(exc)
    if "no password provided" in text:
        return f"OBS at {settings.url} asks for a password: set {PASSWORD_ENV}"
    if "failed to identify" in text:
        if settings.password:
            return f"OBS at {settings.url} refused the password in {PASSWORD_ENV}"
        return f"OBS at {settings.url} refused the link while identifying it"
    if isinstance(exc, ConnectionRefusedError):
        return (
            f"nothing listens at {settings.url} (is OBS running, with Tools → WebSocket "
            "Server Settings → Enable WebSocket server?)"
        )
    if isinstance(exc, TimeoutError) or "timed out" in text.lower():
        return f"OBS at {settings.url} did not answer within {TIMEOUT:g} s"
    closed = ("closed", "lost")  # (websocket-client's words)
    if isinstance(exc, ConnectionError | ValueError) or any(w in text.lower() for w in closed):
        return f"OBS at {settings.url} closed the connection (OBS quit or restarted?)"
    return f"OBS at {settings.url}: {type(exc).__name__}: {text or 'connection lost'}"


class _Collector(Collector):
    def __init__(self, link: ObsLink) -> None:
        self.link = link

    def collect(self) -> Iterator[Metric]:
        link = self.link
        yield GaugeMetricFamily(
            "duplicast_obs_connected",
            "1 while the OBS link is identified with OBS",
            value=int(link.connected),
        )
        yield CounterMetricFamily(
            "duplicast_obs_connects", "Times the OBS link identified with OBS", value=link.connects
        )
        yield CounterMetricFamily(
            "duplicast_obs_connect_failures",
            "Attempts to reach OBS that failed (down, refused, wrong password)",
            value=link.connect_failures,
        )
        requests = CounterMetricFamily(
            "duplicast_obs_requests",
            "Requests the OBS link sent, by request type and result (ok, refused, lost)",
            labels=["request", "result"],
        )
        for (request, result), count in sorted(link.requests.items()):
            requests.add_metric([request, result], count)
        yield requests


def _client(settings: ObsSettings) -> Any:
    import obsws_python

    return obsws_python.ReqClient(
        host=settings.host, port=settings.port, password=settings.password, timeout=TIMEOUT
    )


class _Lost(Exception):
    """The connection to OBS failed: reconnect."""


class ObsLink:
    """Follows the programme's ``onair`` entry of ``store`` into OBS (see the module)."""

    def __init__(
        self,
        settings: ObsSettings,
        store: Store,
        audience: str,
        *,
        connect: Callable[[ObsSettings], Any] = _client,
        poll: float = POLL,
        heartbeat: float = HEARTBEAT,
    ) -> None:
        # obsws-python logs its connection parameters, the password included, at INFO, and a
        # traceback for every refused request: the link says what matters itself.
        logging.getLogger("obsws_python").setLevel(logging.CRITICAL + 1)
        self.settings = settings
        self.store = store
        self.key: TopicKey = (audience, "onair")
        self.plan = ObsPlan(settings.scenes, settings.default, settings.refresh)
        self.connect = connect
        self.poll = poll
        self.heartbeat = heartbeat
        self.client: Any = None
        self.connected = False
        self.connects = 0
        self.connect_failures = 0
        self.requests: dict[tuple[str, str], int] = {}
        self.obs_scene: str | None = None  # OBS's programme scene as last set or read
        self.refused: str | None = None  # a target OBS refused: not asked again
        self.taken = False  # a Take since the last switch: OBS's scene read before it
        self.refresh: dict[str, None] = {}  # sources owed a refresh, in order
        self.problem: str | None = None  # the last failure said (said again only if new)
        self._seq = -1
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        log.info(
            "OBS link: %s follows the %s on-air slots (scenes %s, default %s, refresh %s)",
            self.settings.url,
            self.key[0],
            self.settings.scenes or "none",
            self.settings.default or "none",
            self.settings.refresh or "none",
        )
        self._tasks = [
            asyncio.create_task(self._follow(), name="obs-follow"),
            asyncio.create_task(self._talk(), name="obs-talk"),
        ]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            try:
                await task
            except asyncio.CancelledError:
                pass
            except Exception:  # (already logged by the loop that raised it)
                pass
        self._tasks = []
        if self.client is not None:
            client, self.client = self.client, None
            await asyncio.to_thread(_close, client)
        self.connected = False

    # ------------------------------------------------------------------ the programme
    def observe(self) -> bool:
        """Take the store's onair entry if it moved; True if OBS is owed something new."""
        key = self.key
        if not self.store.available(key):
            return False
        seq = self.store.seq(key)
        if seq == self._seq:
            return False
        # (a topic no client asked for yet has seq 0: the ingest's store builds it on a read)
        seq, payload = self.store.snapshot(key)
        if seq == 0 or seq == self._seq:
            return False
        self._seq = seq
        moved, refresh = self.plan.step(payload.get("slots") or {})
        if moved:
            self.refused = None
            self.taken = True
        self.refresh.update(dict.fromkeys(refresh))
        return moved or bool(refresh)

    async def _follow(self) -> None:
        while True:
            try:
                if self.observe():
                    self._wake.set()
            except Exception:  # a payload of a shape we do not expect: a bug, not a stop
                log.exception("OBS link: could not read the on-air state")
            await asyncio.sleep(self.poll)

    # ------------------------------------------------------------------ OBS
    def _count(self, request: str, result: str) -> None:
        key = (request, result)
        self.requests[key] = self.requests.get(key, 0) + 1

    def _say(self, problem: str) -> None:
        if problem != self.problem:
            self.problem = problem
            log.warning("OBS link: %s", problem)

    async def _call(self, request: str, method: str, *args: Any) -> tuple[bool, Any]:
        """One request in a thread: (True, its answer), (False, None) if OBS refused it (said
        in words), or `_Lost` when the connection failed."""
        from obsws_python.error import OBSSDKRequestError

        try:
            answer = await asyncio.to_thread(getattr(self.client, method), *args)
        except OBSSDKRequestError as exc:
            self._count(request, "refused")
            self._say(f"OBS refused {request} {', '.join(map(repr, args))}: {_comment(exc)}")
            return False, None
        except Exception as exc:
            self._count(request, "lost")
            raise _Lost(_words(exc, self.settings)) from exc
        self._count(request, "ok")
        return True, answer

    async def _open(self) -> None:
        try:
            self.client = await asyncio.to_thread(self.connect, self.settings)
        except Exception as exc:
            self.connect_failures += 1
            raise _Lost(_words(exc, self.settings)) from exc
        self.connected = True
        self.connects += 1
        self.refused = None
        self.problem = None
        ok, answer = await self._call("GetCurrentProgramScene", "get_current_program_scene")
        self.obs_scene = getattr(answer, "current_program_scene_name", None) if ok else None
        log.info(
            "OBS link: connected to %s (programme scene %r)", self.settings.url, self.obs_scene
        )

    async def _sync(self) -> None:
        """Bring OBS to what it is owed: the target scene, then the refreshes."""
        target = self.plan.target
        if self.taken and target is not None and target == self.obs_scene:
            # a Take of the scene last set: switched by hand since? (asked, not assumed)
            ok, answer = await self._call("GetCurrentProgramScene", "get_current_program_scene")
            self.obs_scene = getattr(answer, "current_program_scene_name", None) if ok else None
        self.taken = False
        if target is not None and target != self.obs_scene and target != self.refused:
            ok, _ = await self._call("SetCurrentProgramScene", "set_current_program_scene", target)
            if ok:
                self.obs_scene = target
                log.info("OBS link: programme scene %r", target)
            else:
                self.refused = target  # (no scene of that name: asked again on a change)
        while self.refresh:
            name = next(iter(self.refresh))
            await self._call(
                "PressInputPropertiesButton", "press_input_properties_button", name, REFRESH_BUTTON
            )
            self.refresh.pop(name, None)

    async def _talk(self) -> None:
        delay = BACKOFF_FIRST
        while True:
            try:
                if self.client is None:
                    await self._open()
                await self._sync()
                delay = BACKOFF_FIRST
                try:
                    await asyncio.wait_for(self._wake.wait(), self.heartbeat)
                    self._wake.clear()
                except TimeoutError:
                    await self._call("GetVersion", "get_version")
            except _Lost as lost:
                self._say(str(lost))
                await self._drop()
                await asyncio.sleep(delay)
                delay = min(delay * 2, BACKOFF_MAX)
            except asyncio.CancelledError:
                raise
            except Exception:  # a bug of ours: say it, back off, go on
                log.exception("OBS link: unexpected failure")
                await self._drop()
                await asyncio.sleep(delay)
                delay = min(delay * 2, BACKOFF_MAX)

    async def _drop(self) -> None:
        client, self.client = self.client, None
        self.connected = False
        self.obs_scene = None
        if client is not None:
            await asyncio.to_thread(_close, client)


def _comment(exc: Any) -> str:
    return str(getattr(exc, "message", None) or exc)


def _close(client: Any) -> None:
    try:
        client.disconnect()
    except Exception:  # already gone
        pass


def obs_settings(config: Any, environ: Mapping[str, str]) -> tuple[ObsSettings, str] | None:
    """The link's settings and the audience it follows, or None when ``DUPLICAST_OBS_URL`` is
    unset (no link). `ObsSettingsError` names a setting that is wrong."""
    settings = ObsSettings.from_env(environ)
    if settings is None:
        return None
    return settings, settings.audience(config)


def start_obs_link(
    store: Store, settings: ObsSettings, audience: str, registry: Any = None
) -> ObsLink:
    """The OBS link started on the running loop, its metrics on ``registry`` (the hub's
    private one)."""
    link = ObsLink(settings, store, audience)
    if registry is not None:
        registry.register(_Collector(link))
    link.start()
    return link
