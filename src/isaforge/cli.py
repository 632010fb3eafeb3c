"""The ``isaforge`` command: ``isaforge <arch> <verb>`` plus ``isaforge demo``."""

from __future__ import annotations

import importlib
from importlib import resources

import click
from rich.console import Console
from rich.table import Table

from . import __version__
from .core.cli import guarded

ARCHES = ("afuc", "tensix", "theia")


@click.group()
@click.version_option(__version__, prog_name="isaforge")
def main() -> None:
    """Assemble, disassemble and emulate accelerator instruction sets."""


for _arch in ARCHES:
    # each architecture contributes its command group from isaforge/<arch>/cli.py
    try:
        _mod = importlib.import_module(f"isaforge.{_arch}.cli")
    except ModuleNotFoundError as _e:
        if _e.name not in (f"isaforge.{_arch}", f"isaforge.{_arch}.cli"):
            raise
        continue
    main.add_command(getattr(_mod, f"{_arch}_cli"))


@main.command()
@click.option("--lines", default=24, show_default=True, help="listing lines to show")
@guarded
def demo(lines: int) -> None:
    """Run the main job on bundled example programs and show the round trips."""
    from . import afuc

    console = Console()
    table = Table(title="isaforge demo: bundled example programs")
    for col in ("processor", "program", "words", "round trip"):
        table.add_column(col)
    src_dir = resources.files("isaforge") / "examples" / "afuc"
    for entry in sorted(src_dir.iterdir(), key=lambda p: p.name):
        if not entry.name.endswith(".asm"):
            continue
        text = entry.read_text()
        fw = afuc.assemble(text, filename=entry.name)
        text2 = afuc.listing(fw)
        fw2 = afuc.assemble(text2)
        same = fw2 == fw
        console.rule(f"afuc: {entry.name} -> {len(fw)} bytes -> disassembly")
        shown = _compress_labels(text2.splitlines())
        console.print("\n".join(shown[:lines]), markup=False, highlight=False)
        if len(shown) > lines:
            console.print(f"... ({len(shown) - lines} more lines)", style="dim")
        table.add_row("Adreno afuc (a6xx SQE)", entry.name, str(len(fw) // 4 - 1),
                      "[green]identical bytes[/]" if same else "[red]DIFFERENT[/]")
        if not same:
            raise SystemExit(1)
    _demo_front_ends(console, table)
    console.print(table)


def _demo_front_ends(console: Console, table: Table) -> None:
    """Tensix and THEIA: assemble, disassemble, reassemble the bundled programs."""
    from . import tensix, theia

    front_ends = [
        ("Tensix (Blackhole)", "tensix", 8, tensix.assemble, tensix.disassemble),
        ("THEIA VP", "theia", 16, theia.assemble, theia.disassemble),
    ]
    for label, folder, digits, assemble, disassemble in front_ends:
        for entry in sorted((resources.files("isaforge") / "examples" / folder).iterdir(),
                            key=lambda p: p.name):
            if entry.name.startswith("."):
                continue
            words = assemble(entry.read_text())
            lines = [ins.text for ins in disassemble(words)]
            same = assemble("\n".join(lines)) == words
            console.rule(f"{folder}: {entry.name} -> {len(words)} words -> disassembly")
            for w, line in zip(words, lines, strict=True):
                console.print(f"{w:0{digits}x}  {line}", markup=False,
                              highlight=False)
            table.add_row(label, entry.name, str(len(words)),
                          "[green]identical words[/]" if same else "[red]DIFFERENT[/]")
            if not same:
                raise SystemExit(1)


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


if __name__ == "__main__":
    main()
