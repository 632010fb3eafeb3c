"""The batch manifest: a TOML file of ``[[job]]`` and ``[[sweep]]`` tables -> a list of jobs.

.. code-block:: toml

    timeout = 120                    # optional: seconds, for the jobs that set none

    [vars]                           # optional: {name} placeholders for every string below
    refdata = "../../../shared/refdata"

    [[job]]
    id = "theia-sum-loop"            # unique; the job's directory is OUTDIR/jobs/<id>/
    args = ["theia", "run", "sum_loop.vp", "-o", "out"]     # an isaforge command line,
    inputs = ["programs/sum_loop.vp", "programs/sum_loop.cp"]  # or a list of them (steps)
    stdin = "commands.txt"           # optional: a file fed to the command's standard input
    timeout = 30                     # optional
    isolate = false                  # optional: true runs it as a subprocess

    [[sweep]]                        # one job per combination of the values in [sweep.over]
    id = "fpu-{fidelity}-{fmt}"      # without placeholders: the values are appended
    args = ["tensix", "run", "mm_{fidelity}.s", "--load", "srca:0:{fmt}=a.npy"]
    inputs = ["mm_{fidelity}.s", "a.npy"]
    [sweep.over]
    fidelity = ["lofi", "hifi4"]
    fmt = ["bf16", "fp16"]
    quirk = { designed = [], rtl = ["--rtl-quirk", "all"] }  # named values: "{quirk}" alone
                                                               # as an argument splices a list

Input paths are relative to the manifest. Each input is copied into the job's working
directory under its file name, and the job runs there, so a command line names its inputs
by file name. Jobs keep the order they are written in (a sweep's jobs in the order of its
value lists). Every error names the manifest line it comes from.
"""

from __future__ import annotations

import itertools
import os
import re
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import IsaforgeError, SourceLoc
from .toml_lines import TablePos, locate

#: what a job id may look like: it names a directory
ID_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.,+=@-]{0,199}")
_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")
_JOB_KEYS = ("id", "args", "inputs", "stdin", "timeout", "isolate")
_TOP_KEYS = ("job", "sweep", "vars", "timeout")

#: checks a command line (without ``isaforge``); returns why it is not one, or None
CommandCheck = Callable[[Sequence[str]], "str | None"]


class ManifestError(IsaforgeError):
    """A manifest that cannot be run: bad TOML, a duplicate id, an unknown command, a missing
    input file... Always located (``MANIFEST:LINE:COL: error: ...``)."""


@dataclass(frozen=True)
class InputFile:
    """A file (or directory) a job reads: staged as ``name`` in its working directory."""

    name: str
    path: str  # absolute, on the machine that reads the manifest
    is_dir: bool = False


@dataclass(frozen=True)
class Job:
    """One entry of the manifest, sweeps expanded."""

    id: str
    steps: tuple[tuple[str, ...], ...]  # isaforge command lines, run in order
    inputs: tuple[InputFile, ...] = ()
    stdin: str | None = None  # the name of the input fed to standard input
    timeout: float | None = None
    isolate: bool = False  # run as a subprocess even where in-process is possible
    line: int = 0  # where the job (or its sweep) is written


@dataclass(frozen=True)
class Manifest:
    path: Path
    jobs: tuple[Job, ...]


class _Err(Exception):
    """An error without its location yet: (message, key whose line to report)."""

    def __init__(self, message: str, key: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.key = key


def command_checker(root: Any) -> CommandCheck:
    """A :data:`CommandCheck` for the commands of the click group ``root`` (``isaforge``):
    the words before the first option must name a command (``theia run``), and that command
    must not be ``batch`` itself."""
    import click

    def check(argv: Sequence[str]) -> str | None:
        cmd, path = root, ["isaforge"]
        ctx = click.Context(root, info_name="isaforge")
        for word in argv:
            if not isinstance(cmd, click.Group):
                break
            sub = None if word.startswith("-") else cmd.get_command(ctx, word)
            if sub is None:
                known = ", ".join(cmd.list_commands(ctx))
                what = f"unknown command '{' '.join(path[1:] + [word])}'" if not \
                    word.startswith("-") else f"'{' '.join(path)}' needs a command"
                return f"{what} (expected one of: {known})"
            path.append(word)
            cmd = sub
        if isinstance(cmd, click.Group):
            known = ", ".join(cmd.list_commands(ctx))
            return f"'{' '.join(path)}' needs a command (one of: {known})"
        if path[1] == "batch":
            return "a job cannot run 'isaforge batch'"
        return None

    return check


def load_manifest(path: str | os.PathLike[str], check_command: CommandCheck | None = None,
                  default_timeout: float | None = None,
                  variables: dict[str, str] | None = None) -> Manifest:
    """Read and check a manifest; raise :class:`ManifestError` (with its line) on the first
    problem. ``check_command`` validates each command line (see :func:`command_checker`);
    ``default_timeout`` applies to jobs for which neither they nor the manifest set one;
    ``variables`` override (or add to) the manifest's ``[vars]``."""
    shown = str(path)
    try:
        raw = Path(path).read_bytes()
    except OSError as e:
        raise ManifestError(f"cannot read the manifest: {e.strerror or e}") from None
    try:
        text = raw.decode("utf-8")
        data = tomllib.loads(text)
    except UnicodeDecodeError as e:
        raise ManifestError(f"not UTF-8 text ({e.reason})", SourceLoc(shown, 1, 1)) from None
    except tomllib.TOMLDecodeError as e:
        raise _syntax_error(shown, str(e), text) from None
    top, tables = locate(text)
    for name in variables or {}:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise ManifestError(f"variable name '{name}' is not an identifier")
    return _Loader(shown, Path(path).resolve().parent, data, top, tables, check_command,
                   default_timeout, dict(variables or {})).load()


def _syntax_error(shown: str, message: str, text: str) -> ManifestError:
    m = re.search(r"\s*\(at line (\d+), column (\d+)\)$", message)
    if m:
        return ManifestError(message[:m.start()], SourceLoc(shown, int(m[1]), int(m[2])))
    m = re.search(r"\s*\(at end of document\)$", message)
    end = SourceLoc(shown, text.count("\n") + 1, len(text.rsplit("\n", 1)[-1]) + 1)
    return ManifestError(message[:m.start()] if m else message, end)


def substitute(text: str, values: dict[str, str | list[str]], key: str | None = None) -> str:
    """``{name}`` -> its value (``{{``/``}}`` for literal braces); unknown names are errors."""

    def repl(m: re.Match[str]) -> str:
        if m.group(0) in ("{{", "}}"):
            return m.group(0)[0]
        name = m.group(1)
        if name not in values:
            known = ", ".join(sorted(values)) or "none are defined"
            raise _Err(f"unknown placeholder '{{{name}}}' in '{text}' ({known})", key)
        value = values[name]
        if isinstance(value, list):
            raise _Err(f"'{{{name}}}' is a list of arguments: write it alone as one argument",
                       key)
        return value

    return _PLACEHOLDER.sub(repl, text)


class _Loader:
    def __init__(self, shown: str, base: Path, data: dict[str, Any], top: TablePos,
                 tables: list[TablePos], check_command: CommandCheck | None,
                 default_timeout: float | None, overrides: dict[str, str]) -> None:
        self.shown = shown
        self.base = base
        self.data = data
        self.top = top
        self.tables = tables
        self.check_command = check_command
        self.default_timeout = default_timeout
        self.overrides = overrides
        self.exists: dict[str, bool | None] = {}  # path -> is_dir (None: missing)

    # -- errors ---------------------------------------------------------------------------
    def fail(self, pos: TablePos, err: _Err) -> ManifestError:
        line, col = pos.pos(err.key)
        if err.key and "." in err.key and err.key not in pos.keys:
            line, col = pos.pos(err.key.split(".")[0])
        return ManifestError(err.message, SourceLoc(self.shown, line, col))

    # -- the whole file -------------------------------------------------------------------
    def load(self) -> Manifest:
        for key in self.data:
            if key not in _TOP_KEYS:
                where = next((t for t in self.tables if t.name == key), self.top)
                raise self.fail(where, _Err(
                    f"unknown key '{key}' (expected {', '.join(_TOP_KEYS)})", key))
        try:
            variables = self._variables()
            timeout = self._timeout(self.data.get("timeout"), "timeout")
        except _Err as e:
            raise self.fail(self.top, e) from None
        if timeout is None:
            timeout = self.default_timeout
        entries: list[tuple[str, dict[str, Any], TablePos]] = []
        for kind in ("job", "sweep"):
            items = self.data.get(kind, [])
            if not isinstance(items, list) or not all(isinstance(t, dict) for t in items):
                raise self.fail(self.top, _Err(f"'{kind}' must be written as [[{kind}]] tables",
                                               kind))
            positions = [t for t in self.tables if t.name == kind]
            for i, table in enumerate(items):
                pos = positions[i] if i < len(positions) else TablePos(kind, *self.top.pos(kind))
                entries.append((kind, table, pos))
        entries.sort(key=lambda e: e[2].line)  # manifest order
        jobs: list[Job] = []
        first_line: dict[str, int] = {}
        for kind, table, pos in entries:
            try:
                expanded = (self._job(table, variables, timeout, pos.line) if kind == "job"
                            else self._sweep(table, variables, timeout, pos.line))
            except _Err as e:
                raise self.fail(pos, e) from None
            for job in expanded:
                if job.id in first_line:
                    raise self.fail(pos, _Err(
                        f"duplicate job id '{job.id}' (first at line {first_line[job.id]})",
                        "id"))
                first_line[job.id] = pos.line
                jobs.append(job)
        if not jobs:
            raise ManifestError("no [[job]] or [[sweep]] table: nothing to run",
                                SourceLoc(self.shown, 1, 1))
        return Manifest(Path(self.shown), tuple(jobs))

    def _variables(self) -> dict[str, str]:
        table = self.data.get("vars", {})
        if not isinstance(table, dict):
            raise _Err("'vars' must be a table of strings", "vars")
        out: dict[str, str] = {}
        for name, value in table.items():
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                raise _Err(f"variable name '{name}' is not an identifier", f"vars.{name}")
            if not isinstance(value, str | int | float) or isinstance(value, bool):
                raise _Err(f"variable '{name}' must be a string or a number", f"vars.{name}")
            out[name] = str(value)
        out.update(self.overrides)
        return out

    @staticmethod
    def _timeout(value: Any, key: str) -> float | None:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise _Err(f"'{key}' must be a positive number of seconds, not {value!r}", key)
        return float(value)

    # -- one [[job]] ----------------------------------------------------------------------
    def _job(self, table: dict[str, Any], values: dict[str, Any], timeout: float | None,
             line: int) -> list[Job]:
        for key in table:
            if key not in _JOB_KEYS:
                raise _Err(f"unknown key '{key}' in [[job]] (expected "
                           f"{', '.join(_JOB_KEYS)})", key)
        if "id" not in table:
            raise _Err("[[job]] needs an 'id'")
        job_id = table["id"]
        if not isinstance(job_id, str):
            raise _Err(f"'id' must be a string, not {job_id!r}", "id")
        return [self._build(table, values, substitute(job_id, values, "id"), timeout, line)]

    # -- one [[sweep]] --------------------------------------------------------------------
    def _sweep(self, table: dict[str, Any], variables: dict[str, str], timeout: float | None,
               line: int) -> list[Job]:
        for key in table:
            if key not in (*_JOB_KEYS, "over"):
                raise _Err(f"unknown key '{key}' in [[sweep]] (expected "
                           f"{', '.join((*_JOB_KEYS, 'over'))})", key)
        if "id" not in table or not isinstance(table["id"], str):
            raise _Err("[[sweep]] needs an 'id' string (a template: 'fpu-{fmt}')", "id")
        over = table.get("over")
        if not isinstance(over, dict) or not over:
            raise _Err("[[sweep]] needs a table 'over' of value lists "
                       "([sweep.over] fmt = [\"bf16\", \"fp16\"])", "over")
        axes: list[list[tuple[str, str | list[str]]]] = []
        for name, raw in over.items():
            key = f"over.{name}"
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                raise _Err(f"sweep variable '{name}' is not an identifier", key)
            if name in variables:
                raise _Err(f"sweep variable '{name}' is also defined in [vars]", key)
            axes.append(self._axis(name, raw, key))
        template = table["id"]
        names = list(over)
        jobs = []
        for combo in itertools.product(*axes):
            values: dict[str, Any] = dict(variables)
            values.update({n: v for n, (_, v) in zip(names, combo, strict=True)})
            labels = [label for label, _ in combo]
            if _PLACEHOLDER.search(template):
                labelled = dict(variables)
                labelled.update(zip(names, labels, strict=True))
                job_id = substitute(template, labelled, "id")
            else:
                job_id = "-".join([template, *labels])
            jobs.append(self._build(table, values, job_id, timeout, line))
        return jobs

    @staticmethod
    def _axis(name: str, raw: Any, key: str) -> list[tuple[str, str | list[str]]]:
        """[(label for ids, value)] of one sweep variable."""
        def scalar(v: Any) -> str | None:
            if isinstance(v, bool):
                return "true" if v else "false"
            if isinstance(v, str | int | float):
                return str(v)
            return None

        if isinstance(raw, list) and raw:
            out: list[tuple[str, str | list[str]]] = []
            for v in raw:
                s = scalar(v)
                if s is None:
                    raise _Err(f"values of '{name}' must be strings or numbers (use a table "
                               f"of named lists to splice arguments)", key)
                out.append((s, s))
            return out
        if isinstance(raw, dict) and raw:
            out = []
            for label, v in raw.items():
                s = scalar(v)
                if s is not None:
                    out.append((label, s))
                elif isinstance(v, list) and all(isinstance(x, str) for x in v):
                    out.append((label, list(v)))
                else:
                    raise _Err(f"value '{label}' of '{name}' must be a string, a number or a "
                               f"list of strings", key)
            return out
        raise _Err(f"'{name}' must be a non-empty list of values, or a table of named "
                   f"values", key)

    # -- the common part ------------------------------------------------------------------
    def _build(self, table: dict[str, Any], values: dict[str, Any], job_id: str,
               timeout: float | None, line: int) -> Job:
        if not ID_RE.fullmatch(job_id):
            raise _Err(f"job id '{job_id}' is not usable as a directory name (letters, "
                       f"digits and _ . , + = @ -, at most 200, not starting with . or -)",
                       "id")
        steps = self._steps(table.get("args"), values)
        inputs: list[InputFile] = []
        raw_inputs = table.get("inputs", [])
        if not isinstance(raw_inputs, list) or not all(isinstance(p, str) for p in raw_inputs):
            raise _Err("'inputs' must be a list of paths (strings)", "inputs")
        for p in raw_inputs:
            self._add_input(inputs, substitute(p, values, "inputs"), "inputs")
        stdin = None
        if "stdin" in table:
            if not isinstance(table["stdin"], str):
                raise _Err("'stdin' must be a path (a string)", "stdin")
            stdin = self._add_input(inputs, substitute(table["stdin"], values, "stdin"), "stdin")
            if next(i for i in inputs if i.name == stdin).is_dir:
                raise _Err(f"'stdin' names a directory: {table['stdin']}", "stdin")
        own = self._timeout(table.get("timeout"), "timeout")
        isolate = table.get("isolate", False)
        if not isinstance(isolate, bool):
            raise _Err(f"'isolate' must be true or false, not {isolate!r}", "isolate")
        return Job(job_id, steps, tuple(inputs), stdin, own if own is not None else timeout,
                   isolate, line)

    def _steps(self, args: Any, values: dict[str, Any]) -> tuple[tuple[str, ...], ...]:
        if args is None:
            raise _Err("the job needs 'args': an isaforge command line as a list, e.g. "
                       "[\"theia\", \"run\", \"prog.vp\"]")
        if isinstance(args, list) and args and all(isinstance(a, str) for a in args):
            lines = [args]
        elif (isinstance(args, list) and args and all(
                isinstance(a, list) and a and all(isinstance(x, str) for x in a)
                for a in args)):
            lines = args
        else:
            raise _Err("'args' must be a non-empty list of strings (one command line) or a "
                       "list of such lists (steps run in order)", "args")
        steps = []
        for argv in lines:
            out: list[str] = []
            for a in argv:
                m = re.fullmatch(r"\{([A-Za-z_][A-Za-z0-9_]*)\}", a)
                if m and isinstance(values.get(m.group(1)), list):
                    out.extend(values[m.group(1)])
                else:
                    out.append(substitute(a, values, "args"))
            if out and out[0] == "isaforge":
                out = out[1:]
            if not out:
                raise _Err("an empty command line in 'args'", "args")
            if self.check_command is not None:
                problem = self.check_command(out)
                if problem:
                    raise _Err(problem, "args")
            steps.append(tuple(out))
        return tuple(steps)

    def _add_input(self, inputs: list[InputFile], rel: str, key: str) -> str:
        path = os.path.normpath(os.path.join(self.base, rel))
        if path not in self.exists:
            self.exists[path] = (os.path.isdir(path) if os.path.exists(path) else None)
        is_dir = self.exists[path]
        if is_dir is None:
            raise _Err(f"input file not found: {rel} (paths are relative to the manifest, "
                       f"{self.base})", key)
        name = os.path.basename(path)
        for other in inputs:
            if other.name == name:
                if other.path == path:
                    return name
                raise _Err(f"two inputs are named '{name}' ({other.path} and {path}): each "
                           f"is staged under its file name", key)
        inputs.append(InputFile(name, path, is_dir))
        return name
