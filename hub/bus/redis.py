"""The bus on Redis: PUBLISH/PSUBSCRIBE, a stream per journal (XADD/XRANGE), hashes.

Failure policy, because ingest builds its guarantees on it:
- ``publish``, ``append``, ``read``, the hash commands and ``connect`` retry connection errors
  with exponential backoff and full jitter until ``retry_deadline`` (10 s) has passed, then
  raise. ``append`` therefore either returns an entry id or raises; it never loses data
  silently.
- A retried ``append`` cannot know whether the failed attempt reached Redis, so retries run an
  atomic script that adds the entry only if the stream's last entry is not already these bytes.
  That makes retries exactly-once for a single writer per stream (ingest is the only writer of
  a journal) whose consecutive entries differ (journal records carry a unique (console, seq)).
- Subscriptions run a receive loop that survives Redis errors: log, back off (capped at 2 s),
  reconnect, re-PSUBSCRIBE. Messages published meanwhile are lost (pub/sub); consumers detect
  gaps by seq. A non-transport error ends the subscription and is raised to its consumer.
- "Durable once it returns" means durable as Redis is configured: run it with AOF on and
  ``appendfsync always`` (as docker-compose.yml does); ``everysec`` may lose the last second of
  acknowledged events on a power cut (none on a Redis process crash).
- ``append_many`` journals a batch with one script call: all entries or none, and a retry whose
  lost attempt landed returns the ids already written instead of writing them twice. With a
  ``Fence`` the same script first checks, atomically with the XADDs, that the lease key still
  holds the writer's name, and refuses (``LeaseLost``) otherwise.
- The lease is a plain key holding its owner's name, with a fencing token beside it
  (``{lease}:token``, an INCR counter that never expires): claiming a free lease increments
  the token, renewing it is ``PEXPIRE`` only while it still holds our name, taking back a lease
  that expired (a Redis outage longer than its time to live) keeps our token only if it is
  still the latest, ``DEL`` only if ours. All in scripts, so each is atomic.
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import redis.asyncio as aioredis
from redis.asyncio.connection import AbstractConnection
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import AuthenticationError, RedisError, ResponseError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from hub.bus.base import (
    DEFAULT_SUBSCRIPTION_BUFFER,
    DEFAULT_SUBSCRIPTION_BYTES,
    BufferedSubscription,
    Bus,
    BusUnavailable,
    Fence,
    LeaseLost,
    Message,
    ReadRate,
    parse_id,
    redacted_url,
    token_key,
)

__all__ = ["RedisBus", "RedisSubscription", "RetryPolicy"]

log = logging.getLogger(__name__)

T = TypeVar("T")

TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (
    RedisConnectionError,  # includes BusyLoadingError while Redis replays its AOF
    RedisTimeoutError,
    ConnectionError,
    OSError,
)

YIELD_EVERY = 64
"""Replies a subscription reads before it lets the event loop run other tasks: a reply that is
already buffered returns without suspending, so a flooded connection (hundreds of KB waiting)
would otherwise hold the loop, and every other table's subscription, for tens of ms."""
CLOSE_GRACE = 0.25  # seconds a stopping subscription loop gets per cancellation
CLOSE_ATTEMPTS = 4

_FIELD = b"d"
_APPEND_ONCE = """
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
if last[1] and last[1][2][1] == ARGV[1] and last[1][2][2] == ARGV[2] then
  return last[1][1]
end
return redis.call('XADD', KEYS[1], '*', ARGV[1], ARGV[2])
"""
# A batch is appended by one script, so it lands all or nothing. KEYS: stream, then the lease
# key and its token key when fenced. ARGV: field, retry flag, fence owner ('' = unfenced),
# fence token ('' = owner only), maxlen ('' = none: MAXLEN ~ trims the stream), items.
# Fenced with a token: refuse if someone else holds the lease or a newer token was issued (a
# lease that merely expired, with no claim since, still lets its last holder write). Without a
# token: refuse unless the lease names the owner. Both atomic with the XADDs below.
# On a retry, a newest entry equal to the batch's last item means the lost attempt landed: the
# ids of the batch's entries are returned instead of adding them again.
_APPEND_BATCH = """
if KEYS[2] then
  local holder = redis.call('GET', KEYS[2])
  if ARGV[4] == '' then
    if holder ~= ARGV[3] then
      return redis.error_reply('FENCED the journal lease is held by another writer')
    end
  elseif (holder and holder ~= ARGV[3]) or redis.call('GET', KEYS[3]) ~= ARGV[4] then
    return redis.error_reply('FENCED the journal lease was claimed by another writer')
  end
end
local n = #ARGV - 5
if ARGV[2] == '1' then
  local tail = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', n)
  if #tail == n and tail[1][2][1] == ARGV[1] and tail[1][2][2] == ARGV[#ARGV] then
    local ids = {}
    for i = n, 1, -1 do ids[#ids + 1] = tail[i][1] end
    return ids
  end
end
local ids = {}
for i = 6, #ARGV do
  if ARGV[5] == '' then
    ids[#ids + 1] = redis.call('XADD', KEYS[1], '*', ARGV[1], ARGV[i])
  else
    ids[#ids + 1] = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[5], '*', ARGV[1], ARGV[i])
  end
end
return ids
"""
_PUBLISH_MANY = """
local counts = {}
for i = 1, #ARGV, 2 do
    counts[#counts + 1] = redis.call('PUBLISH', ARGV[i], ARGV[i + 1])
end
return counts
"""

# Take the lease if free (a new token, or the caller's own if it is still the latest), renew it
# if ours. KEYS: lease, token key. ARGV: owner, ttl in ms, token ('' = new). Returns the token
# held, 0 when the owner may not hold the lease.
_CLAIM = """
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return tonumber(redis.call('GET', KEYS[2]) or '0')
end
if holder then return 0 end
local latest = tonumber(redis.call('GET', KEYS[2]) or '0')
if ARGV[3] == '' then
  latest = redis.call('INCR', KEYS[2])
elseif tonumber(ARGV[3]) ~= latest then
  return 0
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return latest
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Exponential backoff with full jitter: attempt n sleeps uniform(0, min(cap, base * 2**n))."""

    deadline: float = 10.0
    base: float = 0.05
    cap: float = 2.0

    def delay(self, attempt: int, rng: random.Random) -> float:
        return rng.uniform(0.0, min(self.cap, self.base * 2 ** min(attempt, 30)))


class RedisSubscription(BufferedSubscription):
    """(P)SUBSCRIBE on a dedicated connection, kept alive by a background receive loop."""

    def __init__(
        self,
        bus: RedisBus,
        pattern: str,
        maxsize: int,
        max_bytes: int,
        rate: ReadRate | None = None,
    ) -> None:
        super().__init__(pattern, maxsize, max_bytes, rate)
        self._bus = bus
        self._registered = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.reconnects = 0
        self._attempt = 0
        self._allowed = 0.0  # the read-rate bucket: when what was read may have been read
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return  # started by the first ready() / __anext__ inside a loop
        self._start()

    @property
    def _command(self) -> str:
        """``SUBSCRIBE`` for a plain channel name, ``PSUBSCRIBE`` for a glob. Same messages,
        but Redis ACLs check them differently: a SUBSCRIBE channel is matched against the
        user's channel patterns (``&dup:t:reply:*`` lets an edge hear its own reply channel,
        whatever its id), a PSUBSCRIBE pattern must equal one of them literally."""
        return "PSUBSCRIBE" if any(c in self.pattern for c in "*?[\\") else "SUBSCRIBE"

    def _start(self) -> None:
        if self._task is None and not self.closed:
            self._task = asyncio.get_running_loop().create_task(
                self._run(), name=f"redis-psubscribe:{self.pattern}"
            )

    @property
    def throttled(self) -> bool:
        return self._allowed > time.monotonic()

    async def ready(self) -> None:
        self._start()
        if self._registered.is_set() or self._task is None:
            return
        waiter = asyncio.ensure_future(self._registered.wait())
        # Wake up also if the loop dies, so a broken subscription cannot hang its caller.
        await asyncio.wait({waiter, self._task}, return_when=asyncio.FIRST_COMPLETED)
        if not waiter.done():
            waiter.cancel()
            raise self._error or RuntimeError(f"subscription {self.pattern!r} is closed")

    async def __anext__(self) -> Message:
        self._start()
        return await super().__anext__()

    async def take(self, limit: int | None = None) -> list[Message]:
        self._start()
        return await super().take(limit)

    async def aclose(self) -> None:
        self._bus._subscriptions.discard(self)
        self._clear()
        self._finish()
        task, self._task = self._task, None
        if task is not None and not task.done():
            # Bounded: a cancellation swallowed below (redis-py, a Redis that stopped
            # answering) must not hang whoever closes us; the loop is then left behind.
            for _ in range(CLOSE_ATTEMPTS):
                task.cancel()
                done, _ = await asyncio.wait({task}, timeout=CLOSE_GRACE)
                if done:
                    break
            else:
                log.error("subscription %r would not stop; left behind", self.pattern)

    async def _run(self) -> None:
        self._attempt = 0  # reconnections since the last successful PSUBSCRIBE
        try:
            while not self.closed:
                connection = self._bus._subscriber()
                try:
                    await connection.connect()  # type: ignore[no-untyped-call]
                    await connection.send_command(self._command, self.pattern)
                    await self._receive(connection)
                except asyncio.CancelledError:
                    raise
                except TRANSIENT_ERRORS as exc:
                    # Also how Redis cutting us off looks (past client-output-buffer-limit
                    # pubsub): what it held for us is lost; the first retry is at once.
                    delay = self._bus._retry.delay(self._attempt, self._bus._rng)
                    self._attempt += 1
                    self.reconnects += 1
                    log.warning(
                        "subscription %r lost Redis (%s); resubscribing in %.2fs",
                        self.pattern,
                        exc,
                        delay,
                    )
                    await asyncio.sleep(delay)
                finally:
                    await _quietly(connection.disconnect(nowait=True))
        except asyncio.CancelledError:
            raise
        except ResponseError as exc:  # refused (an ACL): one line, its subscriber reports it
            log.error("subscription %r refused by Redis: %s", self.pattern, exc)
            self._fail(exc)
        except Exception as exc:
            log.exception("subscription %r failed", self.pattern)
            self._fail(exc)

    async def _receive(self, connection: AbstractConnection) -> None:
        """Read replies off the subscribed connection until it fails. The connection speaks
        RESP2, where a message is a plain reply ``[b"pmessage", pattern, channel, data]``:
        read with ``Connection.read_response``, one message costs about a quarter of what
        ``PubSub.listen`` spends on it (its retry wrapper, observability hooks, RESP3 push
        handling and a dict per message), measured."""
        read = connection.read_response
        deliver = self._deliver
        now = time.monotonic
        rate = self.rate
        per_message = 0.0 if rate is None else 1.0 / rate.messages
        per_byte = 0.0 if rate is None else 1.0 / rate.bytes
        debt = 0.0  # seconds of reading at ``rate`` not yet paid for (``_pace``)
        n = 0
        while True:
            n += 1
            if n % YIELD_EVERY == 0 or debt > 0.01:  # buffered replies do not yield
                await self._pace(debt, rate)
                debt = 0.0
            reply = await read(timeout=math.inf)
            kind = reply[0]
            if kind == b"pmessage":
                data = reply[3]
                deliver(Message(reply[2].decode("utf-8", "replace"), data, now()))
            elif kind == b"message":
                data = reply[2]
                deliver(Message(reply[1].decode("utf-8", "replace"), data, now()))
            else:
                if kind == b"psubscribe" or kind == b"subscribe":
                    self._attempt = 0
                    self._registered.set()
                continue
            if rate is not None:
                debt += max(per_message, len(data) * per_byte)

    async def _pace(self, debt: float, rate: ReadRate | None) -> None:
        """Let other tasks run; past ``rate`` (a token bucket ``rate.burst`` s deep), sleep
        until what was read is within it: the unread messages queue in Redis meanwhile."""
        if rate is None:
            await asyncio.sleep(0)
            return
        now = time.monotonic()
        self._allowed = max(self._allowed, now - rate.burst) + debt
        await asyncio.sleep(max(0.0, self._allowed - now))


async def _quietly(aw: Awaitable[Any]) -> None:
    """Close a connection that may already be broken; errors here change nothing."""
    try:
        await aw
    except asyncio.CancelledError:
        raise
    except Exception:
        log.debug("ignoring error while closing a Redis connection", exc_info=True)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class RedisBus(Bus):
    def __init__(
        self,
        url: str,
        *,
        retry: RetryPolicy | None = None,
        subscription_buffer: int = DEFAULT_SUBSCRIPTION_BUFFER,
        rng: random.Random | None = None,
    ) -> None:
        self.url = url
        self._retry = retry or RetryPolicy()
        self._subscription_buffer = subscription_buffer
        self._rng = rng or random.Random()
        self._redis: aioredis.Redis | None = None
        self._subscriptions: set[RedisSubscription] = set()
        self._append_once: Any = None
        self._append_batch: Any = None
        self._publish_many: Any = None
        self._claim: Any = None
        self._release: Any = None

    def _subscriber(self) -> AbstractConnection:
        """A new connection for one subscription, set up like the client's (address, login,
        TLS, timeouts) but speaking RESP2: pub/sub messages are then plain replies that
        ``read_response`` returns, not RESP3 pushes handed to a push handler."""
        pool = self._client().connection_pool
        return pool.connection_class(**{**pool.connection_kwargs, "protocol": 2})

    def _client(self) -> aioredis.Redis:
        if self._redis is None:
            # Our own retry policy replaces redis-py's, so deadlines mean what they say.
            self._redis = aioredis.Redis.from_url(
                self.url,
                decode_responses=False,
                retry=Retry(NoBackoff(), 0),
                socket_connect_timeout=2.0,
                socket_keepalive=True,
            )
            self._append_once = self._redis.register_script(_APPEND_ONCE)
            self._append_batch = self._redis.register_script(_APPEND_BATCH)
            self._claim = self._redis.register_script(_CLAIM)
            self._publish_many = self._redis.register_script(_PUBLISH_MANY)
            self._release = self._redis.register_script(_RELEASE)
        return self._redis

    async def _call(
        self, what: str, command: Callable[[int], Awaitable[T]], *, quiet: bool = False
    ) -> T:
        """Run ``command(attempt)``, retrying transient errors until the deadline (``quiet``:
        the retries are logged at debug level only, the caller reports the failure)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._retry.deadline
        attempt = 0
        while True:
            try:
                return await command(attempt)
            except TRANSIENT_ERRORS as exc:
                delay = self._retry.delay(attempt, self._rng)
                if loop.time() + delay > deadline:
                    if not quiet:
                        log.error("Redis %s failed for %.1fs: %s", what, self._retry.deadline, exc)
                    raise
                log.log(
                    logging.DEBUG if quiet else logging.WARNING,
                    "Redis %s failed (%s); retrying in %.2fs",
                    what,
                    exc,
                    delay,
                )
                attempt += 1
                await asyncio.sleep(delay)

    async def connect(self) -> None:
        """Ping until the retry deadline (Redis may still be starting); then ``BusUnavailable``
        with one line saying where and why (the password left out)."""
        client = self._client()

        async def ping(_: int) -> Any:
            try:
                return await client.ping()
            except AuthenticationError as exc:  # a ConnectionError to redis-py; no retry helps
                raise RedisError(str(exc)) from None

        try:
            await self._call("connect", ping, quiet=True)
        except TRANSIENT_ERRORS as exc:
            raise BusUnavailable(
                f"cannot reach Redis at {redacted_url(self.url)} within "
                f"{self._retry.deadline:.0f} s: {exc}"
            ) from None
        except RedisError as exc:  # a refused login, a missing ACL permission...
            raise BusUnavailable(f"Redis at {redacted_url(self.url)} refused: {exc}") from None

    async def close(self) -> None:
        """Bounded, even when Redis does not answer: subscriptions are stopped together (each
        within about a second) and the connections closed within ``CLOSE_GRACE`` more."""
        subs = list(self._subscriptions)
        if subs:
            await asyncio.gather(*(sub.aclose() for sub in subs), return_exceptions=True)
        if self._redis is not None:
            client, self._redis = self._redis, None
            closing = asyncio.ensure_future(_quietly(client.aclose()))
            done, _ = await asyncio.wait({closing}, timeout=CLOSE_GRACE * CLOSE_ATTEMPTS)
            if not done:
                closing.cancel()
                log.error("closing the Redis connections did not finish; left behind")

    async def publish(self, channel: str, data: bytes) -> int:
        client = self._client()
        return int(await self._call("publish", lambda _: client.publish(channel, data)))

    def subscribe(
        self,
        pattern: str,
        *,
        buffer: int | None = None,
        max_bytes: int | None = None,
        rate: ReadRate | None = None,
    ) -> RedisSubscription:
        self._client()
        size = self._subscription_buffer if buffer is None else buffer
        sub = RedisSubscription(self, pattern, size, max_bytes or DEFAULT_SUBSCRIPTION_BYTES, rate)
        self._subscriptions.add(sub)
        return sub

    async def append(self, stream: str, data: bytes) -> str:
        client = self._client()

        async def attempt(n: int) -> Any:
            if n == 0:
                return await client.xadd(stream, {_FIELD: data})
            return await self._append_once(keys=[stream], args=[_FIELD, data])

        return _text(await self._call("append", attempt))

    async def append_many(
        self,
        stream: str,
        items: Sequence[bytes],
        *,
        fence: Fence | None = None,
        maxlen: int | None = None,
    ) -> list[str]:
        if not items:
            return []
        if len(items) == 1 and fence is None and maxlen is None:
            return [await self.append(stream, items[0])]
        self._client()
        script = self._append_batch
        keys = [stream] if fence is None else [stream, fence.key, token_key(fence.key)]
        owner = b"" if fence is None else fence.owner.encode()
        token = b"" if fence is None or fence.token is None else str(fence.token).encode()
        bound = b"" if maxlen is None else str(max(1, maxlen)).encode()

        async def attempt(n: int) -> Any:
            flag = b"1" if n else b"0"
            return await script(keys=keys, args=[_FIELD, flag, owner, token, bound, *items])

        try:
            ids: Any = await self._call("append", attempt)
        except ResponseError as exc:
            if "FENCED" in str(exc):
                raise LeaseLost(str(exc)) from None
            raise
        if len(ids) != len(items):  # pragma: no cover - the script returns one id per item
            raise RuntimeError(f"journal append returned {len(ids)} ids for {len(items)} items")
        return [_text(entry_id) for entry_id in ids]

    async def publish_many(self, messages: Sequence[tuple[str, bytes]]) -> list[int]:
        if not messages:
            return []
        client = self._client()
        if len(messages) > 4:  # one script call instead of a command each: far less client CPU
            script = self._publish_many
            args = [part for message in messages for part in message]
            counts = await self._call("publish", lambda _: script(keys=[], args=args))
            return [int(n) for n in counts]

        async def attempt(_: int) -> Any:
            pipe = client.pipeline(transaction=False)
            for channel, data in messages:
                pipe.publish(channel, data)
            return await pipe.execute()

        return [int(n) for n in await self._call("publish", attempt)]

    async def claim(self, key: str, owner: str, ttl: float, *, token: int | None = None) -> int:
        self._client()
        script = self._claim
        keys = [key, token_key(key)]
        args = [owner, max(1, int(ttl * 1000)), "" if token is None else str(token)]
        held = await self._call("claim", lambda _: script(keys=keys, args=args))
        return int(held)

    async def release(self, key: str, owner: str) -> None:
        self._client()
        script = self._release
        await self._call("release", lambda _: script(keys=[key], args=[owner]))

    async def hset_many(self, key: str, fields: Mapping[str, bytes]) -> None:
        if fields:
            client = self._client()
            mapping: dict[Any, Any] = dict(fields)
            await self._call("hset", lambda _: client.hset(key, mapping=mapping))

    async def read(
        self, stream: str, after: str = "0-0", count: int = 1000
    ) -> list[tuple[str, bytes]]:
        if count < 1:
            raise ValueError(f"count must be at least 1, not {count}")
        ms, seq = parse_id(after)
        client = self._client()
        entries: Any = await self._call(
            "read", lambda _: client.xrange(stream, min=f"({ms}-{seq}", max="+", count=count)
        )
        return [(_text(entry_id), fields[_FIELD]) for entry_id, fields in entries]

    async def tail(
        self, stream: str, after: str, count: int = 1000, *, wait: float = 1.0
    ) -> list[tuple[str, bytes]]:
        if count < 1:
            raise ValueError(f"count must be at least 1, not {count}")
        ms, seq = parse_id(after)
        client = self._client()
        block = max(1, int(wait * 1000))
        found: Any = await self._call(
            "tail", lambda _: client.xread({stream: f"{ms}-{seq}"}, count=count, block=block)
        )
        if not found:
            return []
        # RESP2: [[stream, [entries]]]; RESP3 (redis-py 8): {stream: [[entries]]}
        entries = next(iter(found.values()))[0] if isinstance(found, dict) else found[0][1]
        return [(_text(entry_id), fields[_FIELD]) for entry_id, fields in entries]

    async def hset(self, key: str, field: str, value: bytes) -> None:
        client = self._client()
        await self._call("hset", lambda _: client.hset(key, field, value))

    async def get(self, key: str) -> bytes | None:
        client = self._client()
        value: Any = await self._call("get", lambda _: client.get(key))
        return None if value is None else bytes(value)

    async def set(self, key: str, value: bytes) -> None:
        client = self._client()
        await self._call("set", lambda _: client.set(key, value))

    async def set_once(self, key: str, value: bytes) -> bytes:
        client = self._client()
        await self._call("set", lambda _: client.set(key, value, nx=True))
        found = await self.get(key)  # (SET NX GET needs Redis 7: two round trips, once a start)
        return bytes(value) if found is None else found

    async def hgetall(self, key: str) -> dict[str, bytes]:
        client = self._client()
        raw: Any = await self._call("hgetall", lambda _: client.hgetall(key))
        return {_text(name): value for name, value in raw.items()}

    async def hdel(self, key: str, fields: Iterable[str]) -> None:
        names = list(fields)
        if names:
            client = self._client()
            await self._call("hdel", lambda _: client.hdel(key, *names))

    async def delete(self, *keys: str) -> None:
        if keys:
            client = self._client()
            await self._call("delete", lambda _: client.delete(*keys))
