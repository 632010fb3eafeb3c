"""``isaforge demo`` for theia: assemble the bundled programs, disassemble, reassemble; and
the counted loop the benchmarks and tests run (:func:`loop_program`) and the RTL loop
(:func:`rtl_loop_sources`)."""

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

# The counted loop: R0 = (0, 1, 2), R2.z = 0 (one thread), R3 = 0 (offset, index), R10 the
# counter, R14 = n, R11 = (3, 3, 3), R12 = (5, 5, 5); at PC 9 the loop test leaves the loop
# once R10.x - n is zero or positive, then the body, R10 += 1 and the jump back to PC 9;
# after the loop R66 = the body's result register, then EOF.
LOOP_HEAD = """ADD R[0].x__ I(0) 0
ADD R[0]._y_ I(1) 0
ADD R[0].__z I(2) 0
ADD R[2].__z I(0) 0
ADD R[3].xyz I(0) 0
ADD R[10].xyz I(0) 0
ADD R[14].xyz I({n:x}) 0
ADD R[11].xyz I(3) 0
ADD R[12].xyz I(5) 0
ADD <BRANCH.ZERO_OR_NOT_SIGN> @{end}.___ R10.xxx R14.-x-y-z
"""
LOOP_TAIL = """ADD R10.xyz R10.xyz R0.yyy
ADD <BRANCH.ALWAYS> @9.___ R0.xyz R0.xyz
ADD R66.xyz {result}.xyz R0.xxx
ADD R0.___ R0.xyz R0.xyz {{EOF=1}}
"""
#: loop bodies: (VP assembly, the register holding the result)
LOOP_BODIES: dict[str, tuple[str, str]] = {
    # one MUL per iteration
    "mul": ("MUL R13.xyz R11.xyz R12.xyz\n", "R13"),
    # ADD / MUL / ADD / LOGIC / ADD and the loop branches: 8 instructions per iteration
    "alu": ("""MUL R13.xyz R11.xyz R12.xyz
ADD R15.xyz R13.xyz R11.xyz
LOGIC R16.xyz R15.xyz R12.xyz
ADD R17.xyz R16.xyz R15.-x-y-z
""", "R16"),
    # 32 ADDs with swizzles, signs and offsets: long straight-line code
    "vector": ("".join(
        f"ADD R{20 + i % 8}.xyz R{11 + i % 3}.{'xyz' if i % 2 else 'yzx'} "
        f"R{20 + (i + 3) % 8}.{'-x-y-z' if i % 3 else 'zxy'}\n" for i in range(31)
    ) + "ADD R16.xyz R20.xyz R21.xyz\n", "R16"),
    # a DIV (66 cycles in the RTL) that the next iteration waits for
    "div": ("""MUL R13.xyz R11.xyz R12.xyz
DIV R13.xyz R13.xyz R12.xyz
ADD R15.xyz R13.xyz R11.xyz
LOGIC R16.xyz R15.xyz R12.xyz
""", "R16"),
}


def loop_source(body: str, n: int) -> str:
    """VP assembly of the counted loop running body ``body`` (a name of
    :data:`LOOP_BODIES`) ``n`` times, for one VP started at PC 0 (no control program)."""
    text, result = LOOP_BODIES[body]
    end = len(LOOP_HEAD.splitlines()) + len(text.splitlines()) + 2  # the R66 line
    return (LOOP_HEAD.format(n=n, end=end) + text + LOOP_TAIL.format(result=result))


def loop_program(body: str, n: int) -> list[int]:
    """The words of :func:`loop_source` ``(body, n)``."""
    return assemble(loop_source(body, n))


# The RTL loop (T-language sources for the VP and CP compilers): the perf_div_livelock
# program of the reference data without its DIV; the test bench starts VP2 on it
RTL_LOOP_VP = """vector i = (0,0,0);
vector a = (1,2,3);
vector b = (3,3,3);
vector c;
while (i.xxx < {n})
{{
\tc = a * b;
\ti++;
}}
out [ a ] = c;
exit ;
"""
RTL_LOOP_CP = """#include "code_block_header.thh"
#define VP_DST_CODE_MEM (1<<31)
#define VP02                2

  scalar SrcOffset = LOOP_OFFSET,DstOffset;
  DstOffset = (0x0 | LOOP_SIZE | VP_DST_CODE_MEM );
  copy_data_block < VP02 , DstOffset  ,SrcOffset>;
  while ( block_transfer_in_progress ) {}
  start <VP02>;
  exit ;
"""


def rtl_loop_sources(n: int) -> tuple[str, str]:
    """The RTL loop's (VP, CP) sources with ``n`` iterations (compile them together)."""
    return RTL_LOOP_VP.format(n=n), RTL_LOOP_CP


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
