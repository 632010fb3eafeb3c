"""What the runner asks of an engine, and the outcome of a job an engine had to stop."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from .manifest import Job


@dataclass
class Done:
    """A finished attempt: the job and its outcome (see :func:`.execute.run_job`)."""

    job: Job
    outcome: dict[str, Any]


class Engine(Protocol):
    """Runs jobs on worker slots. ``submit`` only when ``idle() > 0``; ``wait`` returns the
    attempts that finished (stopping the ones past their timeout), within ``timeout``
    seconds; ``close`` stops every worker."""

    name: str
    slots: int

    def idle(self) -> int: ...

    def submit(self, job: Job) -> None: ...

    def wait(self, timeout: float) -> list[Done]: ...

    def close(self) -> None: ...


def stopped(status: str, error: str, seconds: float, exit_code: int | None = None
            ) -> dict[str, Any]:
    """The outcome of an attempt that did not finish by itself (``timeout``, ``crashed``):
    nothing it wrote is recorded."""
    return {"status": status, "exit_code": exit_code, "stdout_sha256": None,
            "stderr_sha256": None, "outputs": {}, "error": error, "seconds": seconds}
