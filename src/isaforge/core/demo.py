"""What ``isaforge demo`` does for every instruction set with word-sized encodings: assemble
each bundled example, disassemble the words, reassemble the text, and show the result."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from importlib import resources
from typing import Any

from rich.console import Console
from rich.table import Table


def show_word_round_trips(console: Console, table: Table, lines: int, *, folder: str,
                          label: str, digits: int, assemble: Callable[[str], Sequence[int]],
                          disassemble: Callable[[Sequence[int]], Iterable[Any]]) -> bool:
    """For each file in ``isaforge/examples/<folder>``: print up to ``lines`` words with their
    disassembly, add a table row, and return False if any reassembly gives other words."""
    ok = True
    for entry in sorted((resources.files("isaforge") / "examples" / folder).iterdir(),
                        key=lambda p: p.name):
        if entry.name.startswith(".") or not entry.is_file():
            continue
        words = assemble(entry.read_text())
        texts = [ins.text for ins in disassemble(words)]
        same = assemble("\n".join(texts)) == words
        console.rule(f"{folder}: {entry.name} -> {len(words)} words -> disassembly")
        for w, line in list(zip(words, texts, strict=True))[:lines]:
            console.print(f"{w:0{digits}x}  {line}", markup=False, highlight=False)
        table.add_row(label, entry.name, f"{len(words)} words",
                      "[green]round trip: identical words[/]" if same else "[red]DIFFERENT[/]")
        ok = ok and same
    return ok
