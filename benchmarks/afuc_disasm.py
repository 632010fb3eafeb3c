"""Disassembly and assembly throughput on a630_sqe.fw (prints figures; not a test).

    python benchmarks/afuc_disasm.py [path/to/a630_sqe.fw]
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from isaforge.afuc import assemble, disassemble, listing


def _firmware() -> Path:
    if len(sys.argv) > 1:
        return Path(sys.argv[1])
    root = Path(os.environ.get("ISAFORGE_REFDATA", Path(__file__).resolve().parents[2]
                               / "shared" / "refdata"))
    return root / "afuc" / "firmware" / "a630_sqe.fw"


def _best(fn, repeat: int = 5) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    path = _firmware()
    data = path.read_bytes()
    words = len(data) // 4
    text = listing(data)
    figures = [
        ("listing (Mesa text, incl. boot-code run)", _best(lambda: listing(data))),
        ("listing -v", _best(lambda: listing(data, verbose=True))),
        ("disassemble() -> Instruction records", _best(lambda: list(disassemble(data)))),
        ("assemble(listing)", _best(lambda: assemble(text))),
    ]
    print(f"{path.name}: {words} words, best of 5 runs")
    for name, secs in figures:
        print(f"  {name:42s} {secs * 1e3:8.1f} ms  {words / secs:12,.0f} words/s")


if __name__ == "__main__":
    main()
