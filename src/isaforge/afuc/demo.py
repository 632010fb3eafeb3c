"""``isaforge demo`` for afuc: assemble the bundled firmware, list it, reassemble the listing,
then run a small command stream through it on the emulator."""

from __future__ import annotations

from importlib import resources

from rich.console import Console
from rich.table import Table

from .asm import assemble
from .listing import listing
from .machine import Emulator

DEMO_STREAM = """\
CP_ME_INIT 0
RB_RENDER_CNTL 0x11 0x22 0x33
CP_MEM_WRITE 0x10000 0 0xdeadbeef 0xcafebabe
CP_SCRATCH_WRITE 2 0x77 0x88
CP_NOP 1 2 3
"""


def demo(console: Console, table: Table, lines: int) -> bool:
    """Show each bundled afuc example; add a row per example; False if any round trip fails."""
    ok = True
    src_dir = resources.files("isaforge") / "examples" / "afuc"
    for entry in sorted(src_dir.iterdir(), key=lambda p: p.name):
        if not entry.name.endswith(".asm"):
            continue
        fw = assemble(entry.read_text(), filename=entry.name)
        text2 = listing(fw)
        same = assemble(text2) == fw
        console.rule(f"afuc: {entry.name} -> {len(fw)} bytes -> disassembly")
        shown = _compress_labels(text2.splitlines())
        console.print("\n".join(shown[:lines]), markup=False, highlight=False)
        if len(shown) > lines:
            console.print(f"... ({len(shown) - lines} more lines)", style="dim")
        table.add_row("Adreno afuc (a6xx SQE)", entry.name, f"{len(fw) // 4 - 1} words",
                      "[green]round trip: identical bytes[/]" if same else "[red]DIFFERENT[/]")
        ok = ok and same
        ok = _run_stream(console, table, entry.name, fw, lines) and ok
    return ok


def _run_stream(console: Console, table: Table, name: str, fw: bytes, lines: int) -> bool:
    """Feed DEMO_STREAM to the firmware on the emulator and show what it wrote."""
    emu = Emulator(fw)
    emu.feed(DEMO_STREAM)
    emu.run(max_steps=100_000)
    console.rule(f"afuc: {name} on the emulator")
    console.print(DEMO_STREAM.rstrip(), markup=False, highlight=False)
    shown = [e for e in emu.effects if e.kind in ("reg", "mem")
             or (e.kind == "ctrl" and 0x100 <= e.addr < 0x180)]
    for e in shown[:lines]:
        where = e.name or (f"0x{e.addr:x}" if e.kind != "mem" else f"[0x{e.addr:x}]")
        console.print(f"  {e.kind:<4} {where} = 0x{e.value:08x}", markup=False, highlight=False)
    mem = emu.read_mem(0x10000, 2)
    good = (emu.packets == 5 and mem == [0xDEADBEEF, 0xCAFEBABE]
            and emu.read_reg("gpu", "RB_RAS_MSAA_CNTL") == 0x22
            and emu.read_reg("control", 0x103) == 0x88)
    table.add_row("Adreno afuc emulator", name,
                  f"{emu.packets} packets, {emu.steps} instructions",
                  "[green]effects as expected[/]" if good else "[red]WRONG EFFECTS[/]")
    return good


def _compress_labels(lines: list[str], keep: int = 3) -> list[str]:
    """Shorten long runs of label-only lines (unused packets all point at one handler)."""
    out: list[str] = []
    run: list[str] = []
    for line in [*lines, ""]:
        if line.endswith(":") and " " not in line:
            run.append(line)
            continue
        out.extend(run[:keep])
        if len(run) > keep:
            out.append(f"; ... {len(run) - keep} more packet labels here")
        run = []
        out.append(line)
    return out[:-1]
