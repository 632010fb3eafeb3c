"""``isaforge tensix boot``: boot tt-metal firmware on a tile and report (a thin layer over
:func:`isaforge.tensix.tile.boot`)."""

from __future__ import annotations

import json
import sys

import click

from ...core.cli import guarded
from .boot import boot
from .grid import GridBootResult, boot_grid, parse_grid
from .loader import load_firmware_dir
from .memmap import CORE_NAMES
from .tile import Tile


def _parse_cores(text: str | None) -> list[str]:
    if not text:
        return []
    names = [n.strip().lower() for n in text.split(",") if n.strip()]
    if "all" in names:
        return [*CORE_NAMES, "tensix"]
    bad = [n for n in names if n not in (*CORE_NAMES, "tensix")]
    if bad:
        raise click.BadParameter(f"unknown core {bad[0]!r} (one of {', '.join(CORE_NAMES)}, "
                                 f"tensix, or all)", param_hint="--trace")
    return names


@click.command("boot")
@click.argument("firmware_dir", type=click.Path(file_okay=False))
@click.option("--json", "as_json", is_flag=True, help="print one JSON object")
@click.option("--trace", "trace", metavar="CORES",
              help="print every instruction these cores execute (comma-separated: brisc, "
                   "ncrisc, trisc0, trisc1, trisc2, tensix (the coprocessor's threads), or "
                   "all); to stderr with --json")
@click.option("--max-steps", type=click.IntRange(min=1), default=2_000_000, show_default=True,
              help="RISC-V instructions (all cores) allowed per phase")
@click.option("--grid", "grid", metavar="RxC", default="1x1", show_default=True,
              help="boot every tile of a grid of R rows and C columns of worker tiles (one "
                   "scheduler, shared NOC and DRAM)")
@guarded
def boot_cmd(firmware_dir: str, as_json: bool, trace: str | None, max_steps: int,
             grid: str) -> None:
    """Boot the five Blackhole firmware ELFs of FIRMWARE_DIR (brisc.elf ... trisc2.elf, or
    tt-metal's <core>/<core>.elf layout) as tt-metal's host does, then send a go message whose
    launch message enables no kernel. Exit status 0 only if both the init handshake and the go
    handshake completed (on every tile, with --grid)."""
    cores = _parse_cores(trace)
    cols, rows = parse_grid(grid)
    images = load_firmware_dir(firmware_dir)
    if (cols, rows) != (1, 1):
        if cores:
            raise click.UsageError("--trace is for one tile (without --grid)")
        gres = boot_grid(images, cols, rows, max_steps=max_steps)
        click.echo(json.dumps(gres.as_json()) if as_json else _human_grid(gres))
        sys.exit(0 if gres.ok else 1)
    tile = Tile()
    if cores:
        out = sys.stderr if as_json else sys.stdout

        def line(core: str, pc: int, symbol: str | None, text: str) -> None:
            at = f"<{symbol}>" if symbol else ""
            out.write(f"{core:<7} {pc:08x} {at:<28} {text}\n")
        tile.trace(cores, line)
    result = boot(images, max_steps=max_steps, tile=tile)
    if as_json:
        click.echo(json.dumps(result.as_json()))
    else:
        click.echo(_human(result))
    sys.exit(0 if result.ok else 1)


def _core_lines(cores: dict) -> list[str]:
    lines = [f"{'core':<7} {'instructions':>12}  {'pc':>10}  {'symbol':<28} state"]
    for name, c in cores.items():
        state = c["state"] + (f": {c['waiting_for']}" if c.get("waiting_for") else "")
        lines.append(f"{name:<7} {c['instructions']:>12}  {c['pc']:#10x}  "
                     f"{(c['symbol'] or '?'):<28} {state}")
    return lines


def _human_grid(result: GridBootResult) -> str:
    lines = [f"init handshake: {'done' if result.init_done else 'NOT done'} on every tile",
             f"go handshake: {'done' if result.go_done else 'NOT done'} on every tile"]
    if result.error:
        lines.append(f"stopped: {result.error}")
    for xy, cores in result.tiles.items():
        lines.append(f"tile ({xy.replace(',', ', ')}):")
        lines.extend("  " + line for line in _core_lines(cores))
    lines.append(f"{result.instructions} RISC-V instructions, {result.tensix_instructions} "
                 f"Tensix instructions, {result.cycles} cycles, {result.wall_seconds:.3f} s")
    return "\n".join(lines)


def _human(result) -> str:  # noqa: ANN001 - BootResult
    lines = []
    for sig in result.go_signals:
        lines.append(f"{sig['phase']} handshake: "
                     f"{'done' if sig['seen'] == 0 else 'NOT done'} (go signal "
                     f"{sig['sent']:#04x} -> {sig['seen']:#04x})")
    if result.error:
        lines.append(f"stopped: {result.error}")
    lines.extend(_core_lines(result.cores))
    lines.append(f"{result.instructions} RISC-V instructions, {result.tensix_instructions} "
                 f"Tensix instructions, {result.wall_seconds:.3f} s")
    return "\n".join(lines)


__all__ = ["boot_cmd"]
