"""``isaforge batch``: run many isaforge command lines, on local processes or a Ray cluster.

* :mod:`.manifest`: the TOML manifest (``[[job]]`` and ``[[sweep]]`` tables) -> :class:`Job`
  list, every error with its manifest line;
* :mod:`.execute`: one job in one working directory (inputs staged, command lines run
  in-process through the ``isaforge`` click group or as a subprocess, outputs hashed);
* :mod:`.pool`: the local engine, a pool of forked worker processes;
* :mod:`.ray_engine`: the Ray engine (``isaforge[ray]``), one actor per worker slot, inputs
  and outputs shipped with the jobs;
* :mod:`.runner`: retries, ``results.jsonl``, ``--resume``;
* :mod:`.cli`: the ``isaforge batch`` command (progress bar and summary).
"""

from __future__ import annotations

from .manifest import Job, ManifestError, load_manifest
from .runner import run_batch

__all__ = ["Job", "ManifestError", "load_manifest", "run_batch"]
