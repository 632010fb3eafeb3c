"""``isaforge demo`` for theia: assemble the bundled programs, disassemble, reassemble."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from importlib import resources

from rich.console import Console
from rich.table import Table

from ..core.demo import show_word_round_trips
from ..core.insn import Instruction
from .asm import assemble
from .decode import disassemble


def demo(console: Console, table: Table, lines: int) -> bool:
    """Round-trip each bundled theia example, then run one on the emulator; False if either
    goes wrong."""
    ok = show_word_round_trips(console, table, lines, folder="theia", label="THEIA VP",
                               digits=16, assemble=assemble, disassemble=_lossless)
    return run_demo(console, table) and ok


def _lossless(words: Sequence[int]) -> Iterator[Instruction]:
    """The records with the text that reads back to each word (the listing text can hide
    bits: the EOF bit, ...)."""
    ins: Iterable[Instruction] = disassemble(words)
    return (replace(i, text=i.detail.lossless_asm) for i in ins)


def run_demo(console: Console, table: Table) -> bool:
    """Compile the bundled T-Language program sum_loop (VP + CP), run it on a 4-VP GPU and
    check that VP 2 wrote the per-lane sums of 1..10 times (1, 2, 3) to OMEM."""
    from .compiler import HEADER_FILE, compile_cp, compile_vp
    from .machine.gpu import Gpu

    folder = resources.files("isaforge") / "examples" / "theia" / "programs"
    vp = compile_vp((folder / "sum_loop.vp").read_text(), filename="sum_loop.vp")
    cp = compile_cp((folder / "sum_loop.cp").read_text(), filename="sum_loop.cp",
                    headers={HEADER_FILE: vp.header()})
    gpu = Gpu(cores=4)
    gpu.load(vp.words, cp.words)
    result = gpu.run()
    omem = [int(v) for v in gpu.omem(2, 3)]
    expected = [55 * k for k in (1, 2, 3)]
    ok = omem == expected
    console.rule("theia: sum_loop.vp + sum_loop.cp compiled and run on Gpu(cores=4)")
    console.print(f"{len(vp.words)} VP and {len(cp.words)} CP instructions; "
                  f"{result.vp_instructions} VP instructions executed; "
                  f"VP 2 OMEM[0..2] = {omem}", markup=False, highlight=False)
    table.add_row("THEIA GPU", "sum_loop.vp (run)",
                  f"{len(vp.words)}+{len(cp.words)} words",
                  f"[green]OMEM = {omem}[/]" if ok else f"[red]OMEM = {omem}, want {expected}[/]")
    return ok
