"""How long a console waits for the hub's answer before it sends an event again.

As TCP's retransmission timer (RFC 6298): never below ``timeout``, otherwise the smoothed ack
delay plus four times its deviation, at most `MAX_ACK_TIMEOUT`. A resend on timeout doubles the
timer until the next clean sample (Karn's backoff), so a busy hub, whose acks come later than
``timeout``, is not flooded with copies of events it already holds; the n-th resend of an event
waits an extra full-jitter backoff so a hub back from an outage is not hit by every console at
the same instant."""

from __future__ import annotations

import random

__all__ = ["MAX_ACK_TIMEOUT", "AckTimer"]

MAX_ACK_TIMEOUT = 5.0  # seconds; the adaptive timer never waits longer than this


class AckTimer:
    """One console's timer: samples in (`observe`), waits out (`ack_timeout`, `resend_delay`)."""

    __slots__ = ("_backed_off", "_rng", "_rttvar", "_srtt", "max_backoff", "timeout")

    def __init__(self, timeout: float, max_backoff: float, rng: random.Random) -> None:
        self.timeout = timeout
        self.max_backoff = max_backoff
        self._rng = rng
        self._srtt: float | None = None  # smoothed ack delay (seconds)
        self._rttvar = 0.0
        self._backed_off: float | None = None  # doubled timer after a timeout, until a sample

    @property
    def ack_timeout(self) -> float:
        """Seconds to wait for an ack before sending again: ``timeout`` until the hub's ack
        delay is known, then the smoothed delay plus four deviations (at least ``timeout``)."""
        return min(MAX_ACK_TIMEOUT, max(self._measured_timeout(), self._backed_off or 0.0))

    def _measured_timeout(self) -> float:
        measured = self.timeout if self._srtt is None else self._srtt + 4 * self._rttvar
        return min(MAX_ACK_TIMEOUT, max(self.timeout, measured))

    def observe(self, seconds: float) -> None:
        """One ack delay sample (RFC 6298 smoothing: gains 1/8 and 1/4)."""
        self._backed_off = None
        if self._srtt is None:
            self._srtt, self._rttvar = seconds, seconds / 2
        else:
            self._rttvar = 0.75 * self._rttvar + 0.25 * abs(self._srtt - seconds)
            self._srtt = 0.875 * self._srtt + 0.125 * seconds

    def back_off(self) -> None:
        """Events went unanswered: until a clean sample, new events wait twice as long (Karn)."""
        self._backed_off = min(MAX_ACK_TIMEOUT, 2 * self.ack_timeout)

    def resend_delay(self, sends: int) -> float:
        """Seconds to wait for an ack after an event's ``sends``-th transmission."""
        if sends <= 1:
            return self.ack_timeout
        base = self._measured_timeout()  # resends back off through the jitter bound instead
        bound = min(self.max_backoff, base * 2 ** min(sends - 1, 30))
        return base + self._rng.uniform(0.0, bound)
