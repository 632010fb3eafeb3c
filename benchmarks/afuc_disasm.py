"""Disassembly and assembly throughput on the reference firmware, against Mesa (prints
figures; not a test).

    python benchmarks/afuc_disasm.py [--repeat N]

In-process: ``listing()`` (Mesa's text, including the a6xx boot-code run) and ``assemble()``
of that text, over every firmware in refdata/afuc/firmware (best of N runs, CPU time of this
process, so that the other users of a shared machine distort it less). Whole process:
``isaforge afuc disasm`` / ``afuc asm`` once per firmware, as Mesa's tools are run: wall time
of all of them (median of N, start-up included) and their CPU time.
Mesa's tools are not installed here: its figures
are issue 17's measurement (Mesa's afuc-disasm / afuc-asm built from source, same machine
kind, the 5 Debian firmwares of 35,013 words; refdata holds 3 of them, so rates are compared
per word).
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


def _cli(args: list[str]) -> None:
    env = dict(os.environ, PYTHONPATH=str(SRC))
    subprocess.run([sys.executable, "-m", "isaforge", "afuc", *args], check=True, env=env,
                   stdout=subprocess.DEVNULL)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--src", help="measure the isaforge sources in this directory instead")
    opt = ap.parse_args()
    fws = sorted(_firmware_dir().glob("*.fw"))
    data = {p: p.read_bytes() for p in fws}
    texts = {p: listing(d) for p, d in data.items()}
    words = sum(len(d) // 4 for d in data.values())
    print(f"{len(fws)} firmwares ({', '.join(p.stem for p in fws)}): {words} words")

    dis = _best(lambda: [listing(d) for d in data.values()], opt.repeat)
    asm = _best(lambda: [assemble(t) for t in texts.values()], opt.repeat)
    with tempfile.TemporaryDirectory() as tmp:
        srcs = []
        for p, t in texts.items():
            src = Path(tmp) / f"{p.stem}.asm"
            src.write_text(t)
            srcs.append(src)

        def run_dis() -> None:
            for p in fws:
                _cli(["disasm", str(p), "-o", str(Path(tmp) / f"{p.stem}.txt")])

        def run_asm() -> None:
            for s in srcs:
                _cli(["asm", str(s), "-o", str(s.with_suffix(".fw"))])

        cli_dis, cli_asm, cpu_dis, cpu_asm = [], [], [], []
        for _ in range(opt.repeat):
            t, c = time.perf_counter(), _children_cpu()
            run_dis()
            cli_dis.append(time.perf_counter() - t)
            cpu_dis.append(_children_cpu() - c)
            t, c = time.perf_counter(), _children_cpu()
            run_asm()
            cli_asm.append(time.perf_counter() - t)
            cpu_asm.append(_children_cpu() - c)
    rows = [
        ("disassemble, in-process (best, CPU)", dis, "disasm"),
        ("disassemble, CLI processes (median wall)", statistics.median(cli_dis), "disasm"),
        ("disassemble, CLI processes (median CPU)", statistics.median(cpu_dis), "disasm"),
        ("assemble, in-process (best, CPU)", asm, "asm"),
        ("assemble, CLI processes (median wall)", statistics.median(cli_asm), "asm"),
        ("assemble, CLI processes (median CPU)", statistics.median(cpu_asm), "asm"),
    ]
    print(f"{'work':42s} {'seconds':>8s} {'words/s':>10s}  vs Mesa (issue 17's measurement)")
    for name, secs, kind in rows:
        rate = words / secs
        print(f"{name:42s} {secs:8.3f} {rate:10,.0f}  {rate / MESA[kind]:5.2f}x of "
              f"{MESA[kind]:,} words/s")


if __name__ == "__main__":
    main()
