"""``isaforge demo`` for tensix: assemble the bundled programs, disassemble, reassemble; run
the bundled matmul kernel on the Coprocessor; run tt-metal's add1 program (real firmware and
kernels) on a tile with DRAM."""

from __future__ import annotations

from importlib import resources

from rich.console import Console
from rich.table import Table

from ..core.demo import show_word_round_trips
from .asm import assemble
from .decode import disassemble
from .machine import Coprocessor


def demo(console: Console, table: Table, lines: int) -> bool:
    """Round-trip each bundled tensix example, then run one on the emulator; False if either
    goes wrong."""
    ok = show_word_round_trips(console, table, lines, folder="tensix", label="Tensix (Blackhole)",
                               digits=8, assemble=assemble, disassemble=disassemble)
    ok = run_matmul(console, table) and ok
    return run_add1(console, table) and ok


def run_add1(console: Console, table: Table) -> bool:
    """tt-metal's add1 on a tile (firmware, reader, SFPU compute, writer from the real
    binaries) on 2 random BF16 tiles, compared with the documented result bit for bit."""
    import numpy as np

    from .examples import Add1Device, add1_reference

    x = np.random.default_rng(0).integers(0x3000, 0x4800, (2, 32, 32), dtype=np.uint16)
    dev = Add1Device()
    y = dev.add1(x)
    st = dev.stats
    good = bool(np.array_equal(y, add1_reference(x)))
    console.rule("tensix: tt-metal's add1 on a tile (real firmware and kernels, DRAM, NOC)")
    console.print(f"{st.tiles} tiles: {st.riscv_instructions} RISC-V and "
                  f"{st.tensix_instructions} Tensix instructions, NOC reads {st.noc['read']}, "
                  f"writes {st.noc['write']}, {st.seconds:.2f} s", markup=False,
                  highlight=False)
    table.add_row("Tensix (Blackhole)", "add1_sfpu_single_file (tile)",
                  f"{st.tiles} tiles, {st.riscv_instructions} RISC-V instructions",
                  "[green]bf16(x + 1) bit for bit[/]" if good
                  else "[red]add1 result differs from the reference[/]")
    return good


def run_matmul(console: Console, table: Table) -> bool:
    """Run the bundled matmul kernel on the Coprocessor and compare with numpy."""
    import numpy as np

    text = (resources.files(__package__) / "data" / "matmul_kernel.s").read_text("utf-8")
    rng = np.random.default_rng(0)
    a = rng.integers(-8, 9, (64, 16)).astype(np.float32)  # four 16x16 faces each
    b = rng.integers(-8, 9, (64, 16)).astype(np.float32)
    cp = Coprocessor()
    cp.load_program(text, "matmul_kernel.s")
    cp.load_src("a", 0, a, "bf16")
    cp.load_src("b", 0, b, "bf16")
    res = cp.run(max_steps=10_000)

    def tile(m: np.ndarray) -> np.ndarray:
        return np.block([[m[0:16], m[16:32]], [m[32:48], m[48:64]]])

    c = tile(b) @ tile(a)
    want = np.vstack([c[:16, :16], c[:16, 16:], c[16:, :16], c[16:, 16:]])
    err = float(np.max(np.abs(cp.dst.read("fp32", range(64)) - want)))
    console.rule("tensix: matmul_kernel.s on the Coprocessor (32x32 BF16 tiles, HiFi4)")
    console.print(f"{res.steps} instructions ({res.per_thread[1]} on the math thread), "
                  f"final {cp.rwc.text(1)}", markup=False, highlight=False)
    good = err == 0.0
    table.add_row("Tensix (Blackhole)", "matmul_kernel.s (run)", f"{res.steps} instructions",
                  "[green]Dst = numpy B @ A exactly[/]" if good
                  else f"[red]Dst differs from numpy by {err}[/]")
    return good
