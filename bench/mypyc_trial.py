"""The feed flush's hot modules compiled with mypyc, in a scratch tree, to measure (issue #31).

Not shipped: at 60 tables it took 12.9 % of the ingest's instructions an event (19.5 % of the
flush's) and ~8 % of its CPU time, short of the 15 % asked for a build step
(docs/performance.md, "mypyc"). This rebuilds that trial so it can be measured again (a newer
mypyc, more modules)::

    git -C /work/main archive main | tar -x -C /tmp/trial   # (and the same into /tmp/base)
    .venv/bin/python bench/mypyc_trial.py /tmp/trial         # ~75 s of CPU (gcc -O3)
    .venv/bin/python -m compileall -q /tmp/trial/hub /tmp/base/hub
    PYTHONHASHSEED=0 valgrind --tool=callgrind --collect-atstart=no \\
        --toggle-collect=_operator_call .venv/bin/python bench/ingest_instr.py /tmp/trial \\
        --mode all --cache /tmp/trial-cache

It writes, next to each module of ``MODULES`` in ROOT, a C extension that Python imports
instead of the ``.py`` (``hub/wire/patch.cpython-311-x86_64-linux-gnu.so``; check
``module.__file__``), and a shared library, ``hub/native__mypyc*.so``. ROOT must not be a git
checkout: a stale extension there would shadow every later edit of its ``.py``. ``--clean``
removes them. Give each tree its own ``--cache`` of ``ingest_instr.py``: the pickled session
holds the config's dataclasses, and one made native (``scoring/format`` in a first try) is
refused by pickle's default restore, which sets its frozen fields one by one.

What mypyc refused or changed, seen in this trial (mypy 2.4.1, setuptools 84.2, gcc):

* ``hub/domain/games/holdem/settlement.py``: ``Settlement`` is a base of the interpreted
  ``holdem.Hand`` ("interpreted classes cannot inherit from compiled"); left out.
* ``hub/domain/scoring/format.py``: its ``ScoringFormat`` is in the tournament config, which is
  pickled (the PHH service's spawned worker, the bench's session cache); left out.
* ``hub/domain/scoring/rows.py``: ``board._ifp_row`` makes a ``SeatRow`` with
  ``object.__new__`` and fills its ``__dict__``; a native class has neither; left out.
* ``hub/engine/views.py`` (its ``deal_cards`` now in ``families/travellers.py``): ``deal_cards``
  unpacks ``Dealt.hole`` as ``tuple[Card, Card]``, as annotated, but an MCR deal keeps its 13
  tiles there (``cast(Any, hands)`` in ``hub/domain/games/mahjong/hand.py``): compiled, it
  raises TypeError on the MCR tests (tests/test_stats.py, tests/test_projections.py
  ``[mcr]``). Widening the annotation spreads to ``KnownCards``, ``equity_block``,
  ``best_by_pot`` and the PHH export. (Since fixed without widening: the views read a game's
  deal as ``base.DealtPieces``, whose ``hole`` is ``tuple[str, ...]``, and ``MahjongDeal`` is
  no longer a ``Dealt``.)
* ``hub/domain/scoring/board.py``: a penalty's points, annotated ``int`` in the rebuild's
  ``penalties``, arrive as a ``Fraction`` in tests/test_scoring_properties.py: TypeError.
* ``hub/engine/projecting.py``: tests/test_projecting.py's ``AtOnce`` subclasses
  ``Projecting`` ("interpreted classes cannot inherit from compiled").
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import sysconfig
import time
from pathlib import Path
from typing import Any

#: the modules that held most of the flush's Python time (cProfile of ``ingest_instr.py
#: --mode flush`` at 60 tables), less the three above that mypyc cannot take as they are
MODULES = (
    "hub/wire/patch.py",
    "hub/domain/scoring/board.py",
    "hub/engine/families/projection.py",
    "hub/engine/projections.py",
    "hub/domain/evaluation.py",
    "hub/engine/stats.py",
    "hub/engine/equities.py",
    "hub/engine/families/travellers.py",
    "hub/engine/shown.py",
    "hub/domain/equity.py",
    "hub/engine/families/hands.py",
    "hub/engine/families/stats.py",
    "hub/engine/projecting.py",
    "hub/engine/families/ops.py",
)

SUFFIX = sysconfig.get_config_var("EXT_SUFFIX") or ".so"


def built(root: Path) -> list[Path]:
    """The extensions a build left in ROOT's hub (it has no others)."""
    return sorted((root / "hub").rglob("*" + SUFFIX))


def build(root: Path) -> None:
    from mypyc.build import mypycify
    from setuptools import Distribution

    started = time.monotonic()
    os.chdir(root)  # (mypycify takes paths from here; no setup.py, no pyproject.toml read)
    extensions = mypycify(list(MODULES), group_name="hub.native")
    dist = Distribution({"name": "duplicast-mypyc-trial", "ext_modules": extensions})
    command: Any = dist.get_command_obj("build_ext")
    command.inplace = True
    command.parallel = os.cpu_count() or 1
    command.build_temp = "build/mypyc"
    dist.run_command("build_ext")
    print(f"{len(MODULES)} modules compiled in {time.monotonic() - started:.0f} s wall")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path, help="a scratch tree (git archive), not a checkout")
    parser.add_argument("--clean", action="store_true", help="remove the extensions only")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    if (root / ".git").exists():
        sys.exit(f"{root} is a git checkout: use a scratch tree (see --help)")
    for path in built(root):
        path.unlink()
    shutil.rmtree(root / "build" / "mypyc", ignore_errors=True)
    if not args.clean:
        build(root)


if __name__ == "__main__":
    main()
