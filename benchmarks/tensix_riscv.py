"""RISC-V instructions per second on compute loops: our hart engine and unicorn, side by side.

    python benchmarks/tensix_riscv.py [--quick]

Three programs, assembled with isaforge's own assembler and run from a numpy RAM array:

* ``crc32``: bitwise CRC-32 of a 4 KiB buffer, repeated (RV32I: byte loads, shifts, xor,
  branches);
* ``matmul``: 16x16 int32 matrix product, repeated (RV32IM: word loads and stores, ``mul``);
* ``matmul-zba``: the same product addressed as GCC does for the Tensix cores, with the Zba
  ``sh2add`` (and a Zbb ``zext.h`` on the loop counter) in the inner loop.

Then the boot of real tt-metal firmware on the whole tile (:func:`boot_figures`): the five
cores and the coprocessor through the init handshake and an empty go, its wall time (in this
process once the engine is loaded, best of five; and in a fresh process, with Python's and
numba's start-up), and its RISC-V instructions per second over all cores.

For each: our compiled path (:mod:`isaforge.riscv.machine.fast`), the exact path
(:meth:`Hart.step`, what traced and hooked runs use), and unicorn 2 (QEMU's RISC-V JIT) on
the same bytes. Unicorn's riscv32 has no Zba/Zbb: it raises an illegal-instruction interrupt,
and ``matmul-zba`` runs there only with a hook that emulates each such instruction (the way
a unicorn-based engine would have to). Rates are instructions per CPU second of this
process (``time.process_time``), best of three; the first call of the compiled path (numba
compiling the kernel, or loading it from its cache) is timed on its own.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from isaforge.riscv import AddressSpace, Hart, StopReason, assemble

CODE, DATA, RAM = 0x1000, 0x10000, 0x40000

CRC32 = """
    li s0, 0x10000          # buffer
    li s1, 4096             # length
    li s2, {reps}           # repetitions
    li t6, 0xEDB88320
outer:
    li a0, -1
    mv t0, s0
    add t1, s0, s1
byte_loop:
    lbu t2, 0(t0)
    xor a0, a0, t2
    li t3, 8
bit_loop:
    andi t4, a0, 1
    srli a0, a0, 1
    neg t4, t4
    and t4, t4, t6
    xor a0, a0, t4
    addi t3, t3, -1
    bnez t3, bit_loop
    addi t0, t0, 1
    bltu t0, t1, byte_loop
    not a0, a0
    addi s2, s2, -1
    bnez s2, outer
    ebreak
"""

# C = A x B, 16x16 int32, A at DATA, B at DATA+0x400, C at DATA+0x800
MATMUL = """
    li s2, {reps}
rep:
    li s0, 0x10000          # row of A
    li s3, 0x10800          # row of C
    li t0, 0                # i
row:
    li t1, 0                # j
col:
    li a0, 0                # sum
    mv a1, s0               # &A[i][0]
    li a2, 0x10400
    slli a3, t1, 2
    add a2, a2, a3          # &B[0][j]
    li t2, 16
dot:
    lw a4, 0(a1)
    lw a5, 0(a2)
    mul a4, a4, a5
    add a0, a0, a4
    addi a1, a1, 4
    addi a2, a2, 64
    addi t2, t2, -1
    bnez t2, dot
    slli a3, t1, 2
    add a3, s3, a3
    sw a0, 0(a3)
    addi t1, t1, 1
    li a3, 16
    blt t1, a3, col
    addi s0, s0, 64
    addi s3, s3, 64
    addi t0, t0, 1
    blt t0, a3, row
    addi s2, s2, -1
    bnez s2, rep
    ebreak
"""

MATMUL_ZBA = """
    li s2, {reps}
    li s4, 0x10000          # A
    li s5, 0x10400          # B
    li s6, 0x10800          # C
rep:
    li t0, 0                # i
row:
    li t1, 0                # j
col:
    li a0, 0
    li t2, 0                # k
dot:
    slli a3, t0, 4
    add a3, a3, t2          # i*16 + k
    sh2add a1, a3, s4       # &A[i][k]
    slli a3, t2, 4
    add a3, a3, t1          # k*16 + j
    sh2add a2, a3, s5       # &B[k][j]
    lw a4, 0(a1)
    lw a5, 0(a2)
    mul a4, a4, a5
    add a0, a0, a4
    addi t2, t2, 1
    zext.h t2, t2
    li a3, 16
    bltu t2, a3, dot
    slli a3, t0, 4
    add a3, a3, t1
    sh2add a3, a3, s6
    sw a0, 0(a3)
    addi t1, t1, 1
    li a3, 16
    blt t1, a3, col
    addi t0, t0, 1
    blt t0, a3, row
    addi s2, s2, -1
    bnez s2, rep
    ebreak
"""


def program(src: str, reps: int) -> bytes:
    return assemble(src.format(reps=reps), CODE, "benchmark.s")


def initial_data() -> bytes:
    rng = np.random.default_rng(13)
    buf = rng.integers(0, 256, 0x1000, dtype=np.uint8)
    mats = rng.integers(-1000, 1000, 2 * 256, dtype=np.int32).view(np.uint8)
    buf[:mats.size] = mats
    return buf.tobytes()


def make_hart(code: bytes, fast: bool) -> tuple[Hart, np.ndarray]:
    mem = np.zeros(RAM, np.uint8)
    mem[CODE:CODE + len(code)] = np.frombuffer(code, np.uint8)
    data = initial_data()
    mem[DATA:DATA + len(data)] = np.frombuffer(data, np.uint8)
    space = AddressSpace("bench")
    space.map_ram(0, mem)
    hart = Hart("bench", space, CODE)
    hart.fast = fast
    return hart, mem


def ours(code: bytes, fast: bool, steps: int = 10**10) -> tuple[float, int, Hart, np.ndarray]:
    """(CPU seconds, instructions, hart, memory) for one run."""
    hart, mem = make_hart(code, fast)
    t = time.process_time()
    why = hart.run(steps)
    dt = time.process_time() - t
    assert why in (StopReason.EBREAK, StopReason.LIMIT), why
    return dt, hart.instret, hart, mem


def run_unicorn(code: bytes, emulate: Callable[[int, list[int]], int | None] | None = None
                ) -> tuple[float, int, list[int], bytes, int] | None:
    """(CPU seconds, instructions, registers, data, traps) on unicorn, or None without it.
    ``emulate(word, regs)`` returns rd's value for an instruction unicorn lacks."""
    try:
        import unicorn
        from unicorn import riscv_const as rc
    except ImportError:
        return None
    uc = unicorn.Uc(unicorn.UC_ARCH_RISCV, unicorn.UC_MODE_RISCV32)
    uc.mem_map(0, RAM)
    uc.mem_write(CODE, code)
    uc.mem_write(DATA, initial_data())
    traps = [0]

    def on_interrupt(uc: unicorn.Uc, intno: int, _: object) -> None:
        # unicorn reports the pc after the instruction it could not execute
        pc = uc.reg_read(rc.UC_RISCV_REG_PC) - 4
        word = int.from_bytes(uc.mem_read(pc, 4), "little")
        regs = [uc.reg_read(rc.UC_RISCV_REG_X0 + i) & 0xFFFFFFFF for i in range(32)]
        value = emulate(word, regs) if emulate is not None else None
        if value is None:
            uc.emu_stop()
            raise RuntimeError(f"unicorn: no emulation for {word:#010x} at {pc:#x}")
        rd = (word >> 7) & 31
        if rd:
            uc.reg_write(rc.UC_RISCV_REG_X0 + rd, value)
        traps[0] += 1

    uc.hook_add(unicorn.UC_HOOK_INTR, on_interrupt)
    t = time.process_time()
    uc.emu_start(CODE, CODE + len(code) - 4)  # up to the final ebreak
    dt = time.process_time() - t
    regs = [uc.reg_read(rc.UC_RISCV_REG_X0 + i) & 0xFFFFFFFF for i in range(32)]
    return dt, 0, regs, bytes(uc.mem_read(DATA, 0x1000)), traps[0]


def emulate_zba_zbb(word: int, regs: list[int]) -> int | None:
    """What ``matmul-zba`` needs and unicorn lacks: sh1add/sh2add/sh3add and zext.h."""
    rs1, rs2 = regs[(word >> 15) & 31], regs[(word >> 20) & 31]
    f3, f7 = (word >> 12) & 7, word >> 25
    if word & 0x7F == 0x33 and f7 == 0b0010000 and f3 in (2, 4, 6):
        return ((rs1 << (f3 // 2)) + rs2) & 0xFFFFFFFF
    if word & 0x7F == 0x33 and f7 == 0b0000100 and f3 == 4 and (word >> 20) & 31 == 0:
        return rs1 & 0xFFFF
    return None


def best_of(n: int, fn: Callable[[], tuple[float, int]]) -> tuple[float, int]:
    runs = [fn() for _ in range(n)]
    dt, count = min(runs)
    return dt, count


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = ap.parse_args()
    scale = 1 if args.quick else 4

    t = time.process_time()
    ours(program("ebreak", 0), fast=True)
    print(f"compiled path, first call (numba compile or cache load): "
          f"{time.process_time() - t:.2f} s CPU")
    print()
    print(f"{'program':<11} {'instructions':>13} {'ours fast':>12} {'ours exact':>12} "
          f"{'unicorn':>12}  note")
    cases = [("crc32", CRC32, 10 * scale), ("matmul", MATMUL, 10 * scale),
             ("matmul-zba", MATMUL_ZBA, 8 * scale)]
    for name, src, reps in cases:
        code = program(src, reps)
        dt, n = best_of(3, lambda c=code: ours(c, True)[:2])
        _, _, hart, mem = ours(code, True)
        exact_steps = 200_000
        dte, ne = ours(code, False, exact_steps)[:2]
        zba = name.endswith("zba")
        uc = run_unicorn(code, emulate_zba_zbb if zba else None)
        if uc is None:
            uc_txt, note = "n/a", "unicorn not installed"
        else:
            uc_dt, _, uc_regs, uc_data, traps = uc
            same = uc_regs == hart.x.tolist() and uc_data == mem[DATA:DATA + 0x1000].tobytes()
            uc_txt = f"{n / uc_dt / 1e6:9.1f} M/s"
            note = "same registers and memory" if same else "RESULTS DIFFER"
            if traps:
                note += f"; {traps} Zba/Zbb traps, {uc_dt / traps * 1e6:.1f} us each"
        print(f"{name:<11} {n:>13,} {n / dt / 1e6:8.1f} M/s {ne / dte / 1e6:8.2f} M/s "
              f"{uc_txt:>12}  {note}")
    print()
    print("goal: >= 20 M RISC-V instructions/s on compute code (issue 13)")
    boot_figures()


BOOT_BUILD = "tensix/firmware/bh-10503743232459396191"


def boot_figures() -> None:
    """The firmware boot (init handshake + empty go) on the tile: wall time and rates."""
    import subprocess
    import sys
    from pathlib import Path

    from isaforge.tensix.tile import boot, load_firmware_dir

    root = Path(__file__).resolve().parent.parent
    fw_dir = root.parent / "shared" / "refdata" / BOOT_BUILD
    if not fw_dir.is_dir():
        print(f"\nboot: skipped ({fw_dir} not found)")
        return
    fw = load_firmware_dir(fw_dir)
    best = None
    for _ in range(5):
        t = time.perf_counter()
        r = boot(fw)
        dt = time.perf_counter() - t
        best = dt if best is None else min(best, dt)
    assert r.ok, r.error
    per_core = ", ".join(f"{k} {v['instructions']}" for k, v in r.cores.items())
    print()
    print(f"firmware boot + empty go ({fw_dir.name}): init_done={r.init_done} "
          f"go_done={r.go_done}")
    print(f"  {r.instructions:,} RISC-V instructions ({per_core}), "
          f"{r.tensix_instructions} Tensix instructions")
    print(f"  wall time, engine loaded: {best * 1e3:.1f} ms (best of 5), "
          f"{r.instructions / best / 1e6:.2f} M RISC-V instructions/s over all cores")
    code = ("import time; t = time.perf_counter(); from isaforge.tensix.tile import boot; "
            f"r = boot({str(fw_dir)!r}); print(time.perf_counter() - t, r.ok)")
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**__import__("os").environ, "PYTHONPATH": str(root / "src")})
    total = time.perf_counter() - t
    if out.returncode == 0:
        inner = float(out.stdout.split()[0])
        print(f"  wall time, fresh process: {inner:.2f} s from import to result "
              f"({total:.2f} s with Python's start-up)")
    print("goal: a boot + empty go in well under a second (issue 13)")


if __name__ == "__main__":
    main()
