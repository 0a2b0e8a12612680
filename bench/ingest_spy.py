"""Where the real ingest's CPU goes, by pipeline stage, from py-spy samples (issue #31).

    py-spy record --pid INGEST --rate 250 --nonblocking --format raw -o ingest.raw --duration 30
    python bench/ingest_spy.py ingest.raw [more.raw ...]

The ingest is the ``--role ingest`` process ``bench/event_cost.py`` starts (a child of the
bench: ``pgrep -P BENCH -f 'role ingest'``); record it during the steady window. Each sample's
Python stack is put in one stage by the frames it holds (the pipeline's coroutines are one
chain: ``Decider.take`` awaits the journal stage, which awaits the answers, which await the
feed; the deepest stage a stack reaches is its stage), and a sample whose innermost frame is
the lane's ``transport.write`` (uvloop and the kernel's loopback TCP) is counted apart: on a
loaded machine those are mostly samples of the ingest runnable but preempted by the Redis it
just woke (a sampler counts a runnable thread as busy; ``/proc`` counted the ingest's kernel
time at 7-9 % of its CPU, ``docs/performance.md``). ``Runner.run`` alone (no Python frame under
it) is uvloop's C: epoll, socket reads, handles and timers. With ``--native`` the samples show
the C frames too (GC, ``getpid``, ``write``), but py-spy then stops the process to sample it,
and its idle test lets ``epoll_pwait`` through: shares of wall time, not of CPU.
"""

from __future__ import annotations

import argparse
import collections
import re
from pathlib import Path

# (stage, a frame that puts a stack in it): the deepest stage of the pipeline's chain first
STAGES = [
    ("feed", r"FeedPublisher\.|_publish_timed|publish_logged|_gather"),
    ("ticker", r"Ingest\._ticker"),
    ("ack", r"Answering\.|BatchAnswers"),
    ("journal", r"Journaling\.|append_durably"),
    ("decide", r"Decider\.|Engine\.submit"),
    ("intake", r"Ingest\.(handle_batch|_process)|Applying\.|FairIntake\.|RedisSubscription\."),
    ("intake", r"StreamReader|_AsyncHiredisParser|BufferedSubscription|_Reader\."),
    ("bus replies (lane data_received)", r"_Protocol\.data_received|Lane\._check"),
    ("lease, http, metrics", r"LeaseHolder|uvicorn|h11|starlette|prometheus|hub/serve/http"),
]
FEED = [
    ("feed: flush (Projecting.flush: the engine)", r"Projecting\.flush|Engine\.hold"),
    ("feed: framing (IngestFeed.publish, feed_messages)", r"IngestFeed\.|feed_messages|Frame\."),
]
RULES = [(name, re.compile(rx)) for name, rx in STAGES]
FEED_RULES = [(name, re.compile(rx)) for name, rx in FEED]
WRITE = re.compile(r"^Lane\._send \(hub/bus/redis_lane\.py:\d+\)$")
WRITE_LINE = "protocol.transport.write(data)"
SUBMIT = re.compile(r"Engine\.submit")


def write_line() -> int:
    """The line of the lane's ``transport.write`` in this tree (what a write sample ends at)."""
    source = Path(__file__).resolve().parents[1] / "hub" / "bus" / "redis_lane.py"
    for number, line in enumerate(source.read_text().splitlines(), 1):
        if line.strip() == WRITE_LINE:
            return number
    return -1


def classify(frames: list[str], write_at: int) -> str:
    """The stage of one sample's stack (root first)."""
    joined = ";".join(frames)
    leaf = frames[-1]
    stage = next((name for name, rx in RULES if rx.search(joined)), None)
    if WRITE.match(leaf) and leaf.endswith(f":{write_at})"):
        return f"socket write ({stage or 'stack cut'})"
    if stage is None:
        if leaf.startswith("Runner.run "):
            return "event loop (uvloop's C: epoll, socket reads, handles, timers)"
        return "other (stack cut, elsewhere)"
    if stage == "feed":
        part = next((name for name, rx in FEED_RULES if rx.search(joined)), None)
        return part or "feed: the rest (follow, gather task, lock, seqs, lane)"
    if stage == "decide":
        return "decide: Engine.submit" if SUBMIT.search(joined) else "decide: the rest"
    return stage


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("raw", nargs="+", type=Path, help="py-spy --format raw output(s)")
    args = parser.parse_args(argv)
    write_at = write_line()
    for path in args.raw:
        counts: collections.Counter[str] = collections.Counter()
        for line in path.read_text().splitlines():
            stack, _, n = line.rpartition(" ")
            if stack:
                counts[classify(stack.split(";"), write_at)] += int(n)
        total = sum(counts.values())
        writes = sum(n for name, n in counts.items() if name.startswith("socket write"))
        print(f"{path}: {total} samples ({writes} in socket writes)")
        print("   all %  less writes %  stage")
        for name, n in counts.most_common():
            rest = "" if name.startswith("socket write") else f"{100 * n / (total - writes):6.1f}"
            print(f"  {100 * n / total:6.1f}  {rest:>12}  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
