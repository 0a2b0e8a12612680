"""What one websocket client may cost the fan-out: its buffering policy, the sockets' options,
and the caps on topics and on connections per address (``Limits``). One frozen value, shared by
the fan-out, its clients and the sockets of a process (``serve --max-per-address``)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Limits"]


@dataclass(frozen=True, slots=True)
class Limits:
    """Per-client buffering policy."""

    max_frames: int = 256  # queued frames before the client's topics are conflated
    max_bytes: int = 1 << 20  # queued bytes, likewise
    high_water: int = 256 << 10  # transport buffer above which we stop writing
    slow_timeout: float = 5.0  # stale, or socket not draining, for longer than this: closed
    close_grace: float = 1.0  # after the close frame: cut off if nothing drains for this long
    sndbuf: int = 128 << 10  # kernel send buffer per client socket (0: the kernel's autotuning)
    congestion: str = "reno"  # TCP congestion control per client socket ("": the system's)
    max_topics: int = 64  # topics one connection may subscribe to
    max_per_address: int = 256  # connections from one client address (a venue's OBS machines)
    max_per_console: int = 4  # sockets of one console token (a tablet, a spare, reconnects)
    max_overflows: int = 3  # overflows within overflow_window: closed
    overflow_window: float = 10.0
    poll: float = 0.02  # how often a backed-up client's socket is checked
