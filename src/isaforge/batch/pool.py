"""The local engine: a pool of worker processes forked from the runner.

Each worker runs one job at a time in ``OUTDIR/jobs/<id>/`` (:func:`.execute.run_job`) and
keeps its imports from one job to the next. A worker leads its own process group, so a job
past its timeout is stopped with everything it started (``killpg``), and asks the kernel to
kill it if the runner dies (``PR_SET_PDEATHSIG``): killing the runner leaves no worker
behind. A worker that dies (a signal, a crash of the interpreter) is replaced and its job
reported ``crashed``.
"""

from __future__ import annotations

import multiprocessing as mp
import multiprocessing.connection as mpc
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .engine import Done, stopped
from .execute import die_with_parent, input_files, prepare_worker, run_job, signal_name
from .manifest import Job


def _worker_main(conn: mpc.Connection, other_end: mpc.Connection, runner_pid: int) -> None:
    other_end.close()
    os.setsid()
    die_with_parent()
    if os.getppid() != runner_pid:  # the runner died before PDEATHSIG was armed
        os._exit(0)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the runner decides what ^C stops
    prepare_worker(quiet_output=True)
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            break
        if msg is None:
            break
        job, workdir, files = msg
        start = time.perf_counter()
        try:
            outcome = run_job(job, Path(workdir), files)
        except Exception as e:  # noqa: BLE001 - the worker itself failed (disk full...)
            outcome = stopped("crashed", f"worker error: {type(e).__name__}: {e}",
                              time.perf_counter() - start)
        try:
            conn.send(outcome)
        except (BrokenPipeError, OSError):
            break


@dataclass
class _Worker:
    proc: Any  # multiprocessing.Process
    conn: mpc.Connection
    job: Job | None = None
    start: float = 0.0
    deadline: float | None = None


class ProcessPool:
    """``workers`` forked processes; jobs run in ``outdir/jobs/<id>/``."""

    name = "process pool"

    def __init__(self, outdir: Path, workers: int) -> None:
        self.jobs_dir = Path(outdir) / "jobs"
        self.slots = workers
        self._ctx = mp.get_context("fork")
        self._workers = [self._spawn() for _ in range(workers)]

    def _spawn(self) -> _Worker:
        parent_end, child_end = self._ctx.Pipe()
        proc = self._ctx.Process(target=_worker_main, args=(child_end, parent_end, os.getpid()),
                                 daemon=True, name="isaforge-batch-worker")
        proc.start()
        child_end.close()
        return _Worker(proc, parent_end)

    def idle(self) -> int:
        return sum(1 for w in self._workers if w.job is None)

    def submit(self, job: Job) -> None:
        i = next(i for i, w in enumerate(self._workers) if w.job is None)
        w = self._workers[i]
        if not w.proc.is_alive():
            w = self._workers[i] = self._respawn(w)
        files = input_files(job)
        w.conn.send((job, str(self.jobs_dir / job.id), files))
        w.job = job
        w.start = time.monotonic()
        w.deadline = w.start + job.timeout if job.timeout else None

    def wait(self, timeout: float) -> list[Done]:
        busy = [w for w in self._workers if w.job is not None]
        if not busy:
            return []
        now = time.monotonic()
        deadlines = [w.deadline for w in busy if w.deadline is not None]
        if deadlines:
            timeout = max(0.0, min(timeout, min(deadlines) - now))
        ready = set(mpc.wait([w.conn for w in busy] + [w.proc.sentinel for w in busy],
                             timeout))
        done: list[Done] = []
        for w in busy:
            assert w.job is not None
            if w.conn in ready:
                try:
                    done.append(Done(w.job, w.conn.recv()))
                    w.job = None
                    continue
                except (EOFError, OSError):
                    pass  # the worker died: its sentinel tells how
            if w.conn in ready or w.proc.sentinel in ready:
                w.proc.join(5)
                code = w.proc.exitcode
                if code is not None and code < 0:
                    outcome = stopped("crashed", f"worker killed by {signal_name(-code)}",
                                      time.monotonic() - w.start, code)
                else:
                    outcome = stopped("crashed", f"worker exited with status {code}",
                                      time.monotonic() - w.start)
                done.append(Done(w.job, outcome))
                self._replace(w)
        now = time.monotonic()
        for w in busy:
            if w.job is not None and w.deadline is not None and now >= w.deadline:
                job = w.job
                self._kill(w)
                done.append(Done(job, stopped(
                    "timeout", f"timed out after {job.timeout:g} s", now - w.start)))
                self._replace(w)
        return done

    def _replace(self, w: _Worker) -> None:
        i = self._workers.index(w)
        self._workers[i] = self._respawn(w)

    def _respawn(self, w: _Worker) -> _Worker:
        self._kill(w)
        w.conn.close()
        return self._spawn()

    @staticmethod
    def _kill(w: _Worker) -> None:
        if w.proc.exitcode is None:
            try:
                os.killpg(w.proc.pid, signal.SIGKILL)  # the worker and its subprocesses
            except (ProcessLookupError, PermissionError):
                pass
            try:
                w.proc.kill()
            except (ProcessLookupError, OSError):
                pass
        w.proc.join(5)
        w.job = None

    def close(self) -> None:
        for w in self._workers:
            if w.job is None and w.proc.is_alive():
                try:
                    w.conn.send(None)
                except (BrokenPipeError, OSError):
                    pass
        end = time.monotonic() + 5
        for w in self._workers:
            if w.job is None:
                w.proc.join(max(0.0, end - time.monotonic()))
            self._kill(w)
            w.conn.close()
        self._workers = []
