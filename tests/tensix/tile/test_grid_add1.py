"""tt-metal's add1, from its real binaries, on grids of tiles: the input tiles split over the
grid (a tile may get none), each tile's reader, compute and writer kernels with its own runtime
arguments and DRAM buffers; the result is the one-tile model's, bit for bit, in any scheduling
order."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from isaforge.tensix.examples import add1_reference
from isaforge.tensix.grid_examples import Add1Grid, add1_grid

EDGES = np.array([0x0000, 0x8000, 0x0001, 0x807F, 0x7F80, 0xFF80, 0x7FC0, 0xFFC1, 0x3F80,
                  0xBF80, 0x7F7F, 0x4B80], dtype=np.uint16)


def inputs(n: int, seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).integers(0, 1 << 16, (n, 32, 32), dtype=np.uint16)
    x.reshape(-1)[:len(EDGES)] = EDGES
    return x


@pytest.mark.parametrize("cols,rows,n", [(2, 2, 5), (3, 1, 2)])
def test_add1_split_over_a_grid_is_bit_exact(cols: int, rows: int, n: int) -> None:
    x = inputs(n, cols * 10 + rows)
    dev = Add1Grid(cols, rows)
    y = dev.add1(x)
    assert y.shape == x.shape and y.dtype == np.uint16
    assert np.array_equal(y, add1_reference(x))
    counts = [c for _, c in dev.shares(n)]
    assert sum(counts) == n and (0 in counts) == (n < cols * rows)
    # each tile ran the compute kernel for its share: more tiles, more Tensix instructions
    busy = [t.cp.steps for t in dev.grid.tiles]
    for i in range(len(busy)):
        for j in range(len(busy)):
            assert (busy[i] > busy[j]) == (counts[i] > counts[j])
    assert dev.stats.tiles == n and dev.stats.noc["transactions"] == 2 * n


def test_a_second_run_on_the_same_grid_reuses_it() -> None:
    dev = Add1Grid(2, 1)
    a, b = inputs(3, 1), inputs(2, 2)
    assert np.array_equal(dev.add1(a), add1_reference(a))
    assert np.array_equal(dev.add1(b), add1_reference(b))
    assert np.array_equal(add1_grid(b, 1, 2), add1_reference(b))


def test_add1_on_a_grid_is_the_same_in_any_tile_order() -> None:
    x = inputs(3, 5)

    def signature(**order) -> tuple:  # noqa: ANN003
        dev = Add1Grid(2, 1, **order)
        y = dev.add1(x)
        g = dev.grid
        return (y.tobytes(), g.scheduler.cycles,
                tuple(hashlib.sha256(t.l1.data.tobytes()).hexdigest() for t in g.tiles),
                tuple(c.instructions for t in g.tiles for c in t.cores.values()))
    base = signature()
    assert signature(order="reverse") == base
    assert signature(order=3) == base


def test_cli_add1_on_a_grid(tmp_path) -> None:  # noqa: ANN001 - pytest's tmp_path
    from click.testing import CliRunner

    from isaforge.cli import main
    x = inputs(3, 9)
    np.save(tmp_path / "in.npy", x)
    r = CliRunner().invoke(main, ["tensix", "example", "add1", "--input",
                                  str(tmp_path / "in.npy"), "--output",
                                  str(tmp_path / "out.npy"), "--grid", "1x2"])
    assert r.exit_code == 0, r.output
    assert np.array_equal(np.load(tmp_path / "out.npy"), add1_reference(x))
    r = CliRunner().invoke(main, ["tensix", "example", "add1", "--input",
                                  str(tmp_path / "in.npy"), "--output",
                                  str(tmp_path / "out.npy"), "--grid", "1x15"])
    assert r.exit_code == 1 and "does not fit" in r.output and "Traceback" not in r.output
