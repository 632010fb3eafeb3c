"""``isaforge batch MANIFEST -o OUTDIR``: run a manifest's jobs, show progress and a summary."""

from __future__ import annotations

import collections
import importlib.util
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..core.cli import guarded
from .engine import Engine
from .manifest import command_checker, load_manifest
from .pool import ProcessPool
from .runner import RESULTS, STATUSES, BatchError, Report, run_batch


def default_workers() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


@click.command("batch")
@click.argument("manifest", type=click.Path(dir_okay=False))
@click.option("-o", "--output-dir", "outdir", required=True, type=click.Path(file_okay=False),
              help="where results.jsonl, batch.log and jobs/<id>/ go")
@click.option("--workers", type=click.IntRange(min=1),
              help="jobs at a time [default: the number of cores; with --ray ADDRESS, the "
                   "cluster's CPUs]")
@click.option("--ray", "ray_address", metavar="ADDRESS|local",
              help="run on Ray: 'local' starts an instance here; an address connects to a "
                   "cluster (needs isaforge[ray])")
@click.option("--retries", type=click.IntRange(min=0), default=0, show_default=True,
              help="run a job that timed out or crashed up to K more times")
@click.option("--resume", is_flag=True,
              help="continue the run in OUTDIR: skip the jobs whose results are complete")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), metavar="SECONDS",
              help="timeout of the jobs for which the manifest sets none")
@click.option("--var", "variables", multiple=True, metavar="NAME=VALUE",
              help="set a {NAME} placeholder, over the manifest's [vars] (repeatable)")
@guarded
def batch_cmd(manifest: str, outdir: str, workers: int | None, ray_address: str | None,
              retries: int, resume: bool, timeout: float | None,
              variables: tuple[str, ...]) -> None:
    """Run the isaforge command lines of MANIFEST (TOML: [[job]] and [[sweep]] tables), each in
    OUTDIR/jobs/<id>/, on local worker processes or on Ray; write OUTDIR/results.jsonl.

    Exit status 0 only if every job succeeded."""
    root = click.get_current_context().find_root().command
    overrides = {}
    for item in variables:
        name, eq, value = item.partition("=")
        if not eq:
            raise click.BadParameter(f"expected NAME=VALUE, not '{item}'", param_hint="--var")
        overrides[name] = value
    plan = load_manifest(manifest, command_checker(root), default_timeout=timeout,
                         variables=overrides)
    if ray_address is not None and importlib.util.find_spec("ray") is None:
        raise BatchError("--ray needs Ray: pip install 'isaforge[ray]'")

    def engine() -> Engine:
        if ray_address is not None:
            from .ray_engine import RayEngine

            ray_engine = RayEngine(Path(outdir), ray_address, workers)
            if main_thread:  # Ray installs its own SIGTERM handler (it aborts)
                signal.signal(signal.SIGTERM, terminated)
            return ray_engine
        return ProcessPool(Path(outdir), workers or default_workers())

    def terminated(signum: int, frame: object) -> None:
        sys.exit(128 + signum)  # unwinds: the engine stops its workers (and Ray)

    main_thread = threading.current_thread() is threading.main_thread()
    err = Console(stderr=True)
    progress = Progress(TextColumn("[bold]batch"), BarColumn(), MofNCompleteColumn(),
                        TextColumn("{task.fields[counts]}"), TimeElapsedColumn(),
                        console=err, auto_refresh=False, redirect_stdout=False,
                        redirect_stderr=False)
    counts: collections.Counter[str] = collections.Counter()
    task = progress.add_task("batch", total=len(plan.jobs), counts="")
    last = [0.0]

    def on_result(rec: dict[str, Any]) -> None:
        counts[rec["status"]] += 1
        progress.update(task, advance=1, counts=" ".join(
            f"{s} {counts[s]}" for s in STATUSES if counts[s] or s == "ok"))

    def on_tick() -> None:
        now = time.monotonic()
        if now - last[0] >= 0.1:
            last[0] = now
            progress.refresh()

    previous = signal.signal(signal.SIGTERM, terminated) if main_thread else None
    try:
        with progress:
            report = run_batch(plan, outdir, engine, retries=retries, resume=resume,
                               on_result=on_result, on_tick=on_tick)
            progress.refresh()
    finally:
        if main_thread:
            signal.signal(signal.SIGTERM, previous)
    print_summary(Console(), report, Path(outdir))
    if any(r["status"] != "ok" for r in report.results):
        sys.exit(1)


def print_summary(console: Console, report: Report, outdir: Path, slowest: int = 5,
                  failures: int = 20) -> None:
    """Counts per status, the slowest jobs, and each job that did not succeed."""
    results = report.results
    counts = collections.Counter(r["status"] for r in results)
    console.print(f"isaforge batch: {len(results)} jobs", soft_wrap=True)
    table = Table()
    for col in ("status", "jobs"):
        table.add_column(col)
    for status in STATUSES:
        table.add_row(status, str(counts[status]))
    if report.skipped:
        table.add_row("(complete before, skipped)", str(report.skipped))
    if report.retries:
        table.add_row("(retried attempts)", str(len(report.retries)))
    console.print(table)
    ran = sorted((r for r in results if r.get("seconds") is not None),
                 key=lambda r: -r["seconds"])[:slowest]
    if ran:
        slow = Table(title="slowest jobs")
        for col in ("job", "seconds", "status"):
            slow.add_column(col)
        for r in ran:
            slow.add_row(r["id"], f"{r['seconds']:.2f}", r["status"])
        console.print(slow)
    bad = [r for r in results if r["status"] != "ok"]
    if bad:
        fail = Table(title="jobs that did not succeed")
        for col in ("job", "status", "first error line"):
            fail.add_column(col, overflow="fold")
        for r in bad[:failures]:
            fail.add_row(r["id"], r["status"], r["error"] or "")
        console.print(fail)
        if len(bad) > failures:
            console.print(f"... and {len(bad) - failures} more in {outdir / RESULTS}",
                          soft_wrap=True)
    engine = f" on {report.engine} (start-up {report.startup_seconds:.1f} s)" \
        if report.engine else ""
    console.print(f"{report.ran} jobs ran{engine}; results: {outdir / RESULTS}",
                  soft_wrap=True)
