"""The statistics' cost in instructions (issue #34.6): one ``stats_cost.run`` of a tree, for
valgrind, so two trees compare by counts, not by a shared machine's clock.

Run under valgrind (``ROOT``: the tree whose ``hub`` and ``bench`` run; a base tree via
``git archive main | tar -x -C /tmp/base``)::

    PYTHONHASHSEED=0 valgrind --tool=callgrind --collect-atstart=no \\
        --toggle-collect=_operator_call .venv/bin/python bench/stats_instr.py ROOT --mode own
    PYTHONHASHSEED=0 valgrind --tool=cachegrind --cache-sim=no \\
        .venv/bin/python bench/stats_instr.py ROOT --mode on   # (and --mode off)

``--mode own``: the statistics' mover (``Stats.on``, ``open``, ``flush`` and the ``Tally`` it
makes: what ``stats_cost.py`` times) called through ``operator.call``, so callgrind counts
only inside them (``Collected``); ``--gc off`` keeps the collector's passes, which land in
whichever code allocates the 700th object, out of both sides. ``--mode on`` / ``off``: the
whole run with the statistics, and with their mover's ``on`` and ``flush`` made inert (the
difference: the statistics and what the projections do with their changes). The session
(``--tables 60``, ``--events``, seed 11) is made once and kept in ``--cache``.
"""

from __future__ import annotations

import argparse
import gc
import operator
import pickle
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def through(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` called by ``operator.call`` (callgrind's ``--toggle-collect=_operator_call``)."""

    def wrap(*a: Any, **k: Any) -> Any:
        return operator.call(fn, *a, **k)

    return wrap


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path, help="the tree whose hub and bench run")
    parser.add_argument("--mode", choices=("own", "on", "off"), default="own")
    parser.add_argument("--gc", choices=("on", "off"), default="on")
    parser.add_argument("--events", type=int, default=8_000)
    parser.add_argument("--tables", type=int, default=60)
    parser.add_argument("--follow", type=int, default=2)
    parser.add_argument("--delay", type=float, default=600.0)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/stats_instr"))
    args = parser.parse_args(argv)
    root = args.root.resolve()
    sys.path[:0] = [str(root), str(root / "bench")]
    import projection_bench
    import stats_cost

    from hub.engine.families import stats as families_stats
    from hub.engine.stats import Tally

    assert Path(families_stats.__file__).is_relative_to(root), families_stats.__file__
    args.cache.mkdir(parents=True, exist_ok=True)
    kept = args.cache / f"session-{args.tables}-{args.events}.pkl"
    if kept.exists():
        session = pickle.loads(kept.read_bytes())
    else:
        session = projection_bench.session_of(root, args.events, 11, args.tables)
        kept.write_bytes(pickle.dumps(session))
    mover = families_stats.Stats
    if args.mode == "own":
        for name in ("on", "open", "flush"):
            setattr(mover, name, through(getattr(mover, name)))
        Tally.__init__ = through(Tally.__init__)  # type: ignore[method-assign]
    elif args.mode == "off":
        mover.on = lambda self, event: None  # type: ignore[method-assign]
        mover.flush = lambda self: ()  # type: ignore[method-assign]
    if args.gc == "off":
        gc.disable()  # (``run``'s own ``gc.collect()`` still runs, before the clock starts)
    seconds, changes = stats_cost.run(session, 50, args.follow, args.delay)
    print(f"{args.mode} {len(session.events)} events: {changes} changes, {seconds:.3f} s")


if __name__ == "__main__":
    main()
