"""``isaforge demo`` for theia: assemble the bundled programs, disassemble, reassemble."""

from __future__ import annotations

from importlib import resources

from rich.console import Console
from rich.table import Table

from .asm import assemble
from .disasm import disassemble


def demo(console: Console, table: Table, lines: int) -> bool:
    """Show each bundled theia example; add a row per example; False if any round trip fails."""
    ok = True
    for entry in sorted((resources.files("isaforge") / "examples" / "theia").iterdir(),
                        key=lambda p: p.name):
        if entry.name.startswith(".") or not entry.is_file():
            continue
        words = assemble(entry.read_text())
        texts = [ins.text for ins in disassemble(words)]
        same = assemble("\n".join(texts)) == words
        console.rule(f"theia: {entry.name} -> {len(words)} words -> disassembly")
        for w, line in list(zip(words, texts, strict=True))[:lines]:
            console.print(f"{w:016x}  {line}", markup=False, highlight=False)
        table.add_row("THEIA VP", entry.name, f"{len(words)} words",
                      "[green]round trip: identical words[/]" if same else "[red]DIFFERENT[/]")
        ok = ok and same
    return ok
