"""Speed of the THEIA assembler through the API (``theia.assemble``): instructions per second.

Inputs, each assembled whole (best of three, in one process, after one warm-up run that
also compiles the assembler's patterns; before each run the assembler forgets the lines it
has read, so a figure counts only the repetition inside its input):

* the ``code.list`` of the compiled VP program of ``theia_compile.py`` (``--blocks``), and
  its instructions in the plain form ``disasm --plain`` prints (``detail.lossless_asm``);
* the same two forms of ``--random`` random 64-bit VP words (most are odd encodings: branch
  forms, immediates, hidden bits, so annotations) and of random 32-bit CP words (most do not
  decode: ``.word``);
* the CP program's ``cp_code.list``.

Wall-clock figures depend on what else the machine runs; the CPU-second figures (this
process's CPU time) much less.

Usage: python benchmarks/theia_asm.py [--blocks N] [--random N]
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

from theia_compile import CP_BLOCKS, cp_source, vp_source  # type: ignore[import-not-found]

from isaforge.theia import assemble
from isaforge.theia.compiler import compile_cp, compile_vp
from isaforge.theia.decode import disassemble
from isaforge.theia.fastasm import fast_reader
from isaforge.theia.listing import listing


def best_of(n: int, fn: Callable[[], object]) -> tuple[float, float]:
    """The best wall-clock and the best CPU time (this process) of ``n`` runs."""
    wall = cpu = float("inf")
    for _ in range(n):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall = min(wall, time.perf_counter() - t0)
        cpu = min(cpu, time.process_time() - c0)
    return wall, cpu


def plain(words: list[int], cp: bool = False) -> str:
    return "".join(ins.detail.lossless_asm + "\n" for ins in disassemble(words, cp=cp))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--blocks", type=int, default=400)
    ap.add_argument("--random", type=int, default=5000)
    args = ap.parse_args()
    vp = compile_vp(vp_source(args.blocks), filename="bench.vp")
    cp = compile_cp(cp_source(CP_BLOCKS), filename="bench.cp")
    rnd = random.Random(16)
    vp_random = [rnd.getrandbits(64) for _ in range(args.random)]
    cp_random = [rnd.getrandbits(32) for _ in range(args.random)]
    cases = [
        ("VP compiled code.list", vp.listing, vp.words, False),
        ("VP compiled --plain", plain(vp.words), vp.words, False),
        ("VP random listing", listing(vp_random), vp_random, False),
        ("VP random --plain", plain(vp_random), vp_random, False),
        ("CP compiled cp_code.list", cp.listing, cp.words, True),
        ("CP random listing", listing(cp_random, cp=True), cp_random, True),
        ("CP random --plain", plain(cp_random, True), cp_random, True),
    ]
    for name, text, words, cp_mode in cases:
        t0 = time.perf_counter()
        got = assemble(text, cp=cp_mode)  # warm-up (compiles the patterns it needs)
        first = time.perf_counter() - t0
        if got != words:
            raise SystemExit(f"{name}: the words differ")
        def run(text: str = text, cp_mode: bool = cp_mode) -> None:
            fast_reader(cp_mode).forget()
            assemble(text, cp=cp_mode)

        secs, cpu = best_of(3, run)
        unique = len(set(words))
        print(f"{name:26} {len(words):6} instructions ({unique:5} different): "
              f"{len(words) / secs:9,.0f} instructions/s ({secs * 1e6 / len(words):5.1f} us "
              f"each; {len(words) / cpu:9,.0f} per CPU second; first run {first * 1e3:.0f} ms)")


if __name__ == "__main__":
    main()
