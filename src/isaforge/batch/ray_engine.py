"""The Ray engine (``pip install 'isaforge[ray]'``): one actor per worker slot.

``--ray local`` starts a Ray instance on this machine (or uses the one this process already
has); ``--ray ADDRESS`` connects to a running cluster (``HOST:PORT`` or ``ray://HOST:PORT``),
whose nodes need isaforge installed (the same version: checked when the actors start).
Nothing assumes a shared file system, with either address: each job's input files go to the
object store (once per distinct content), the actor runs the job in a temporary directory it
creates, and returns the directory's files, which the runner writes into
``OUTDIR/jobs/<id>/`` (:func:`.execute.run_shipped`).

An actor runs one job at a time, so a job's timeout counts from when it starts; a job past its
timeout is stopped by killing its actor, which is then replaced, as is an actor that dies.
Ray's own retries are off: the runner decides. Ray is started without its dashboard and with
usage statistics off (``RAY_USAGE_STATS_ENABLED=0``): it reaches for no network.
"""

from __future__ import annotations

import hashlib
import os
import platform
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import __version__
from ..core.errors import IsaforgeError
from .engine import Done, stopped
from .execute import input_files, materialize, prepare_worker, run_shipped
from .manifest import Job


class RayUnavailable(IsaforgeError):
    """Ray is not installed, or the cluster cannot be used."""


class JobActor:
    """What runs in each Ray worker process (wrapped with ``ray.remote`` at start-up)."""

    def __init__(self) -> None:
        prepare_worker(quiet_output=False)  # Ray keeps the worker's output for its logs

    def ready(self) -> tuple[str, str]:
        from . import execute

        execute.root_command()  # import the command line now, not in the first job
        return __version__, platform.python_version()

    def run(self, job: Job, names: list[str], blobs: list[Any]) -> dict[str, Any]:
        import ray

        contents = ray.get(blobs) if blobs else []
        return run_shipped(job, list(zip(names, contents, strict=True)))


@dataclass
class _Slot:
    actor: Any
    ready: Any = None  # ObjectRef of ready() until it answered
    ref: Any = None  # ObjectRef of the running job
    job: Job | None = None
    start: float = 0.0
    deadline: float | None = None


class RayEngine:
    """Jobs on Ray actors; ``address`` is ``"local"`` or a cluster address."""

    name = "ray"

    def __init__(self, outdir: Path, address: str, workers: int | None) -> None:
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        if address == "local":
            # a local instance talks to itself over loopback only, not over the host's
            # network address (Ray reads this when it is first imported)
            os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
        try:
            import ray
        except ImportError:
            raise RayUnavailable("--ray needs Ray: pip install 'isaforge[ray]'") from None
        self.ray = ray
        self.jobs_dir = Path(outdir) / "jobs"
        self._owns_ray = False
        if not ray.is_initialized():
            kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                                      "configure_logging": True, "logging_level": "ERROR"}
            if address == "local":
                kwargs["num_cpus"] = workers or os.cpu_count() or 1
            else:
                kwargs = {"address": address, "log_to_driver": False,
                          "configure_logging": True, "logging_level": "ERROR"}
            try:
                ray.init(**kwargs)
            except Exception as e:  # noqa: BLE001 - ConnectionError, ValueError, RuntimeError
                raise RayUnavailable(f"cannot start Ray at '{address}': {e}") from None
            self._owns_ray = True
        self.name = "ray (local)" if address == "local" else f"ray ({address})"
        self._blobs: dict[str, Any] = {}  # sha256 -> ObjectRef of the content
        self._slots: list[_Slot] = []
        try:
            self.slots = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
            self._remote = ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0)(JobActor)
            self._slots = [self._new_slot() for _ in range(self.slots)]
            self._wait_ready()
        except BaseException:  # interrupted while starting: stop what was started
            self.close()
            raise

    def _new_slot(self) -> _Slot:
        actor = self._remote.remote()
        return _Slot(actor, ready=actor.ready.remote())

    def _wait_ready(self) -> None:
        """Start-up: every actor has imported isaforge and runs this version of it."""
        for slot in self._slots:
            try:
                version, python = self.ray.get(slot.ready, timeout=600)
            except Exception as e:  # noqa: BLE001
                raise RayUnavailable(f"a Ray worker could not start: {e}") from None
            if version != __version__:
                raise RayUnavailable(f"the Ray cluster runs isaforge {version}, this is "
                                     f"{__version__}: install the same version on its nodes")
            slot.ready = None

    def idle(self) -> int:
        return sum(1 for s in self._slots if s.job is None and s.ready is None)

    def submit(self, job: Job) -> None:
        slot = next(s for s in self._slots if s.job is None and s.ready is None)
        names, blobs = [], []
        for rel, path in input_files(job):
            data = Path(path).read_bytes()
            sha = hashlib.sha256(data).hexdigest()
            if sha not in self._blobs:
                self._blobs[sha] = self.ray.put(data)
            names.append(rel)
            blobs.append(self._blobs[sha])
        slot.ref = slot.actor.run.remote(job, names, blobs)
        slot.job = job
        slot.start = time.monotonic()
        slot.deadline = slot.start + job.timeout if job.timeout else None

    def wait(self, timeout: float) -> list[Done]:
        ray = self.ray
        pending = {s.ready: s for s in self._slots if s.ready is not None}
        running = {s.ref: s for s in self._slots if s.job is not None}
        refs = list(pending) + list(running)
        if not refs:
            return []
        now = time.monotonic()
        deadlines = [s.deadline for s in running.values() if s.deadline is not None]
        if deadlines:
            timeout = max(0.0, min(timeout, min(deadlines) - now))
        first, _ = ray.wait(refs, num_returns=1, timeout=timeout)
        ready = ray.wait(refs, num_returns=len(refs), timeout=0)[0] if first else []
        done: list[Done] = []
        for ref in ready:
            if ref in pending:
                slot = pending[ref]
                try:
                    ray.get(ref)
                except Exception as e:  # noqa: BLE001 - a replacement that could not start
                    raise RayUnavailable(f"a Ray worker could not start: {_first_line(e)}"
                                         ) from None
                slot.ready = None
                continue
            slot = running[ref]
            job = slot.job
            assert job is not None
            try:
                outcome = materialize(ray.get(ref), self.jobs_dir / job.id)
            except ray.exceptions.RayActorError as e:
                outcome = stopped("crashed", f"worker died: {_first_line(e)}",
                                  time.monotonic() - slot.start)
                self._replace(slot)
            except ray.exceptions.RayError as e:
                outcome = stopped("crashed", f"ray: {_first_line(e)}",
                                  time.monotonic() - slot.start)
                self._replace(slot)
            else:
                slot.job = slot.ref = None
            done.append(Done(job, outcome))
        now = time.monotonic()
        for slot in self._slots:
            if slot.job is not None and slot.deadline is not None and now >= slot.deadline:
                job = slot.job
                done.append(Done(job, stopped("timeout", f"timed out after {job.timeout:g} s",
                                              now - slot.start)))
                self._replace(slot)
        return done

    def _replace(self, slot: _Slot) -> None:
        try:
            self.ray.kill(slot.actor, no_restart=True)
        except Exception:  # noqa: BLE001 - already dead
            pass
        fresh = self._new_slot()
        slot.actor, slot.ready, slot.ref, slot.job, slot.deadline = (
            fresh.actor, fresh.ready, None, None, None)

    def close(self) -> None:
        for slot in self._slots:
            try:
                self.ray.kill(slot.actor, no_restart=True)
            except Exception:  # noqa: BLE001
                pass
        self._slots = []
        self._blobs.clear()
        if self._owns_ray:
            self.ray.shutdown()
            self._owns_ray = False


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0][:200] if text else type(e).__name__
