"""``isaforge tensix example matmul``: a thin layer over :func:`.matmul.matmul`."""

from __future__ import annotations

import click
import numpy as np

from ..core.cli import guarded
from .tile.errors import TileError
from .tile.grid import parse_grid

FIDELITIES = ("lofi", "hifi2", "hifi3", "hifi4")  # .matmul.FIDELITY (imported when run)


def _load(path: str, what: str) -> np.ndarray:
    try:
        arr = np.load(path, allow_pickle=False)
    except OSError as e:
        raise TileError(f"{path}: cannot read: {e.strerror or e}") from None
    except (ValueError, EOFError) as e:
        raise TileError(f"{path}: not a numpy .npy file ({e})") from None
    if arr.dtype != np.uint16:
        raise TileError(f"{path}: {what} must hold BF16 bits as uint16, not {arr.dtype}")
    return arr


@click.command("matmul")
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
@guarded
def matmul_cmd(a_path: str, b_path: str, output: str, fidelity: str, grid: str) -> None:
    """C = A x B on Blackhole worker tiles: isaforge's own reader (NCRISC), compute
    (TRISC0-2: unpack, the 16-MVMUL replay, FP32 Dst, BF16 pack) and writer (BRISC) kernels,
    run under the firmware with A, B and C in DRAM."""
    from .matmul import matmul

    cols, rows = parse_grid(grid)
    c, stats = matmul(_load(a_path, "A"), _load(b_path, "B"), fidelity, (rows, cols))
    try:
        np.save(output, c, allow_pickle=False)
    except OSError as e:
        raise TileError(f"{output}: cannot write: {e.strerror or e}") from None
    click.echo(f"matmul: {stats.tiles} output tiles on {rows}x{cols} worker tile(s) in "
               f"{stats.seconds:.2f} s ({stats.riscv_instructions} RISC-V, "
               f"{stats.tensix_instructions} Tensix instructions)", err=True)


__all__ = ["matmul_cmd"]
