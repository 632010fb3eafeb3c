"""The console script's quick start (:mod:`isaforge.entry`): ``afuc disasm`` / ``afuc asm``
run without click when their command line is plain, and must then do exactly what the
click command does; any other command line goes to click."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from isaforge import entry
from isaforge.afuc.cli import afuc_cli
from isaforge.afuc.commands import QUICK
from isaforge.cli import main
from tests.refdata import refdata

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("name", sorted(QUICK))
def test_quick_commands_take_the_click_commands_options(name: str) -> None:
    """Each quick command knows every option of the click command, under the same option
    strings and keyword, flags as flags, and the same argument."""
    cmd, quick = afuc_cli.commands[name], QUICK[name]
    flags: dict[str, str] = {}
    options: dict[str, str] = {}
    required = []
    args = []
    for p in cmd.params:
        if isinstance(p, click.Argument):
            args.append(p.name)
            continue
        assert isinstance(p, click.Option)
        if p.name == "help":
            continue
        target = flags if p.is_flag else options
        target.update((o, p.name) for o in (*p.opts, *p.secondary_opts))
        if p.required:
            required.append(p.name)
    assert args == [quick.positional]
    assert quick.flags == flags
    assert quick.options == options
    assert sorted(quick.required) == sorted(required)


@pytest.mark.parametrize("args, want", [
    (["fw", "-v", "-o", "out", "--gpu", "a630"],
     {"firmware": "fw", "verbose": True, "raw": False, "color": False, "gpu": "a630",
      "output": "out"}),
    (["-", "--color"],
     {"firmware": "-", "verbose": False, "raw": False, "color": True, "gpu": None,
      "output": None}),
])
def test_plain_command_lines_are_parsed(args: list[str], want: dict) -> None:
    assert QUICK["disasm"].parse(args) == want


@pytest.mark.parametrize("args", [
    [], ["--help"], ["fw", "--help"], ["fw", "-vr"], ["fw", "--gpu=a630"], ["fw", "-ga630"],
    ["fw", "-o"], ["fw", "-o", "--raw"], ["fw", "-v", "-v"], ["fw", "-o", "a", "-o", "b"],
    ["fw", "fw2"], ["--", "fw"], ["fw", "--frob"],
])
def test_other_command_lines_go_to_click(args: list[str]) -> None:
    assert QUICK["disasm"].parse(args) is None
    assert QUICK["asm"].parse(["src.asm"]) is None  # -o is required: click says so
    assert not entry.quick_start(["afuc", "disasm", *args])


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "isaforge", *args], capture_output=True,
                          cwd=REPO, timeout=120)


@pytest.mark.parametrize("extra", [[], ["-v"], ["-r", "-c"]])
def test_quick_disasm_prints_what_click_prints(extra: list[str]) -> None:
    fw = str(refdata("afuc", "firmware", "a530_pm4.fw"))
    quick = _run("afuc", "disasm", fw, *extra)
    slow = CliRunner().invoke(main, ["afuc", "disasm", fw, *extra])
    assert quick.returncode == 0 == slow.exit_code
    assert quick.stdout == slow.stdout_bytes and quick.stderr == b""


def test_quick_asm_writes_what_click_writes(tmp_path: Path) -> None:
    src = refdata("afuc", "disasm", "a530_pfp.asm")
    assert _run("afuc", "asm", str(src), "-o", str(tmp_path / "q.fw")).returncode == 0
    assert (tmp_path / "q.fw").read_bytes() == refdata("afuc", "firmware",
                                                       "a530_pfp.fw").read_bytes()


def test_quick_errors_are_the_click_commands_errors(tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.fw")
    quick = _run("afuc", "disasm", missing)
    slow = CliRunner().invoke(main, ["afuc", "disasm", missing])
    assert quick.returncode == 1 == slow.exit_code
    assert quick.stderr.decode() == slow.stderr
    assert quick.stderr.decode().count("\n") == 1 and "Traceback" not in slow.stderr
    bad = tmp_path / "bad.asm"
    bad.write_bytes(b"\xff\xfe")
    quick = _run("afuc", "asm", str(bad), "-o", str(tmp_path / "o.fw"))
    assert quick.returncode == 1 and b"is not a text file" in quick.stderr


def test_help_still_lists_every_command() -> None:
    out = _run("afuc", "--help").stdout.decode()
    for name in ("disasm", "asm", "run", "trace", "debug"):
        assert name in out
    assert "Usage: isaforge afuc disasm" in _run("afuc", "disasm", "--help").stdout.decode()
    top = _run("--help").stdout.decode()
    assert all(a in top for a in ("afuc", "tensix", "theia", "batch", "demo"))


def test_plain_command_lines_run_without_click(tmp_path: Path) -> None:
    fw = refdata("afuc", "firmware", "a530_pm4.fw")
    out = tmp_path / "out.txt"
    code = ("import sys; from isaforge.entry import quick_start; "
            f"ran = quick_start(['afuc', 'disasm', {str(fw)!r}, '-o', {str(out)!r}]); "
            "print(ran, 'click' in sys.modules)")
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=REPO, timeout=120)
    assert got.stdout.split() == ["True", "False"], got.stderr
    assert out.read_bytes() == refdata("afuc", "disasm", "a530_pm4.asm").read_bytes()


# modules a quick command must not import (each costs more start-up than it is worth):
# dataclasses (it imports inspect), typing (it imports re), click, numpy; a listing with its
# register table cached on disk needs neither re (and enum) nor json nor gzip
_HEAVY = ("dataclasses", "inspect", "typing", "click", "numpy")
_LISTING_HEAVY = (*_HEAVY, "re", "enum", "json", "gzip")


def _imported_by(args: list[str], cache: Path) -> list[str]:
    """The modules of _LISTING_HEAVY that ``isaforge ARGS`` (the quick start) imported."""
    code = ("import sys; from isaforge.entry import quick_start; "
            f"ran = quick_start({args!r}); "
            f"print(ran, *[m for m in {_LISTING_HEAVY!r} if m in sys.modules])")
    env = {**os.environ, "ISAFORGE_CACHE_DIR": str(cache)}
    env.pop("ISAFORGE_NO_CACHE", None)
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=REPO, timeout=120, env=env)
    words = got.stdout.split()
    assert words[:1] == ["True"], got.stderr
    return words[1:]


def test_quick_disasm_imports_no_heavy_modules(tmp_path: Path) -> None:
    fw = refdata("afuc", "firmware", "a530_pfp.fw")
    out = tmp_path / "out.txt"
    args = ["afuc", "disasm", str(fw), "-o", str(out)]
    first = _imported_by(args, tmp_path / "cache")  # fills the register table's cache
    assert not set(first) & set(_HEAVY), first
    assert out.read_bytes() == refdata("afuc", "disasm", "a530_pfp.asm").read_bytes()
    out.unlink()
    assert _imported_by(args, tmp_path / "cache") == []
    assert out.read_bytes() == refdata("afuc", "disasm", "a530_pfp.asm").read_bytes()


def test_quick_asm_imports_no_heavy_modules(tmp_path: Path) -> None:
    src = refdata("afuc", "disasm", "a530_pfp.asm")
    out = tmp_path / "out.fw"
    got = _imported_by(["afuc", "asm", str(src), "-o", str(out)], tmp_path / "cache")
    assert not set(got) & set(_HEAVY), got  # (re: the assembler's lexer)
    assert out.read_bytes() == refdata("afuc", "firmware", "a530_pfp.fw").read_bytes()


_REPORT = """
import os, runpy, sys
def _exit(code):  # the quick start ends the process without teardown: report first
    raise SystemExit(code)
os._exit = _exit
sys.argv = ["isaforge", *sys.argv[1:]]
try:
    runpy.run_module("isaforge", run_name="__main__")
except SystemExit as e:
    code = e.code
print(repr((code, sorted(sys.modules))))
"""

#: what each quick command must not import (the other command's engine, the emulator, the
#: boot run where the boot cache has its tables, click, modules only a cache miss needs)
_NOT_FOR = {
    "asm": ("isaforge.afuc.listing", "isaforge.afuc.decode", "isaforge.afuc.color",
            "isaforge.afuc.boot", "isaforge.afuc.machine",
            "isaforge.cli", "click", "zlib", "json"),
    "disasm": ("isaforge.afuc.asm", "isaforge.afuc.fastasm", "isaforge.core.asm",
               "isaforge.core.tokens", "isaforge.afuc.boot", "isaforge.afuc.machine",
               "isaforge.cli", "click", "struct", "zlib", "json"),
}

_A6XX_KEY = ("struct", "zlib")


def _modules_of(args: list[str], cache: Path) -> set[str]:
    """The modules ``python -m isaforge ARGS`` imported, in a fresh interpreter."""
    env = {**os.environ, "ISAFORGE_CACHE_DIR": str(cache)}
    env.pop("ISAFORGE_NO_CACHE", None)
    got = subprocess.run([sys.executable, "-c", _REPORT, *args],
                         capture_output=True, text=True, cwd=REPO, timeout=120, env=env)
    code, modules = ast.literal_eval(got.stdout.strip().splitlines()[-1])
    assert code == 0, got.stderr
    return set(modules)


@pytest.mark.parametrize("name", ["a530_pfp", "a630_sqe"])
def test_each_quick_command_imports_its_own_engine_only(tmp_path: Path, name: str) -> None:
    """With the caches filled by a first run, ``afuc asm`` imports nothing of the
    disassembler and ``afuc disasm`` nothing of the assembler (nor, for a6xx, the boot
    run's emulator); both do their job."""
    fw, src = refdata("afuc", "firmware", f"{name}.fw"), refdata("afuc", "disasm", f"{name}.asm")
    cache = tmp_path / "cache"
    runs = {"asm": ["afuc", "asm", str(src), "-o", str(tmp_path / "out.fw")],
            "disasm": ["afuc", "disasm", str(fw), "-o", str(tmp_path / "out.txt")]}
    for args in runs.values():
        _modules_of(args, cache)  # fills the caches
    for verb, args in runs.items():
        modules = _modules_of(args, cache)
        assert f"isaforge.afuc.{'asm' if verb == 'asm' else 'listing'}" in modules
        unwanted = [m for m in _NOT_FOR[verb]  # (the boot cache's key: a6xx listings only)
                    if not (verb == "disasm" and name.startswith("a6") and m in _A6XX_KEY)]
        assert sorted(m for m in modules for no in unwanted
                      if m == no or m.startswith(no + ".")) == []
    assert (tmp_path / "out.fw").read_bytes() == fw.read_bytes()
    assert (tmp_path / "out.txt").read_bytes() == src.read_bytes()
