"""Prometheus metrics of one process, in their own registries (tests build many apps).

Hot-path counts (frames sent or dropped) stay plain integers on the ``Fanout`` and are read at
scrape time by a collector; the ingest reports through the helper methods.

Two views (issue #9: a 20 Hz poller of the public ``/metrics`` counted the steps of an
unreleased hand from the event counters). ``render(private=False)``, what anyone gets, says
only that the process is up and how many websocket clients it holds in all: nothing that moves
with one table's play, no reject codes, no count per role. Everything else (events and rejects
by code, ingest latency, clients per role, frames sent and dropped: commentators' frames move
with every action of a deal not yet released) is in ``render(private=True)``, served to the
operator token or on the separate ``--metrics-port``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, Protocol

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    start_http_server,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from hub.domain.states import ROLES

__all__ = ["CONTENT_TYPE", "Metrics", "serve_private"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
REFUSALS = ("too_many_connections", "unauthorized", "forbidden_origin")  # always reported


class Fanout(Protocol):
    """What a scrape reads of a fan-out (``hub.serve.fanout.Fanout``): plain counts."""

    frames_sent: int
    frames_dropped: int
    slow_closes: int

    @property
    def refused(self) -> Mapping[str, int]: ...  # connections refused at admission, by code
    def roles(self) -> Mapping[str, int]: ...  # connected clients by role


class Intake(Protocol):
    """What a scrape reads of the ingest's intake (``hub.roles.intake.FairIntake``)."""

    @property
    def dropped(self) -> int: ...
    @property
    def resubscribed(self) -> int: ...
    @property
    def pending(self) -> int: ...


class _FanoutCollector(Collector):
    def __init__(self) -> None:
        self.fanouts: list[Fanout] = []

    def collect(self) -> Iterator[Metric]:
        clients = GaugeMetricFamily(
            "duplicast_clients", "Connected websocket clients", labels=["role"]
        )
        roles: dict[str, int] = dict.fromkeys(ROLES, 0)
        sent = dropped = slow = 0
        refused = CounterMetricFamily(
            "duplicast_ws_refused",
            "Websocket connections refused at admission, by code",
            labels=["code"],
        )
        codes: dict[str, int] = dict.fromkeys(REFUSALS, 0)
        for fanout in self.fanouts:
            for code, n in fanout.refused.items():
                codes[code] = codes.get(code, 0) + n
            for role, n in fanout.roles().items():
                roles[role] = roles.get(role, 0) + n
            sent += fanout.frames_sent
            dropped += fanout.frames_dropped
            slow += fanout.slow_closes
        for role, n in roles.items():
            clients.add_metric([role], n)
        yield clients
        yield CounterMetricFamily(
            "duplicast_frames_sent", "Websocket frames written to clients", value=sent
        )
        yield CounterMetricFamily(
            "duplicast_frames_dropped",
            "Frames dropped for slow clients (conflated into a snapshot)",
            value=dropped,
        )
        yield CounterMetricFamily(
            "duplicast_slow_client_closes", "Clients closed for being too slow", value=slow
        )
        for code, n in codes.items():
            refused.add_metric([code], n)
        yield refused


class _RequestsCollector(Collector):
    """The incomplete HTTP requests of each server (``hub.serve.httpguard.PendingRequests``): a
    flood of half-sent requests shows here before clients complain."""

    def __init__(self) -> None:
        self.pending: list[Any] = []

    def collect(self) -> Iterator[Metric]:
        yield GaugeMetricFamily(
            "duplicast_http_incomplete_requests",
            "Connections waiting for a complete request head",
            value=sum(len(p) for p in self.pending),
        )
        yield CounterMetricFamily(
            "duplicast_http_request_timeouts",
            "Connections closed for not sending a complete request in time",
            value=sum(p.timed_out for p in self.pending),
        )
        yield CounterMetricFamily(
            "duplicast_http_incomplete_dropped",
            "Incomplete requests closed because too many others waited",
            value=sum(p.dropped for p in self.pending),
        )


class _IntakeCollector(Collector):
    """The ingest's intake (``hub.roles.intake``), read at scrape time: its counts are plain
    ints."""

    def __init__(self) -> None:
        self.intakes: list[Intake] = []

    def collect(self) -> Iterator[Metric]:
        yield CounterMetricFamily(
            "duplicast_ingest_dropped",
            "Console messages dropped, their table's queue full (a flood; consoles resend)",
            value=sum(intake.dropped for intake in self.intakes),
        )
        yield CounterMetricFamily(
            "duplicast_ingest_resubscribes",
            "Times a console-channel subscription was cut (by Redis, or a lost connection) "
            "and subscribed again",
            value=sum(intake.resubscribed for intake in self.intakes),
        )
        yield GaugeMetricFamily(
            "duplicast_ingest_queued",
            "Console messages received and waiting for the ingest, all tables",
            value=sum(intake.pending for intake in self.intakes),
        )


class _PublicCollector(Collector):
    """What anyone may scrape: up, and the total of connected clients (no role, no frames)."""

    def __init__(self, fanouts: _FanoutCollector) -> None:
        self._fanouts = fanouts

    def collect(self) -> Iterator[Metric]:
        yield GaugeMetricFamily("duplicast_up", "1 while this hub process serves", value=1)
        total = sum(sum(f.roles().values()) for f in self._fanouts.fanouts)
        yield GaugeMetricFamily(
            "duplicast_clients_connected", "Connected websocket clients, all roles", value=total
        )


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()  # everything: operator token or --metrics-port
        self.public_registry = CollectorRegistry()  # process-level only: anyone
        self._fanout = _FanoutCollector()
        self.registry.register(self._fanout)
        self.public_registry.register(_PublicCollector(self._fanout))
        self._intake = _IntakeCollector()
        self.registry.register(self._intake)
        self._requests = _RequestsCollector()
        self.registry.register(self._requests)
        # Measured on the hub's own clock, from an event's arrival to its answer being
        # published (consoles' clocks are neither synchronised nor trusted).
        self._lag = Gauge(
            "duplicast_ingest_lag_seconds",
            "Seconds from a console event's arrival at the hub to its answer (latest event)",
            registry=self.registry,
        )
        self._latency = Histogram(
            "duplicast_ingest_latency_seconds",
            "Seconds from a console event's arrival at the hub to its answer",
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
            registry=self.registry,
        )
        self._events = Counter(
            "duplicast_events",
            "Console events processed, by result",
            ["result"],
            registry=self.registry,
        )
        self._rejects = Counter(
            "duplicast_rejects",
            "Rejected console events, by code",
            ["code"],
            registry=self.registry,
        )
        self._signatures = Counter(
            "duplicast_signature_refusals",
            "Signed web console events and operator commands refused (forged, altered, "
            "unsigned, expired, replayed), by kind and code (hub.roles.signed)",
            ["kind", "code"],
            registry=self.registry,
        )

        # Each label's child, once asked for (``labels`` checks and locks on every call: ~2 µs,
        # once or twice per batch at the ingest); the same counters, the same exposition.
        self._event_children: dict[str, Any] = {}
        self._reject_children: dict[str, Any] = {}

    def watch(self, fanout: Fanout) -> None:
        """Report this fan-out's clients and frame counts."""
        if fanout not in self._fanout.fanouts:
            self._fanout.fanouts.append(fanout)

    def watch_intake(self, intake: Intake) -> None:
        """Report this intake's drops, resubscriptions and queue (the latest one only: an
        ingest that took its lease back replaces the intake it had)."""
        self._intake.intakes[:] = [intake]

    def watch_requests(self, pending: Any) -> None:
        """Report a server's incomplete requests (``hub.serve.httpguard.PendingRequests``)."""
        if pending not in self._requests.pending:
            self._requests.pending.append(pending)

    def ingest_lag(self, *seconds: float) -> None:
        """The lags of a batch of events, oldest first (the gauge keeps the latest)."""
        observe = self._latency.observe
        for lag in seconds:
            observe(lag)
        if seconds:
            self._lag.set(seconds[-1])

    def event(self, result: str, count: int = 1) -> None:
        """``result``: e.g. ``accepted``, ``rejected``, ``duplicate`` (``count`` of them)."""
        child = self._event_children.get(result)
        if child is None:
            child = _child(self._events, self._event_children, result)
        child.inc(count)

    def reject(self, code: str, count: int = 1) -> None:
        child = self._reject_children.get(code)
        if child is None:
            child = _child(self._rejects, self._reject_children, code)
        child.inc(count)

    def signature_refused(self, kind: str, code: str) -> None:
        """A signed ``event`` or ``command`` refused (``code``), or a command ``replayed``."""
        self._signatures.labels(kind, code).inc()

    def render(self, private: bool = False) -> bytes:
        """The Prometheus text: everything if ``private``, else the public view only."""
        return generate_latest(self.registry if private else self.public_registry)


CHILDREN = 256  # labels whose child is remembered per counter (codes are few; bounded anyway)


def _child(counter: Counter, children: dict[str, Any], label: str) -> Any:
    """``counter.labels(label)``, remembered in ``children``."""
    child = counter.labels(label)
    if len(children) < CHILDREN:
        children[label] = child
    return child


def serve_private(metrics: Metrics, host: str, port: int) -> Callable[[], None]:
    """Every metric on a port of its own (``--metrics-port``: keep it off the public network,
    e.g. for a Prometheus on the venue LAN); returns a function that stops it."""
    server, thread = start_http_server(port, addr=host, registry=metrics.registry)

    def stop() -> None:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)

    return stop
