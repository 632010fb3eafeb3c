"""The ``isaforge`` command: ``isaforge <arch> <verb>`` plus ``isaforge demo``."""

from __future__ import annotations

import importlib

import click
from rich.console import Console
from rich.table import Table

from . import __version__
from .core.cli import VoiceGroup, guarded

ARCHES = ("afuc", "tensix", "theia")


@click.group(cls=VoiceGroup)
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
    console = Console()
    table = Table(title="isaforge demo: bundled example programs")
    for col in ("processor", "program", "size", "result"):
        table.add_column(col)
    ok = True
    for arch in ARCHES:
        # each architecture shows its own examples from isaforge/<arch>/demo.py
        mod = importlib.import_module(f"isaforge.{arch}.demo")
        ok = mod.demo(console, table, lines) and ok
    console.print(table)
    if not ok:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
