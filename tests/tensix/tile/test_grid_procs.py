"""A grid whose tiles run in several processes (Grid.processes) gives the one-process grid's
bytes, counts, cycles and rounds, in any tile order; a core's error in a worker comes back as
the same error; a worker that fails is reported; no worker outlives the block."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np
import pytest

from isaforge import riscv
from isaforge.tensix.grid_examples import Add1Grid
from isaforge.tensix.matmul import matmul, matmul_reference
from isaforge.tensix.tile.errors import NocError, TileError
from isaforge.tensix.tile.grid import Grid
from isaforge.tensix.tile.layout import to_bf16_bits
from isaforge.tensix.tile.soc import soc
from tests.tensix.tile.test_grid_noc import (
    BLOCK,
    CODE,
    DRAM_SRC,
    LOADED,
    OWN,
    dram_words,
    noc_read,
    noc_write,
    program,
    start,
)


def children() -> set[int]:
    out: set[int] = set()
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        out |= {int(p) for p in (task / "children").read_text().split()}
    return out


@pytest.fixture(autouse=True)
def no_leftover_processes():  # noqa: ANN201 - a fixture
    before = children()
    yield
    assert children() <= before


def tile_state(t) -> tuple:  # noqa: ANN001 - a Tile
    return (hashlib.sha256(t.l1.data.tobytes()).hexdigest(), t.cp.steps,
            tuple((c.instructions, c.hart.pc, c.state) for c in t.cores.values()))


def noc_program(processes: int, cols: int = 3, rows: int = 2, **order) -> tuple:  # noqa: ANN003
    """test_grid_noc's program (DRAM reads, writes to other tiles, a multicast, atomics on
    another tile, barriers) run in ``processes`` processes: everything it left."""
    g = Grid(cols, rows, **order)
    coords = [t.noc_virtual_xy for t in g.tiles]
    words = dram_words(len(coords))
    for i in range(len(coords)):
        g.dram[i % 8].noc_write(DRAM_SRC + BLOCK * i, words[i * 16:(i + 1) * 16].tobytes())
    for i in range(len(coords)):
        start(g, i, program(i, coords))
    with g.processes(processes) as used:
        r = g.run(max_steps=5_000_000)
        per_tile = g.per_tile(tile_state)
    assert used == min(processes, cols * rows)
    dram = tuple(hashlib.sha256(b"".join(bytes(p) for _, p in sorted(bank.pages.items())))
                 .hexdigest() for bank in g.dram)
    return (r, g.scheduler.cycles, g.scheduler.rounds, g.noc.delivered, tuple(per_tile), dram,
            tuple(hashlib.sha256(t.l1.data.tobytes()).hexdigest() for t in g.tiles))


def test_the_noc_program_is_the_same_in_one_two_and_three_processes_and_any_order() -> None:
    base = noc_program(1)
    assert noc_program(2) == base
    assert noc_program(3) == base
    for order in ({"order": "reverse"}, {"order": 5, "shuffle_cores": True}):
        assert noc_program(2, **order) == noc_program(1, **order) == base, order


def add1_run(processes: int, order: str | int = "fixed") -> tuple:
    x = np.random.default_rng(4).integers(0, 1 << 16, (5, 32, 32), dtype=np.uint16)
    dev = Add1Grid(2, 2, order=order, boot=False)
    g = dev.grid
    with g.processes(processes):
        dev.boot()
        y = dev.add1(x)
        per_tile = g.per_tile(tile_state)
        report = g.report()
    st = dev.stats
    return (y.tobytes(), st.riscv_instructions, st.tensix_instructions, st.noc,
            g.scheduler.cycles, g.scheduler.rounds, tuple(per_tile), report)


def test_add1_booted_and_run_in_two_processes_is_the_one_process_run() -> None:
    assert add1_run(2) == add1_run(1)
    assert add1_run(2, order=3) == add1_run(1)


def test_matmul_in_two_processes_gives_the_same_result_and_counts() -> None:
    rng = np.random.default_rng(9)
    a = to_bf16_bits(rng.standard_normal((3 * 32, 2 * 32)))
    b = to_bf16_bits(rng.standard_normal((2 * 32, 3 * 32)))
    c1, s1 = matmul(a, b, grid=(2, 2), processes=1)
    c2, s2 = matmul(a, b, grid=(2, 2), processes=2)
    assert (s1.processes, s2.processes) == (1, 2)
    assert np.array_equal(c1, c2)
    assert (s1.riscv_instructions, s1.tensix_instructions, s1.per_worker) == \
        (s2.riscv_instructions, s2.tensix_instructions, s2.per_worker)
    assert np.array_equal(c2, matmul_reference(a, b))
    # 9 output tiles: 2, 2, 2 and 3, the last two tiles in the worker process
    assert [w["tiles"] for w in s2.per_worker] == [2, 2, 2, 3]
    assert s2.per_worker[3]["riscv_instructions"] > s2.per_worker[2]["riscv_instructions"]


def test_a_noc_error_of_a_workers_tile_is_the_one_process_error() -> None:
    msgs = []
    for procs in (1, 2):
        g = Grid(2, 1)
        start(g, 1, noc_write(OWN, (5, 2), 0x30000, 4) + "    ebreak\n")
        with pytest.raises(NocError) as e, g.processes(procs):
            g.run(max_steps=10_000)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]
    assert "tile (1, 0) brisc pc 0x" in msgs[1] and "<grid_test+0x" in msgs[1]


def test_a_cores_error_in_a_worker_comes_back_with_tile_core_and_pc() -> None:
    msgs = []
    for procs in (1, 2):
        g = Grid(2, 1)
        code = riscv.assemble("    nop\n    li t0, 0x7ff00000\n    lw t1, 0(t0)\n    ebreak\n",
                              address=CODE)
        g.tiles[1].l1.write(CODE, code)
        g.tiles[1].cores["ncrisc"].leave_reset(CODE)
        with pytest.raises(TileError) as e, g.processes(procs):
            g.run(max_steps=10_000)
        msgs.append((type(e.value), str(e.value)))
    assert msgs[0] == msgs[1]
    assert "0x7ff00000" in msgs[1][1] and "ncrisc" in msgs[1][1]


def test_a_worker_failing_outside_the_grid_is_reported_and_ends() -> None:
    g = Grid(2, 1)
    main = os.getpid()
    with pytest.raises(TileError, match="a process of the grid failed: RuntimeError: boom"), \
            g.processes(2):
        if os.getpid() != main:
            raise RuntimeError("boom")
        g.run(max_steps=10_000)


def test_a_grid_in_processes_needs_a_per_tile_condition_and_cannot_run_after() -> None:
    g = Grid(2, 1)
    with pytest.raises(TileError, match="per-tile condition"), g.processes(2):
        g.run(max_steps=10_000, until=lambda: True)
    with pytest.raises(TileError, match="cannot run again"):
        g.run(max_steps=10)


def test_cli_matmul_in_two_processes(tmp_path) -> None:  # noqa: ANN001 - pytest's tmp_path
    import subprocess
    import sys

    rng = np.random.default_rng(5)
    a = to_bf16_bits(rng.standard_normal((2 * 32, 32)))
    b = to_bf16_bits(rng.standard_normal((32, 2 * 32)))
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    src = Path(__file__).resolve().parents[3] / "src"
    r = subprocess.run([sys.executable, "-m", "isaforge", "tensix", "example", "matmul",
                        "--a", str(tmp_path / "a.npy"), "--b", str(tmp_path / "b.npy"),
                        "--output", str(tmp_path / "c.npy"), "--grid", "2x1",
                        "--processes", "2"], capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PYTHONPATH": str(src)})
    assert r.returncode == 0, r.stderr
    assert "4 output tiles on 2x1 worker tile(s) (2 processes)" in r.stderr
    assert np.array_equal(np.load(tmp_path / "c.npy"), matmul_reference(a, b))


def test_a_read_then_a_write_of_the_same_bytes_in_one_round_across_processes() -> None:
    """Tile 1 (run by the worker) reads DRAM into its L1 and, in the same round, writes those
    bytes to tile 0 (run by rank 0): rank 0 must carry out the read too, or tile 0 gets the
    bytes as they were before it."""
    results = []
    for procs in (1, 2):
        g = Grid(2, 1)
        g.dram[1].noc_write(DRAM_SRC, bytes(range(64)))
        g.tiles[1].l1.write(OWN, bytes([0xEE]) * 64)
        text = (noc_read(soc().dram_bank_xy(1, 0), DRAM_SRC, OWN, BLOCK)
                + noc_write(OWN, g.tiles[0].noc_virtual_xy, LOADED, BLOCK) + "    ebreak\n")
        start(g, 1, text)
        with g.processes(procs):
            g.run(max_steps=10_000)
        results.append((g.tiles[0].l1.read(LOADED, 64), g.scheduler.rounds))
    assert results[0] == results[1]
    assert results[1][0] == bytes(range(64))


def test_a_worker_that_dies_is_reported() -> None:
    g = Grid(2, 1)
    main = os.getpid()
    with pytest.raises(TileError, match="a process of the grid ended unexpectedly"), \
            g.processes(2):
        if os.getpid() != main:
            os._exit(3)  # as if killed
        g.run(max_steps=10_000)
