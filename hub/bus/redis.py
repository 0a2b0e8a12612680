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

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import AuthenticationError, NoScriptError, RedisError, ResponseError

from hub.bus.base import (
    DEFAULT_SUBSCRIPTION_BUFFER,
    DEFAULT_SUBSCRIPTION_BYTES,
    Bus,
    BusUnavailable,
    Fence,
    LeaseLost,
    ReadRate,
    parse_id,
    redacted_url,
    token_key,
)
from hub.bus.redis_lane import Lane, address_for, lane_for
from hub.bus.redis_retry import TRANSIENT_ERRORS, RetryPolicy, quietly
from hub.bus.redis_scripts import (
    APPEND_BATCH,
    APPEND_ONCE,
    CLAIM,
    FIELD,
    PUBLISH_MANY,
    RELEASE,
)
from hub.bus.redis_subscription import CLOSE_ATTEMPTS, CLOSE_GRACE, RedisSubscription

__all__ = ["RedisBus", "RedisSubscription", "RetryPolicy"]

log = logging.getLogger(__name__)

T = TypeVar("T")

SOCKET_TIMEOUT = 5.0  # s a reply may take on the lane (redis-py's default for its own)


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
        # The commands sent per event (journal appends, publishes, hash writes) go through
        # one lean pipelined connection (``hub.bus.redis_lane``); None: redis-py's (TLS).
        self._lane: Lane | None = None
        self._address: dict[str, Any] | None = None  # the subscriptions' (``_subscriber``)
        self._subscriptions: set[RedisSubscription] = set()
        self._append_once: Any = None
        self._append_batch: Any = None
        self._publish_many: Any = None
        self._claim: Any = None
        self._release: Any = None
        # append_many's last fence (a frozen ``Fence``) and stream, with the keys and arguments
        # the script is given for them
        self._fenced: tuple[Fence | None, str, list[Any], bytes, bytes] | None = None

    def _subscriber(self) -> dict[str, Any]:
        """Where a subscription connects and how it logs in: the URL's address, login,
        database and TLS, as the client's connections (``redis_lane.address_for``)."""
        if self._address is None:
            self._address = address_for(self.url)
        return self._address

    def _client(self) -> aioredis.Redis:
        if self._redis is None:
            # Our own retry policy replaces redis-py's, so deadlines mean what they say.
            # (TCP keepalive is a TCP socket's option: a unix:// URL's connection has none)
            tcp = {} if self.url.startswith("unix:") else {"socket_keepalive": True}
            self._redis = aioredis.Redis.from_url(
                self.url,
                decode_responses=False,
                retry=Retry(NoBackoff(), 0),
                socket_connect_timeout=2.0,
                **tcp,
            )
            self._append_once = self._redis.register_script(APPEND_ONCE)
            self._append_batch = self._redis.register_script(APPEND_BATCH)
            self._claim = self._redis.register_script(CLAIM)
            self._publish_many = self._redis.register_script(PUBLISH_MANY)
            self._release = self._redis.register_script(RELEASE)
            self._lane = lane_for(self.url, timeout=SOCKET_TIMEOUT, connect_timeout=2.0)
        return self._redis

    async def _script(self, script: Any, keys: list[Any], args: list[Any]) -> Any:
        """``script(keys=..., args=...)``, on the lane when there is one: by its SHA, loaded
        first if Redis does not know it (a restarted Redis), as redis-py does it."""
        lane = self._lane
        if lane is None:
            return await script(keys=keys, args=args)
        command = ("EVALSHA", script.sha, len(keys), *keys, *args)
        (reply,) = await lane.execute([command])
        if isinstance(reply, NoScriptError):
            await lane.call("SCRIPT", "LOAD", script.script)
            (reply,) = await lane.execute([command])
        if isinstance(reply, Exception):
            raise reply
        return reply

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
        if self._lane is not None:
            self._lane.close()
        if self._redis is not None:
            client, self._redis = self._redis, None
            closing = asyncio.ensure_future(quietly(client.aclose()))
            done, _ = await asyncio.wait({closing}, timeout=CLOSE_GRACE * CLOSE_ATTEMPTS)
            if not done:
                closing.cancel()
                log.error("closing the Redis connections did not finish; left behind")

    async def publish(self, channel: str, data: bytes) -> int:
        client = self._client()
        lane = self._lane
        if lane is not None:
            return int(await self._call("publish", lambda _: lane.call("PUBLISH", channel, data)))
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
                return await client.xadd(stream, {FIELD: data})
            return await self._append_once(keys=[stream], args=[FIELD, data])

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
        fenced = self._fenced  # (the same fence, batch after batch: its parts made once)
        if fenced is not None and fenced[0] is fence and fenced[1] == stream:
            keys, owner, token = fenced[2], fenced[3], fenced[4]
        else:
            keys = [stream] if fence is None else [stream, fence.key, token_key(fence.key)]
            owner = b"" if fence is None else fence.owner.encode()
            token = b"" if fence is None or fence.token is None else str(fence.token).encode()
            self._fenced = (fence, stream, keys, owner, token)
        bound = b"" if maxlen is None else str(max(1, maxlen)).encode()

        async def attempt(n: int) -> Any:
            flag = b"1" if n else b"0"
            return await self._script(script, keys, [FIELD, flag, owner, token, bound, *items])

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
        lane = self._lane
        if lane is not None:  # one write, one reply each (cheap here, unlike redis-py's)

            async def on_lane(_: int) -> list[Any]:
                replies = await lane.publish(messages)
                for reply in replies:
                    if isinstance(reply, Exception):
                        raise reply
                return replies

            return [int(n) for n in await self._call("publish", on_lane)]
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
            lane = self._lane
            if lane is not None:
                command = ["HSET", key, *(part for item in fields.items() for part in item)]
                await self._call("hset", lambda _: lane.call(*command))
                return
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
        return [(_text(entry_id), fields[FIELD]) for entry_id, fields in entries]

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
        return [(_text(entry_id), fields[FIELD]) for entry_id, fields in entries]

    async def hset(self, key: str, field: str, value: bytes) -> None:
        client = self._client()
        lane = self._lane
        if lane is not None:
            await self._call("hset", lambda _: lane.call("HSET", key, field, value))
            return
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

    async def hmget(self, key: str, fields: Iterable[str]) -> dict[str, bytes]:
        names = list(fields)
        if not names:
            return {}
        client = self._client()
        raw: Any = await self._call("hmget", lambda _: client.hmget(key, names))
        return {name: value for name, value in zip(names, raw, strict=True) if value is not None}

    async def hdel(self, key: str, fields: Iterable[str]) -> None:
        names = list(fields)
        if names:
            client = self._client()
            await self._call("hdel", lambda _: client.hdel(key, *names))

    async def delete(self, *keys: str) -> None:
        if keys:
            client = self._client()
            await self._call("delete", lambda _: client.delete(*keys))
