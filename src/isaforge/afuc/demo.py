"""``isaforge demo`` for afuc: assemble the bundled firmware, list it, reassemble the listing."""

from __future__ import annotations

from importlib import resources

from rich.console import Console
from rich.table import Table

from .asm import assemble
from .disasm import listing


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
    return ok


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
