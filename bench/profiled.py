"""Run ``python -m hub ...`` under yappi's CPU clock and write its function statistics at exit.

    python bench/profiled.py OUT.pstat -m hub serve --role ingest ...

``bench/e2e_processes.py`` starts the ingest this way when ``DUPLICAST_BENCH_PROFILE`` names
the output file (``bench/event_cost.py`` then profiles the ingest of each point): per function
the CPU seconds of its own and with its callees (``pstats`` format, read with
``python -m pstats OUT.pstat``). CPU time, not samples: on a loaded machine a sampler counts the
time a process waits for a core, runnable, as time spent where it stopped. The statistics
start once the ingest is ready, so the rebuild and the imports are left out.
"""

from __future__ import annotations

import atexit
import runpy
import sys


def main() -> None:
    import yappi  # a bench-only tool (pyproject's ``bench`` extra)

    out, flag, module, *args = sys.argv[1:]
    if flag != "-m":
        raise SystemExit(__doc__)
    yappi.set_clock_type("cpu")

    from hub.roles.ingest import Ingest

    run = Ingest._run

    async def run_then_profile(self: Ingest) -> None:
        await run(self)  # rebuilt, listening: from here on the ingest's steady work
        yappi.start()

    Ingest._run = run_then_profile  # type: ignore[method-assign]

    def save() -> None:
        yappi.stop()
        yappi.get_func_stats().save(out, type="pstat")

    atexit.register(save)
    sys.argv = [module, *args]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
