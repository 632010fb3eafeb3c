"""``isaforge tensix example ...``: tt-metal's programming examples on the tile model (a thin
layer over :mod:`isaforge.tensix.examples`)."""

from __future__ import annotations

import json
import sys

import click
import numpy as np

from ..core.cli import guarded
from ..core.errors import EmulationError


@click.group("example")
def example_cli() -> None:
    """Run tt-metal's programming examples from their real binaries on a Blackhole tile."""


def _load_u16(path: str, what: str) -> np.ndarray:
    try:
        arr = np.load(path, allow_pickle=False)
    except OSError as e:
        raise EmulationError(f"{path}: cannot read: {e.strerror or e}") from None
    except (ValueError, EOFError) as e:
        raise EmulationError(f"{path}: not a numpy .npy file ({e})") from None
    if arr.dtype.kind == "V" and arr.dtype.itemsize == 2:  # an ml_dtypes bfloat16 array
        arr = arr.view(np.uint16)
    if arr.dtype != np.uint16:
        raise EmulationError(f"{path}: {what} must be uint16 BF16 bits, not {arr.dtype}")
    return arr


@example_cli.command("add1")
@click.option("--input", "input_path", required=True, type=click.Path(dir_okay=False),
              help="IN.npy: uint16 BF16 bits, shape (N, 32, 32), N >= 1")
@click.option("--output", "output_path", required=True, type=click.Path(dir_okay=False),
              help="OUT.npy: the result, same shape and dtype")
@click.option("--stats", is_flag=True, help="print what the run did (JSON) to stderr")
@click.option("--grid", "grid", metavar="RxC", default="1x1", show_default=True,
              help="split the tiles over a grid of R rows and C columns of worker tiles")
@guarded
def add1_cmd(input_path: str, output_path: str, stats: bool, grid: str) -> None:
    """tt-metal's add1_sfpu_single_file: x + 1 on every BF16 element, computed by the real
    firmware and kernels (reader, SFPU compute, writer) on one tile with DRAM (or on every
    tile of a grid, each taking its share of the input tiles)."""
    from .examples import Add1Device, check_tiles
    from .grid_examples import Add1Grid
    from .tile.grid import parse_grid

    cols, rows = parse_grid(grid)
    tiles = check_tiles(_load_u16(input_path, "the input"))
    dev = Add1Device() if (cols, rows) == (1, 1) else Add1Grid(cols, rows)
    out = dev.add1(tiles)
    try:
        np.save(output_path, out)
    except OSError as e:
        raise EmulationError(f"{output_path}: cannot write: {e.strerror or e}") from None
    if stats and dev.stats is not None:
        s = dev.stats
        sys.stderr.write(json.dumps({"tiles": s.tiles, "riscv_instructions": s.riscv_instructions,
                                     "tensix_instructions": s.tensix_instructions,
                                     "seconds": round(s.seconds, 4), "noc": s.noc}) + "\n")


FIDELITIES = ("lofi", "hifi2", "hifi3", "hifi4")  # .matmul.FIDELITY (imported when run)


@example_cli.command("matmul")
@click.option("--a", "a_path", required=True, type=click.Path(dir_okay=False),
              help="A: uint16 BF16 bits, shape (M*32, K*32)")
@click.option("--b", "b_path", required=True, type=click.Path(dir_okay=False),
              help="B: uint16 BF16 bits, shape (K*32, N*32)")
@click.option("--output", required=True, type=click.Path(dir_okay=False),
              help="C = A x B: uint16 BF16 bits, shape (M*32, N*32)")
@click.option("--fidelity", type=click.Choice(FIDELITIES), default="hifi4",
              show_default=True, help="Matrix Unit fidelity phases (1 for lofi .. 4 for hifi4)")
@click.option("--grid", default="1x1", show_default=True, metavar="RxC",
              help="worker tiles (rows x columns) sharing the output tiles")
@click.option("--processes", type=click.IntRange(min=1), default=None,
              help="processes running the grid's tiles (the same result; default: two for "
                   "a large matmul on a grid when a core is free, else one)")
@guarded
def matmul_cmd(a_path: str, b_path: str, output: str, fidelity: str, grid: str,
               processes: int | None) -> None:
    """C = A x B on Blackhole worker tiles: isaforge's own reader (NCRISC), compute
    (TRISC0-2: unpack, the 16-MVMUL replay, FP32 Dst, BF16 pack) and writer (BRISC) kernels,
    run under the firmware with A, B and C in DRAM."""
    from .matmul import matmul
    from .tile.grid import parse_grid

    cols, rows = parse_grid(grid)
    c, stats = matmul(_load_u16(a_path, "A"), _load_u16(b_path, "B"), fidelity, (rows, cols),
                      processes=processes)
    try:
        np.save(output, c, allow_pickle=False)
    except OSError as e:
        raise EmulationError(f"{output}: cannot write: {e.strerror or e}") from None
    procs = f" ({stats.processes} processes)" if stats.processes > 1 else ""
    click.echo(f"matmul: {stats.tiles} output tiles on {rows}x{cols} worker tile(s){procs} in "
               f"{stats.seconds:.2f} s ({stats.riscv_instructions} RISC-V, "
               f"{stats.tensix_instructions} Tensix instructions)", err=True)



__all__ = ["example_cli"]
