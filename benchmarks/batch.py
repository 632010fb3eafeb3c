"""Throughput and start-up cost of ``isaforge batch``'s engines (prints figures; not a test).

    python benchmarks/batch.py [--jobs 200] [--isolated-jobs 20] [--no-ray]

The jobs are short on purpose: ``isaforge tensix asm`` of the bundled ``matmul_setup.s``
(about a millisecond of work), each in its own working directory with its input staged and
its output hashed, so what is measured is what the runner and the engine cost per job. For
each engine and worker count:

* start-up: from asking for the engine to every worker ready (the process pool forks its
  workers; ``--ray local`` starts Ray, then one actor per worker, each importing isaforge);
* jobs/s: the jobs divided by the time from the engine being ready to the last result (the
  figure that scales with a sweep's size);
* runner CPU: the runner process's own CPU time per job while the jobs ran (submitting,
  collecting, writing results; for Ray, also receiving the shipped files): what one runner
  can sustain, whatever the number of workers, is about 1000 / this many jobs per second;
* total: the whole run, start-up, results.jsonl and shutting the engine down included.

Also the same jobs run as subprocesses (``isolate = true``: ``python -m isaforge`` per
job), to show what running them in-process saves. The load average is printed with the
figures: other work on the machine slows every line.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from isaforge.batch import load_manifest, run_batch
from isaforge.batch.engine import Engine
from isaforge.batch.manifest import command_checker
from isaforge.batch.pool import ProcessPool
from isaforge.cli import main

KERNEL = Path(__file__).resolve().parents[1] / "src" / "isaforge" / "examples" / "tensix" / \
    "matmul_setup.s"


def manifest(d: Path, jobs: int, isolate: bool) -> Path:
    shutil.copyfile(KERNEL, d / "kernel.s")
    path = d / f"bench-{jobs}-{isolate}.toml"
    path.write_text(f"""
[[sweep]]
id = "asm"
args = ["tensix", "asm", "kernel.s", "-o", "kernel.bin"]
inputs = ["kernel.s"]
isolate = {str(isolate).lower()}
[sweep.over]
n = [{", ".join(str(i) for i in range(jobs))}]
""")
    return path


def measure(path: Path, make: Callable[[Path], Engine], d: Path
            ) -> tuple[float, float, float, float]:
    """(start-up s, jobs/s after start-up, runner CPU ms per job, total s) of one run."""
    plan = load_manifest(path, command_checker(main))
    out = Path(tempfile.mkdtemp(dir=d))
    ready = [0.0, 0.0]
    last = [0.0, 0.0]

    def factory() -> Engine:
        engine = make(out)
        ready[:] = [time.perf_counter(), time.process_time()]
        return engine

    def on_result(rec: dict) -> None:
        assert rec["status"] == "ok", rec
        last[:] = [time.perf_counter(), time.process_time()]

    start = time.perf_counter()
    report = run_batch(plan, out, factory, on_result=on_result)
    total = time.perf_counter() - start
    shutil.rmtree(out)
    n = len(plan.jobs)
    return (report.startup_seconds, n / (last[0] - ready[0]), 1000 * (last[1] - ready[1]) / n,
            total)


def main_() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=200)
    ap.add_argument("--isolated-jobs", type=int, default=20)
    ap.add_argument("--no-ray", action="store_true", help="only the process pool")
    args = ap.parse_args()
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # local Ray on loopback
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        short = manifest(d, args.jobs, isolate=False)
        isolated = manifest(d, args.isolated_jobs, isolate=True)
        rows: list[tuple[str, int, int, tuple[float, float, float, float]]] = []
        for workers in (1, 2):
            rows.append(("process pool", workers, args.jobs, measure(
                short, lambda out, w=workers: ProcessPool(out, w), d)))
        if not args.no_ray:
            from isaforge.batch.ray_engine import RayEngine

            for workers in (1, 2):
                rows.append(("ray local", workers, args.jobs, measure(
                    short, lambda out, w=workers: RayEngine(out, "local", w), d)))
        for workers in (1, 2):
            rows.append(("process pool, subprocess jobs", workers, args.isolated_jobs,
                         measure(isolated, lambda out, w=workers: ProcessPool(out, w), d)))
    print(f"isaforge batch: short jobs (tensix asm of {KERNEL.name}), load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"{'engine':32} {'workers':>7} {'jobs':>5} {'start-up s':>10} {'jobs/s':>8} "
          f"{'runner CPU ms/job':>17} {'total s':>8}")
    for name, workers, jobs, (startup, rate, cpu, total) in rows:
        print(f"{name:32} {workers:>7} {jobs:>5} {startup:>10.2f} {rate:>8.1f} {cpu:>17.2f} "
              f"{total:>8.2f}")


if __name__ == "__main__":
    main_()
