"""Tile-to-tile NOC traffic on a grid, driven by RISC-V code as the dataflow API issues it:
reads from DRAM, writes to other tiles' L1, a multicast to a rectangle of tiles, atomic
increments of a semaphore on another tile, barriers on the NIU counters; the same program under
different scheduling orders gives the same bytes and counts. Wrong coordinates name the tile,
core, pc and symbol that issued the transaction."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from isaforge import riscv
from isaforge.tensix.tile.errors import NocError
from isaforge.tensix.tile.grid import Grid
from isaforge.tensix.tile.loader import Symbols
from isaforge.tensix.tile.memmap import memory_map
from isaforge.tensix.tile.soc import noc_xy, soc

MM = memory_map()
n = MM.noc
CODE = 0x20000
DRAM_SRC, LOADED, OWN, GATHER, RING, SEM, BCAST, FLAG, SUM, RACE, ONE = (
    0x1000, 0x38000, 0x30000, 0x31000, 0x32000, 0x33000, 0x34000, 0x35000, 0x36000, 0x37000,
    0x35100)
BLOCK = 64
# NOC_CTRL bits (noc_parameters.h)
CMD_AT, CMD_WR, CMD_RESP_MARKED, CMD_BRCST, CMD_SRC_INCLUDE = 1, 2, 1 << 4, 1 << 5, 1 << 17
VC_STATIC = 1 << 7


def reg(name: str, buf: int) -> int:
    return n(name) + buf * n("NOC_CMD_BUF_OFFSET")


def status(name: str) -> int:
    return n("NOC_STATUS_BASE") + 4 * n(name)


def store(addr: int, value: int) -> str:
    return f"    li t0, {addr:#x}\n    li t1, {value & 0xFFFFFFFF:#x}\n    sw t1, 0(t0)\n"


def issue(buf: int, **regs: int) -> str:
    return "".join(store(reg(k, buf), v) for k, v in regs.items()) + store(
        reg("NOC_CMD_CTRL", buf), 1)


def wait_status(name: str, value: int, label: str) -> str:
    return (f"    li t0, {status(name):#x}\n    li t1, {value}\n{label}:\n    lw t2, 0(t0)\n"
            f"    bne t2, t1, {label}\n")


def spin_l1(addr: int, value: int, label: str) -> str:
    return (f"    li t0, {addr:#x}\n    li t1, {value}\n{label}:\n    lw t2, 0(t0)\n"
            f"    bne t2, t1, {label}\n")


def noc_read(xy: tuple[int, int], src: int, dst: int, size: int) -> str:
    return issue(1, NOC_CTRL=VC_STATIC, NOC_TARG_ADDR_LO=src, NOC_TARG_ADDR_MID=0,
                 NOC_TARG_ADDR_HI=noc_xy(*xy), NOC_RET_ADDR_LO=dst, NOC_AT_LEN_BE=size)


def noc_write(src: int, xy: tuple[int, int], dst: int, size: int, posted: bool = False,
              rect: tuple[tuple[int, int], tuple[int, int]] | None = None,
              include_src: bool = False) -> str:
    ctrl = CMD_WR | VC_STATIC | (0 if posted else CMD_RESP_MARKED)
    hi = noc_xy(*xy)
    if rect is not None:
        (x0, y0), (x1, y1) = rect
        hi = (x0 << 12) | (y0 << 18) | x1 | (y1 << 6)
        ctrl |= CMD_BRCST | (CMD_SRC_INCLUDE if include_src else 0)
    return issue(0, NOC_CTRL=ctrl, NOC_TARG_ADDR_LO=src, NOC_RET_ADDR_LO=dst,
                 NOC_RET_ADDR_MID=0, NOC_RET_ADDR_HI=hi, NOC_AT_LEN_BE=size)


def noc_atomic_inc(xy: tuple[int, int], addr: int, incr: int) -> str:
    at_len = (1 << 12) | (31 << 2) | ((addr >> 2) & 3)  # INCR_GET, no wrap, word of the line
    return issue(2, NOC_CTRL=CMD_AT | VC_STATIC | CMD_RESP_MARKED, NOC_TARG_ADDR_LO=addr,
                 NOC_TARG_ADDR_MID=0, NOC_TARG_ADDR_HI=noc_xy(*xy), NOC_AT_LEN_BE=at_len,
                 NOC_AT_DATA=incr)


def program(i: int, coords: list[tuple[int, int]]) -> str:
    """Tile ``i``'s BRISC program (see the module docstring of the test below)."""
    count = len(coords)
    me, coordinator, nxt = coords[i], coords[0], coords[(i + 1) % count]
    bank = i % 8
    text = noc_read(soc().dram_bank_xy(bank, 0), DRAM_SRC + BLOCK * i, LOADED, BLOCK)
    text += wait_status("NIU_MST_RD_RESP_RECEIVED", 1, "rd")
    text += f"""    li a0, {LOADED:#x}
    li a1, {OWN:#x}
    li a2, {BLOCK // 4}
add:
    lw t0, 0(a0)
    addi t0, t0, {i}
    sw t0, 0(a1)
    addi a0, a0, 4
    addi a1, a1, 4
    addi a2, a2, -1
    bnez a2, add
"""
    text += noc_write(OWN, coordinator, GATHER + BLOCK * i, BLOCK)
    text += noc_write(OWN, nxt, RING, BLOCK)
    text += noc_write(OWN, coordinator, RACE, 4, posted=True)
    text += wait_status("NIU_MST_WR_ACK_RECEIVED", 2, "ack")
    text += noc_atomic_inc(coordinator, SEM, 1)
    text += wait_status("NIU_MST_ATOMIC_RESP_RECEIVED", 1, "at")
    if i == 0:
        rect = (coords[-1], coords[0])  # either corner first
        text += spin_l1(SEM, count, "all_in")
        text += noc_write(GATHER, me, BCAST, BLOCK * count, rect=rect, include_src=True)
        text += store(ONE, 1)
        text += noc_write(ONE, me, FLAG, 4, rect=rect)
        text += wait_status("NIU_MST_WR_ACK_RECEIVED", 2 + 2 * count - 1, "mc")
    else:
        text += spin_l1(FLAG, 1, "flag")
        text += f"""    li a0, {BCAST:#x}
    li a2, {BLOCK * count // 4}
    li a3, 0
sum:
    lw t0, 0(a0)
    add a3, a3, t0
    addi a0, a0, 4
    addi a2, a2, -1
    bnez a2, sum
    li t0, {SUM:#x}
    sw a3, 0(t0)
"""
    return text + "    ebreak\n"


def start(grid: Grid, i: int, text: str) -> None:
    tile = grid.tiles[i]
    code = riscv.assemble(text, address=CODE)
    tile.l1.write(CODE, code)
    tile.symbols["brisc"] = Symbols([(CODE, len(code), "grid_test")])
    tile.cores["brisc"].leave_reset(CODE)


def dram_words(count: int) -> np.ndarray:
    return (np.arange(count * BLOCK // 4, dtype=np.uint32) * 0x01010101 + 7)


def run(cols: int, rows: int, **order) -> Grid:  # noqa: ANN003
    grid = Grid(cols, rows, **order)
    coords = [t.noc_virtual_xy for t in grid.tiles]
    words = dram_words(len(coords))
    for i in range(len(coords)):
        grid.dram[i % 8].noc_write(DRAM_SRC + BLOCK * i,
                                   words[i * 16:(i + 1) * 16].tobytes())
    for i in range(len(coords)):
        start(grid, i, program(i, coords))
    grid.run(max_steps=5_000_000)
    return grid


def signature(g: Grid) -> tuple:
    return (g.scheduler.cycles, g.noc.delivered,
            tuple(hashlib.sha256(t.l1.data.tobytes()).hexdigest() for t in g.tiles),
            tuple((c.instructions, c.hart.pc, c.state) for t in g.tiles
                  for c in t.cores.values()))


def words_at(g: Grid, i: int, addr: int, count: int) -> np.ndarray:
    return np.frombuffer(g.tiles[i].l1.read(addr, 4 * count), dtype=np.uint32)


@pytest.mark.parametrize("cols,rows", [(2, 1), (3, 2)])
def test_tiles_gather_ring_multicast_and_count_through_the_noc(cols: int, rows: int) -> None:
    g = run(cols, rows)
    count = cols * rows
    words = dram_words(count)
    blocks = [(words[i * 16:(i + 1) * 16] + i).astype(np.uint32) for i in range(count)]
    gathered = np.concatenate(blocks)
    assert all(t.cores["brisc"].state == "halted" for t in g.tiles)
    assert np.array_equal(words_at(g, 0, GATHER, 16 * count), gathered)
    assert words_at(g, 0, SEM, 1)[0] == count  # every tile's atomic increment arrived
    assert words_at(g, 0, RACE, 1)[0] in {b[0] for b in blocks}
    for i in range(count):
        assert np.array_equal(words_at(g, i, RING, 16), blocks[(i - 1) % count])
        assert np.array_equal(words_at(g, i, BCAST, 16 * count), gathered)
        if i:
            assert words_at(g, i, FLAG, 1)[0] == 1
            assert words_at(g, i, SUM, 1)[0] == int(gathered.sum()) & 0xFFFFFFFF
    assert words_at(g, 0, FLAG, 1)[0] == 0  # the flag's multicast left its sender out


def test_the_noc_program_gives_the_same_bytes_and_counts_in_any_order() -> None:
    base = signature(run(3, 2))
    for order in ({"order": "reverse"}, {"order": 1}, {"order": 7},
                  {"order": 3, "shuffle_cores": True}):
        assert signature(run(3, 2, **order)) == base, order


def test_a_write_to_a_coordinate_outside_the_grid_names_the_issuer() -> None:
    g = Grid(2, 1)
    start(g, 1, noc_write(OWN, (5, 2), 0x30000, 4) + "    ebreak\n")
    with pytest.raises(NocError, match=r"tile \(1, 0\) brisc pc 0x[0-9a-f]+ <grid_test\+0x"
                                       r"[0-9a-f]+>: sw t1,0\(t0\): NOC transaction: "
                                       r"no NOC endpoint at \(5,2\)"):
        g.run(max_steps=10_000)


def test_a_multicast_beyond_the_grid_is_refused() -> None:
    g = Grid(2, 1)
    start(g, 0, noc_write(OWN, (1, 2), 0x30000, 4, rect=((1, 2), (2, 3))) + "    ebreak\n")
    with pytest.raises(NocError, match=r"tile \(0, 0\) brisc .*reaches \(1,3\), which is not "
                                       r"a worker tile of this grid"):
        g.run(max_steps=10_000)


def test_reads_from_another_tiles_l1_and_a_multicast_atomic() -> None:
    """Each tile reads 64 bytes of the other tile's L1 (the data is there before the run);
    tile 0 then increments a counter on every tile of the rectangle with one multicast
    atomic (itself included) and waits for its response."""
    g = Grid(2, 1)
    coords = [t.noc_virtual_xy for t in g.tiles]
    for i, tile in enumerate(g.tiles):
        tile.l1.write(OWN, bytes(range(i * 64, i * 64 + 64)))
        tile.l1.write(SEM, (100 * (i + 1)).to_bytes(4, "little"))
    for i in range(2):
        text = noc_read(coords[1 - i], OWN, LOADED, BLOCK)
        text += wait_status("NIU_MST_RD_RESP_RECEIVED", 1, "rd")
        if i == 0:
            (x0, y0), (x1, y1) = coords
            at_len = (1 << 12) | (31 << 2) | ((SEM >> 2) & 3)
            text += issue(2, NOC_CTRL=CMD_AT | VC_STATIC | CMD_RESP_MARKED | CMD_BRCST
                          | CMD_SRC_INCLUDE, NOC_TARG_ADDR_LO=SEM, NOC_TARG_ADDR_MID=0,
                          NOC_TARG_ADDR_HI=(x0 << 12) | (y0 << 18) | x1 | (y1 << 6),
                          NOC_AT_LEN_BE=at_len, NOC_AT_DATA=5)
            text += wait_status("NIU_MST_ATOMIC_RESP_RECEIVED", 1, "at")
        start(g, i, text + "    ebreak\n")
    g.run(max_steps=100_000)
    assert all(t.cores["brisc"].state == "halted" for t in g.tiles)
    assert g.tiles[0].l1.read(LOADED, 64) == bytes(range(64, 128))
    assert g.tiles[1].l1.read(LOADED, 64) == bytes(range(64))
    assert [t.l1.read_int(SEM, 4) for t in g.tiles] == [105, 205]
