"""Disassembly and assembly throughput on the reference firmware, against Mesa (prints
figures; not a test).

    python benchmarks/afuc_disasm.py [--repeat N] [--src DIR] [--script PATH]

In-process: ``listing()`` (Mesa's text, including the a6xx boot-code run) and ``assemble()``
of that text, over every firmware in refdata/afuc/firmware, CPU time of this process (so that
the other users of a shared machine distort it less): the first call in the process ("cold":
tables built and caches filled on the way, imports done) and the best of N later calls.
Whole process: ``isaforge afuc disasm`` / ``afuc asm`` once per firmware, as Mesa's tools
are run: wall time of all of them (median of N, start-up included) and their CPU time. The
processes run with Python's bytecode cache (in a temporary directory, filled by one run that
is not counted), as an installed package has it: without it each process compiles every
module it imports again (the session environment sets PYTHONDONTWRITEBYTECODE). The command
lines are plain, so ``isaforge`` runs them without importing click (:mod:`isaforge.entry`).
``afuc disasm`` keeps a6xx/a7xx boot-code tables on disk (:mod:`isaforge.afuc.bootcache`, in
a temporary directory here, filled by the uncounted run): the "no cache" row runs with
``ISAFORGE_NO_CACHE=1``, as a first listing of a file does. ``--script PATH`` runs an
installed ``isaforge`` console script (pip's wrapper) instead of ``python -m isaforge``. The
start-up of ``python -c pass`` and of ``isaforge --version`` (Python, click, our command
group) is printed too: the floor under every whole-process figure.
Mesa's tools are not installed here: its figures
are issue 17's measurement (Mesa's afuc-disasm / afuc-asm built from source, same machine
kind, the 5 Debian firmwares of 35,013 words; refdata holds 3 of them, so rates are compared
per word). Goals (issue 17): in-process >= Mesa's whole process; CLI >= half of it.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MESA = {"disasm": 154_000, "asm": 173_000}  # words/s, whole process (issue 17's measurement)
ROOT = Path(__file__).resolve().parents[1]
# SRC: the isaforge sources measured (--src DIR, e.g. another checkout, for before/after)
SRC = Path(sys.argv[sys.argv.index("--src") + 1]) if "--src" in sys.argv else ROOT / "src"
sys.path.insert(0, str(SRC))
from isaforge.afuc import assemble, listing  # noqa: E402
from isaforge.afuc import boot as _boot  # noqa: E402, F401 - imported, not timed (a6xx disasm)


def _firmware_dir() -> Path:
    root = Path(os.environ.get("ISAFORGE_REFDATA", ROOT.parent / "shared" / "refdata"))
    return root / "afuc" / "firmware"


def _best(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


_ENV = dict(os.environ, PYTHONPATH=str(SRC))
_ENV.pop("PYTHONDONTWRITEBYTECODE", None)


_SCRIPT = ([sys.argv[sys.argv.index("--script") + 1]] if "--script" in sys.argv
           else [sys.executable, "-m", "isaforge"])


def _cli(args: list[str], env: dict[str, str] | None = None) -> None:
    subprocess.run([*_SCRIPT, *args], check=True, env=env or _ENV, stdout=subprocess.DEVNULL)


def _startup(cmd: list[str], repeat: int) -> tuple[float, float]:
    """(median wall, median CPU) of a process."""
    walls, cpus = [], []
    for _ in range(max(repeat, 3)):
        t, c = time.perf_counter(), _children_cpu()
        subprocess.run(cmd, check=True, env=_ENV, stdout=subprocess.DEVNULL)
        walls.append(time.perf_counter() - t)
        cpus.append(_children_cpu() - c)
    return statistics.median(walls), statistics.median(cpus)


def _first(fn) -> float:
    t = time.process_time()
    fn()
    return time.process_time() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--src", help="measure the isaforge sources in this directory instead")
    ap.add_argument("--script", help="an installed isaforge console script to run")
    opt = ap.parse_args()
    fws = sorted(_firmware_dir().glob("*.fw"))
    data = {p: p.read_bytes() for p in fws}
    words = sum(len(d) // 4 for d in data.values())
    print(f"{len(fws)} firmwares ({', '.join(p.stem for p in fws)}): {words} words")

    texts: dict[Path, str] = {}
    dis_first = _first(lambda: texts.update((p, listing(d)) for p, d in data.items()))
    asm_first = _first(lambda: [assemble(t) for t in texts.values()])
    dis = _best(lambda: [listing(d) for d in data.values()], opt.repeat)
    asm = _best(lambda: [assemble(t) for t in texts.values()], opt.repeat)
    with tempfile.TemporaryDirectory() as tmp:
        _ENV["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        _ENV["ISAFORGE_CACHE_DIR"] = str(Path(tmp) / "cache")
        cold_env = dict(_ENV, ISAFORGE_NO_CACHE="1")
        srcs = []
        for p, t in texts.items():
            src = Path(tmp) / f"{p.stem}.asm"
            src.write_text(t)
            srcs.append(src)

        def run_dis(env: dict[str, str] | None = None) -> None:
            for p in fws:
                _cli(["afuc", "disasm", str(p), "-o", str(Path(tmp) / f"{p.stem}.txt")], env)

        def run_asm() -> None:
            for s in srcs:
                _cli(["afuc", "asm", str(s), "-o", str(s.with_suffix(".fw"))])

        run_dis()  # fills the bytecode cache (not counted)
        run_asm()
        pyc = list((Path(tmp) / "pycache").rglob("isaforge/**/*.pyc"))
        bytecode = (f"compiled bytecode of {len(pyc)} isaforge modules, cached in a temporary "
                    "folder by an uncounted run (PYTHONPYCACHEPREFIX)" if pyc else
                    "NO bytecode cache (every process compiles what it imports)")
        py = _startup([sys.executable, "-c", "pass"], opt.repeat)
        cli = _startup([sys.executable, "-m", "isaforge", "--version"], opt.repeat)
        cli_dis, cli_asm, cpu_dis, cpu_asm, cpu_cold = [], [], [], [], []
        for _ in range(opt.repeat):
            c = _children_cpu()
            run_dis(cold_env)
            cpu_cold.append(_children_cpu() - c)
            t, c = time.perf_counter(), _children_cpu()
            run_dis()
            cli_dis.append(time.perf_counter() - t)
            cpu_dis.append(_children_cpu() - c)
            t, c = time.perf_counter(), _children_cpu()
            run_asm()
            cli_asm.append(time.perf_counter() - t)
            cpu_asm.append(_children_cpu() - c)
    rows = [
        ("disassemble, in-process (first call, CPU)", dis_first, "disasm"),
        ("disassemble, in-process (best, CPU)", dis, "disasm"),
        ("disassemble, CLI processes (median wall)", statistics.median(cli_dis), "disasm"),
        ("disassemble, CLI processes (median CPU)", statistics.median(cpu_dis), "disasm"),
        ("disassemble, CLI, no cache (median CPU)", statistics.median(cpu_cold), "disasm"),
        ("assemble, in-process (first call, CPU)", asm_first, "asm"),
        ("assemble, in-process (best, CPU)", asm, "asm"),
        ("assemble, CLI processes (median wall)", statistics.median(cli_asm), "asm"),
        ("assemble, CLI processes (median CPU)", statistics.median(cpu_asm), "asm"),
    ]
    print(f"{'work':44s} {'seconds':>8s} {'words/s':>10s}  vs Mesa (issue 17's measurement)")
    for name, secs, kind in rows:
        rate = words / secs
        print(f"{name:44s} {secs:8.3f} {rate:10,.0f}  {rate / MESA[kind]:5.2f}x of "
              f"{MESA[kind]:,} words/s")
    n = len(fws)
    print(f"CLI processes ran with {bytecode}")
    print(f"start-up per process (median wall / CPU): python -c pass {py[0] * 1e3:.0f} / "
          f"{py[1] * 1e3:.0f} ms, isaforge --version {cli[0] * 1e3:.0f} / "
          f"{cli[1] * 1e3:.0f} ms; x{n} processes = {n * cli[1]:.3f} s CPU of the CLI rows")


if __name__ == "__main__":
    main()
