"""Run a manifest's jobs on an engine: retries, ``results.jsonl``, ``--resume``.

``OUTDIR/results.jsonl`` holds one JSON line per job, keys in this order: ``id``, ``status``
(``ok``, ``failed``, ``timeout``, ``crashed``), ``exit_code``, ``stdout_sha256``,
``stderr_sha256``, ``outputs`` (path in the job's directory -> sha256), ``inputs_sha256``
(the hash of the job's command lines and input contents), ``error`` (the first error line, or
null), ``seconds`` and ``attempts``. A line is appended (and flushed) as each job finishes,
so a runner that is killed loses no finished job; at the end the file is rewritten in
manifest order, so that two runs of one manifest give the same file apart from ``seconds``
and ``attempts``, whichever engine and however many workers ran it.

With ``resume`` a job is skipped when its line is complete: same ``inputs_sha256``, and every
file it lists still in ``OUTDIR/jobs/<id>/`` with that hash. Every other job runs again from
an empty directory. An attempt that timed out or crashed is retried up to ``retries`` times;
a job that failed (non-zero exit status) is not: it would fail again. Each retry and each
unsuccessful job is written to ``OUTDIR/batch.log``.
"""

from __future__ import annotations

import collections
import fcntl
import hashlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.errors import IsaforgeError
from .engine import Engine
from .execute import STDERR, STDOUT, sha256_file
from .manifest import Job, Manifest

STATUSES = ("ok", "failed", "timeout", "crashed")
RESULTS = "results.jsonl"
LOG = "batch.log"


class BatchError(IsaforgeError):
    """An output directory that cannot be used."""


@dataclass
class Report:
    """What a run did: ``results`` in manifest order, how many jobs were ``skipped`` (already
    complete) and ``ran``, the engine and how long it took to start."""

    results: list[dict[str, Any]]
    skipped: int = 0
    ran: int = 0
    engine: str = ""
    startup_seconds: float = 0.0
    retries: list[tuple[str, int, str]] = field(default_factory=list)


class _InputHashes:
    def __init__(self) -> None:
        self.cache: dict[str, str] = {}

    def of(self, path: str, is_dir: bool) -> str:
        if path not in self.cache:
            if not is_dir:
                self.cache[path] = sha256_file(Path(path))
            else:
                h = hashlib.sha256()
                for dirpath, dirnames, filenames in os.walk(path):
                    dirnames.sort()
                    for name in sorted(filenames):
                        full = os.path.join(dirpath, name)
                        h.update(f"{os.path.relpath(full, path)}\0"
                                 f"{sha256_file(Path(full))}\n".encode())
                self.cache[path] = h.hexdigest()
        return self.cache[path]


def job_key(job: Job, hashes: _InputHashes) -> str:
    """The hash that says whether an earlier result of ``job`` still stands."""
    desc = {"steps": job.steps, "stdin": job.stdin, "isolate": job.isolate,
            "inputs": [[i.name, hashes.of(i.path, i.is_dir)] for i in job.inputs]}
    return hashlib.sha256(json.dumps(desc, sort_keys=True).encode()).hexdigest()


def read_results(path: Path) -> dict[str, dict[str, Any]]:
    """The last line of each job id in a results file; a torn or malformed line is skipped."""
    out: dict[str, dict[str, Any]] = {}
    if not path.exists():
        return out
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(rec, dict) and isinstance(rec.get("id"), str):
            out[rec["id"]] = rec
    return out


def is_complete(rec: dict[str, Any], key: str, jobdir: Path) -> bool:
    """Whether ``rec`` is a finished result of the job with hash ``key`` whose files are all
    still there, unchanged."""
    if rec.get("inputs_sha256") != key or rec.get("status") not in STATUSES:
        return False
    files = dict(rec.get("outputs") or {})
    for name, field_ in ((STDOUT, "stdout_sha256"), (STDERR, "stderr_sha256")):
        if rec.get(field_) is not None:
            files[name] = rec[field_]
    for rel, sha in files.items():
        path = jobdir / rel
        if not path.is_file() or sha256_file(path) != sha:
            return False
    return True


def _record(job: Job, outcome: dict[str, Any], key: str, attempts: int) -> dict[str, Any]:
    return {"id": job.id, "status": outcome["status"], "exit_code": outcome["exit_code"],
            "stdout_sha256": outcome["stdout_sha256"],
            "stderr_sha256": outcome["stderr_sha256"], "outputs": outcome["outputs"],
            "inputs_sha256": key, "error": outcome["error"],
            "seconds": round(float(outcome["seconds"]), 3), "attempts": attempts}


def _write_all(path: Path, records: list[dict[str, Any]]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        for rec in records:
            f.write(json.dumps(rec) + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def run_batch(manifest: Manifest, outdir: str | os.PathLike[str],
              engine_factory: Callable[[], Engine], *, retries: int = 0, resume: bool = False,
              on_start: Callable[[int, int], None] | None = None,
              on_result: Callable[[dict[str, Any]], None] | None = None,
              on_tick: Callable[[], None] | None = None, poll: float = 0.1) -> Report:
    """Run ``manifest``'s jobs with results in ``outdir``. ``engine_factory`` is called only
    if a job has to run. ``on_start(to_run, skipped)``, ``on_result(record)`` (also for each
    skipped job, first) and ``on_tick()`` let a front end show progress."""
    out = Path(outdir)
    results_path = out / RESULTS
    if not resume and (results_path.exists() or (out / "jobs").exists()):
        raise BatchError(f"{out} already holds a batch run: add --resume to continue it, or "
                         f"choose another output directory")
    out.mkdir(parents=True, exist_ok=True)
    lock = open(out / ".lock", "w")  # noqa: SIM115 - held for the whole run
    try:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise BatchError(f"{out} is in use by another isaforge batch") from None
        return _run(manifest, out, engine_factory, retries, resume, on_start, on_result,
                    on_tick, poll)
    finally:
        lock.close()


def _run(manifest: Manifest, out: Path, engine_factory: Callable[[], Engine], retries: int,
         resume: bool, on_start: Callable[[int, int], None] | None,
         on_result: Callable[[dict[str, Any]], None] | None,
         on_tick: Callable[[], None] | None, poll: float) -> Report:
    results_path = out / RESULTS
    hashes = _InputHashes()
    keys = {job.id: job_key(job, hashes) for job in manifest.jobs}
    records: dict[str, dict[str, Any]] = {}
    if resume:
        for job_id, rec in read_results(results_path).items():
            if job_id in keys and is_complete(rec, keys[job_id], out / "jobs" / job_id):
                records[job_id] = rec
    to_run = [job for job in manifest.jobs if job.id not in records]
    report = Report([], skipped=len(records))
    _write_all(results_path, [records[j.id] for j in manifest.jobs if j.id in records])
    log = open(out / LOG, "a", encoding="utf-8")  # noqa: SIM115

    def note(text: str) -> None:
        log.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {text}\n")
        log.flush()

    try:
        note(f"{manifest.path}: {len(manifest.jobs)} jobs, {len(records)} already complete, "
             f"{len(to_run)} to run")
        if on_start:
            on_start(len(to_run), len(records))
        if on_result:
            for job in manifest.jobs:
                if job.id in records:
                    on_result(records[job.id])
        if to_run:
            started = time.perf_counter()
            engine = engine_factory()
            report.engine = f"{engine.name}, {engine.slots} workers"
            report.startup_seconds = time.perf_counter() - started
            note(f"engine: {report.engine} (started in {report.startup_seconds:.2f} s)")
            try:
                _loop(engine, to_run, keys, retries, results_path, records, report, note,
                      on_result, on_tick, poll)
            finally:
                engine.close()
        report.results = [records[j.id] for j in manifest.jobs]
        _write_all(results_path, report.results)
        counts = collections.Counter(r["status"] for r in report.results)
        note("done: " + ", ".join(f"{counts[s]} {s}" for s in STATUSES))
    finally:
        log.close()
    return report


def _loop(engine: Engine, to_run: list[Job], keys: dict[str, str], retries: int,
          results_path: Path, records: dict[str, dict[str, Any]], report: Report,
          note: Callable[[str], None], on_result: Callable[[dict[str, Any]], None] | None,
          on_tick: Callable[[], None] | None, poll: float) -> None:
    queue = collections.deque(to_run)
    attempts: collections.Counter[str] = collections.Counter()
    running = 0
    with open(results_path, "a", encoding="utf-8") as results:
        while queue or running:
            while queue and engine.idle() > 0:
                job = queue.popleft()
                attempts[job.id] += 1
                engine.submit(job)
                running += 1
            for done in engine.wait(poll):
                running -= 1
                job, outcome = done.job, done.outcome
                host = outcome.pop("host", None)
                workdir = outcome.pop("workdir", None)
                if host is not None:
                    note(f"{job.id}: ran on {host} in {workdir}")
                n = attempts[job.id]
                if outcome["status"] in ("timeout", "crashed") and n <= retries:
                    note(f"{job.id}: attempt {n}: {outcome['status']} ({outcome['error']}); "
                         f"retrying")
                    report.retries.append((job.id, n, outcome["status"]))
                    queue.appendleft(job)
                    continue
                rec = _record(job, outcome, keys[job.id], n)
                results.write(json.dumps(rec) + "\n")
                results.flush()
                records[job.id] = rec
                report.ran += 1
                if rec["status"] != "ok":
                    note(f"{job.id}: {rec['status']} after {n} attempt(s): {rec['error']}")
                if on_result:
                    on_result(rec)
            if on_tick:
                on_tick()
