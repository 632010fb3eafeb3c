"""The ``isaforge`` command: ``isaforge <arch> <verb>`` plus ``isaforge demo``."""

from __future__ import annotations

import importlib

import click

from . import __version__
from .core.cli import LazyGroup, guarded

ARCHES = ("afuc", "tensix", "theia")


@click.group(cls=LazyGroup, lazy={
    # each architecture contributes its command group from isaforge/<arch>/cli.py, imported
    # when it is used
    **{arch: f"isaforge.{arch}.cli:{arch}_cli" for arch in ARCHES},
    "batch": "isaforge.batch.cli:batch_cmd",
})
@click.version_option(__version__, prog_name="isaforge")
def main() -> None:
    """Assemble, disassemble and emulate accelerator instruction sets."""


@main.command()
@click.option("--lines", default=24, show_default=True, help="listing lines to show")
@guarded
def demo(lines: int) -> None:
    """Run the main job on bundled example programs and show the round trips."""
    from rich.console import Console
    from rich.table import Table

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
