"""Emulated afuc instructions per second on a630_sqe.fw, for 10^5 type-4 register writes.

    python benchmarks/afuc_emu.py [N]

The stream is CP_ME_INIT then N one-register type-4 packets (each: waitin, its delay slot
'mov $01, $data', 'ushr $usraddr, $01, 0x8', '(rep)(xmov1)mov $data, $data'). A step is one
instruction issue or one further (rep) iteration. Prints the fast (compiled blocks) and the
exact (per-instruction, as traced runs use) figures, and checks both give the same effects.
A last figure writes the same registers in 127-register packets, where the (rep)(xmov1)
loop, two registers per iteration, does the work.
Rates are per CPU second of this process (time.process_time), best of three runs for the
fast path, so a busy machine distorts them less. Compiled code is shared by the emulators of
one firmware in a process, so the first run (which compiles the blocks the stream needs, a
few tens of ms) is printed on its own; the best-of-three runs reuse that code.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from isaforge.afuc.machine import Emulator
from isaforge.afuc.machine.stream import pkt4_header, pkt7_header

FW = Path(__file__).resolve().parents[2] / "shared/refdata/afuc/firmware/a630_sqe.fw"


def stream(n: int) -> list[int]:
    words = [pkt7_header(0x48, 1), 0]
    for i in range(n):
        reg = 0x8800 + (i & 0xFF)
        words += [pkt4_header(reg, 1), i]
    return words


def bulk_stream(n: int) -> list[int]:
    """CP_ME_INIT, then n register writes in type-4 packets of 127 registers."""
    words = [pkt7_header(0x48, 1), 0]
    for start in range(0, n, 127):
        count = min(127, n - start)
        words += [pkt4_header(0x8800, count), *range(start, start + count)]
    return words


def measure(fw: bytes, words: list[int], exact: bool) -> tuple[float, Emulator]:
    emu = Emulator(fw)
    emu.run(exact=exact)  # boot to the first waitin
    emu.feed(words)
    s0 = emu.steps
    t = time.process_time()  # CPU time: other processes on the machine do not count
    emu.run(max_steps=100 * len(words), exact=exact)
    dt = time.process_time() - t
    return (emu.steps - s0) / dt, emu


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    fw = FW.read_bytes()
    words = stream(n)
    cold, _ = measure(fw, words, exact=False)
    print(f"fast path, first run in this process (compiling its blocks): {cold / 1e6:6.2f} M "
          "afuc instructions/s")
    fast, e1 = max((measure(fw, words, exact=False) for _ in range(3)), key=lambda r: r[0])
    print(f"fast path : {fast / 1e6:6.2f} M afuc instructions/s "
          f"({e1.steps} steps, {e1.packets} packets, {len(e1.effects_raw)} effects)")
    exact, e2 = measure(fw, words[: 2 + 2 * min(n, 20_000)], exact=True)
    print(f"exact path: {exact / 1e6:6.2f} M afuc instructions/s")
    same = e1.effects_raw[: len(e2.effects_raw)] == e2.effects_raw
    print(f"same effects on the common prefix: {same}")
    bulk, e3 = max((measure(fw, bulk_stream(n), exact=False) for _ in range(3)),
                   key=lambda r: r[0])
    print(f"fast path, the same {n} writes in 127-register packets: {bulk / 1e6:6.2f} M "
          f"afuc instructions/s ({e3.steps} steps, {e3.packets} packets)")


if __name__ == "__main__":
    main()
