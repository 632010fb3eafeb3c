"""One job in one working directory: stage its inputs, run its command lines, hash its outputs.

Both engines call :func:`run_job` in a worker process: the process pool in
``OUTDIR/jobs/<id>/`` itself, a Ray actor in a temporary directory of its own whose files it
then ships back (:func:`run_shipped`, :func:`materialize`).

A command line runs in-process, through the ``isaforge`` click group (``isaforge.cli:main``,
as the console script does) with ``standalone_mode=False``, its standard streams replaced by
the job's ``stdout.txt``/``stderr.txt`` for the time of the call; the worker keeps its imports
and compiled kernels from one job to the next. Every verb allows it today: none keeps
process-wide state that changes a later call's output, and the one with a prompt,
``afuc debug``, reads its commands from standard input when that is not a terminal, which in
a job it never is (its output is the same, byte for byte, as a subprocess's, 25 times sooner).
A job marked ``isolate`` runs as ``python -m isaforge`` instead, for what should not share
a process (a job that may crash the interpreter or hold much memory). Either way a job sees
the same thing: its working directory, its inputs under their file names, standard input
from its ``stdin`` file (else empty), no terminal, and none of the variables that change how
output is laid out (:data:`ENV_DROP`), so its output files do not depend on the engine, the
worker or the terminal the runner was started from.
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib
import io
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .manifest import Job

#: the click group a job's command line is given to (the ``isaforge`` console script)
ENTRY = ("isaforge.cli", "main")
STDOUT = "stdout.txt"
STDERR = "stderr.txt"
#: environment variables removed in workers: they change widths and colours of output
ENV_DROP = ("COLUMNS", "LINES", "FORCE_COLOR", "NO_COLOR", "CLICOLOR", "CLICOLOR_FORCE",
            "TTY_COMPATIBLE", "TTY_INTERACTIVE", "JUPYTER_COLUMNS", "JUPYTER_LINES")
#: the directory that holds the ``isaforge`` package (for ``python -m isaforge``)
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])
_PR_SET_PDEATHSIG = 1


def prepare_worker(quiet_output: bool) -> None:
    """Once per worker process: drop :data:`ENV_DROP`, take standard input (and with
    ``quiet_output`` standard output and error) off any terminal."""
    for name in ENV_DROP:
        os.environ.pop(name, None)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    if quiet_output:
        os.dup2(null, 1)
        os.dup2(null, 2)
    os.close(null)


def die_with_parent() -> None:
    """Ask Linux to kill this process when its parent dies (no-op elsewhere)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


def sha256_file(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def input_files(job: Job) -> list[tuple[str, str]]:
    """(path in the working directory, path on this machine) of every file the job stages;
    a directory input contributes its files (sorted)."""
    out: list[tuple[str, str]] = []
    for inp in job.inputs:
        if not inp.is_dir:
            out.append((inp.name, inp.path))
            continue
        for dirpath, dirnames, filenames in os.walk(inp.path):
            dirnames.sort()
            rel_dir = os.path.relpath(dirpath, inp.path)
            for name in sorted(filenames):
                rel = name if rel_dir == "." else os.path.join(rel_dir, name)
                out.append((Path(inp.name, rel).as_posix(), os.path.join(dirpath, name)))
    return out


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def fresh_dir(path: Path) -> None:
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)


# -- one job ----------------------------------------------------------------------------
def run_job(job: Job, workdir: Path, files: Sequence[tuple[str, bytes | str]]) -> dict[str, Any]:
    """Run ``job`` in ``workdir`` (emptied first). ``files`` are its inputs: (path in the
    working directory, contents or a path to copy). Returns the outcome: ``status``,
    ``exit_code``, ``stdout_sha256``, ``stderr_sha256``, ``outputs`` (path -> sha256, staged
    inputs left out), ``error`` (its first error line) and ``seconds``."""
    start = time.perf_counter()
    workdir = Path(workdir).resolve()
    fresh_dir(workdir)
    staged: dict[str, str] = {}
    for rel, src in files:
        dest = workdir / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(src, bytes):
            dest.write_bytes(src)
            staged[rel] = hashlib.sha256(src).hexdigest()
        else:
            shutil.copyfile(src, dest)
            staged[rel] = sha256_file(dest)
    code = 0
    with open(workdir / STDOUT, "wb") as out, open(workdir / STDERR, "wb") as err:
        for argv in job.steps:
            stdin = workdir / job.stdin if job.stdin else None
            if job.isolate:
                code = run_subprocess(argv, workdir, stdin, out, err)
            else:
                code = run_inprocess(argv, workdir, stdin, out, err)
            if code != 0:
                break
    _unstage(workdir, staged)
    stdout_sha = sha256_file(workdir / STDOUT)
    stderr_sha = sha256_file(workdir / STDERR)
    outputs = {rel: sha256_file(workdir / rel) for rel in output_paths(workdir)}
    status = "ok" if code == 0 else "crashed" if code < 0 else "failed"
    error = None if code == 0 else first_error_line(workdir, code)
    return {"status": status, "exit_code": code, "stdout_sha256": stdout_sha,
            "stderr_sha256": stderr_sha, "outputs": outputs, "error": error,
            "seconds": time.perf_counter() - start}


def output_paths(workdir: Path) -> list[str]:
    """The job's output files: everything in its directory but stdout.txt and stderr.txt."""
    out = []
    for dirpath, dirnames, filenames in os.walk(workdir):
        dirnames.sort()
        for name in filenames:
            rel = Path(dirpath, name).relative_to(workdir).as_posix()
            if rel not in (STDOUT, STDERR):
                out.append(rel)
    return sorted(out)


def _unstage(workdir: Path, staged: dict[str, str]) -> None:
    """Remove the staged inputs the job left as they were (and the directories they leave
    empty); an input the job rewrote stays, as an output."""
    dirs: set[Path] = set()
    for rel, sha in staged.items():
        path = workdir / rel
        if path.is_file() and not path.is_symlink() and sha256_file(path) == sha:
            path.unlink()
        parent = path.parent
        while parent != workdir:
            dirs.add(parent)
            parent = parent.parent
    for d in sorted(dirs, key=lambda p: len(p.parts), reverse=True):
        if d.is_dir() and not any(d.iterdir()):
            d.rmdir()


def first_error_line(workdir: Path, code: int) -> str:
    """The line a person wants to see first for a job that did not succeed."""
    err = (workdir / STDERR).read_bytes()[:1 << 20].decode("utf-8", "replace").splitlines()
    for line in err:
        if "error" in line.lower():
            return line.strip()[:300]
    for line in err:
        s = line.strip()
        if s and not s.lower().startswith(("note:", "warning:")) and "warning:" not in s:
            return s[:300]
    out = (workdir / STDOUT).read_bytes()[:1 << 20].decode("utf-8", "replace").splitlines()
    for line in out:
        if line.strip().upper().startswith("FAIL"):
            return line.strip()[:300]
    if code < 0:
        return f"killed by {signal_name(-code)}"
    return f"exit status {code}"


# -- running one command line -----------------------------------------------------------
_root: Any = None


def root_command() -> Any:
    """The ``isaforge`` click group, imported once per worker."""
    global _root
    if _root is None:
        _root = getattr(importlib.import_module(ENTRY[0]), ENTRY[1])
    return _root


def run_inprocess(argv: Sequence[str], workdir: Path, stdin: Path | None, out: Any,
                  err: Any) -> int:
    """Run one command line through the click group in this process; return its exit
    status as ``python -m isaforge`` would have."""
    import click

    saved = (sys.stdin, sys.stdout, sys.stderr, sys.argv, os.getcwd())
    stdin_file = open(stdin if stdin is not None else os.devnull, "rb")  # noqa: SIM115
    sys.stdin = io.TextIOWrapper(stdin_file, encoding="utf-8")
    sys.stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    sys.stderr = io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace",
                                  write_through=True)
    sys.argv = ["isaforge", *argv]
    os.chdir(workdir)
    try:
        with warnings.catch_warnings():  # each job warns as a fresh process would
            rv = root_command().main(args=list(argv), prog_name="isaforge",
                                     standalone_mode=False)
        # a command returns None; an explicit exit (--help, ctx.exit) returns its status
        code = rv % 256 if isinstance(rv, int) and not isinstance(rv, bool) else 0
    except SystemExit as e:
        code = _exit_status(e.code)
    except click.exceptions.Abort:
        click.echo("Aborted!", err=True)
        code = 1
    except click.ClickException as e:
        e.show()
        code = e.exit_code
    except Exception:  # noqa: BLE001 - reported as the interpreter would, then status 1
        traceback.print_exc()
        code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
                stream.detach()
            except ValueError:
                pass
        sys.stdin.close()
        sys.stdin, sys.stdout, sys.stderr, sys.argv = saved[:4]
        os.chdir(saved[4])
    return code


def _exit_status(code: object) -> int:
    """What the interpreter would exit with for ``sys.exit(code)`` (the OS keeps 8 bits)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code % 256
    print(code, file=sys.stderr)
    return 1


def run_subprocess(argv: Sequence[str], workdir: Path, stdin: Path | None, out: Any,
                   err: Any) -> int:
    """Run one command line as ``python -m isaforge``; a negative status is the signal that
    killed it."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (_PACKAGE_ROOT, env.get("PYTHONPATH", "")) if p)
    env["PYTHONIOENCODING"] = "utf-8"
    out.flush()
    err.flush()
    with open(stdin if stdin is not None else os.devnull, "rb") as stdin_file:
        proc = subprocess.run([sys.executable, "-m", "isaforge", *argv], cwd=workdir,
                              stdin=stdin_file, stdout=out, stderr=err, env=env,
                              preexec_fn=die_with_parent, check=False)
    return proc.returncode


# -- shipping (no shared file system) ---------------------------------------------------
TMP_PREFIX = "isaforge-batch-"


def run_shipped(job: Job, files: Sequence[tuple[str, bytes]]) -> dict[str, Any]:
    """Run ``job`` in a temporary directory of this machine and return its outcome with the
    directory's contents (``files``: path -> bytes, ``dirs``: empty directories, ``stdout``,
    ``stderr``), plus ``host`` and ``workdir`` for the log. The directory is removed."""
    _remove_stale_dirs()
    base = tempfile.mkdtemp(prefix=f"{TMP_PREFIX}{os.getpid()}-")
    workdir = Path(base) / job.id
    try:
        outcome = run_job(job, workdir, files)
        outcome["files"] = {rel: (workdir / rel).read_bytes() for rel in outcome["outputs"]}
        outcome["dirs"] = sorted(
            Path(d).relative_to(workdir).as_posix() for d, sub, names in os.walk(workdir)
            if not sub and not names and Path(d) != workdir)
        outcome["stdout"] = (workdir / STDOUT).read_bytes()
        outcome["stderr"] = (workdir / STDERR).read_bytes()
        outcome["host"] = socket.gethostname()
        outcome["workdir"] = str(workdir)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return outcome


def _remove_stale_dirs() -> None:
    """Remove the temporary directories of workers that were killed mid-job."""
    for d in Path(tempfile.gettempdir()).glob(f"{TMP_PREFIX}*-*"):
        try:
            pid = int(d.name[len(TMP_PREFIX):].split("-")[0])
        except ValueError:
            continue
        if pid == os.getpid():
            continue
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            shutil.rmtree(d, ignore_errors=True)
        except PermissionError:
            pass


def materialize(outcome: dict[str, Any], workdir: Path) -> dict[str, Any]:
    """Write a shipped outcome's files into ``workdir``; return the outcome without them."""
    fresh_dir(workdir)
    (workdir / STDOUT).write_bytes(outcome.pop("stdout"))
    (workdir / STDERR).write_bytes(outcome.pop("stderr"))
    for rel, data in outcome.pop("files").items():
        dest = workdir / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)
    for rel in outcome.pop("dirs"):
        (workdir / rel).mkdir(parents=True, exist_ok=True)
    return outcome
