"""One program launched on every tile of a grid booted with tt-metal's firmware: the same kernel
everywhere, per-tile runtime arguments, the firmware calling the kernel and reporting done; the
kernels talk over the NOC (writes to other tiles, an atomic semaphore on one tile), with the
same results in any scheduling order, and a bad coordinate in a tile's arguments is reported
with the tile, core, pc and the kernel's symbol."""

from __future__ import annotations

import hashlib

import pytest

from isaforge import riscv
from isaforge.tensix.tile.errors import NocError, TileError
from isaforge.tensix.tile.grid import Grid
from isaforge.tensix.tile.loader import load_firmware_dir
from isaforge.tensix.tile.program import Kernel
from isaforge.tensix.tile.soc import noc_xy
from tests.refdata import refdata
from tests.tensix.tile.test_grid_noc import (
    CMD_AT,
    CMD_RESP_MARKED,
    CMD_WR,
    VC_STATIC,
    issue,
    reg,
    status,
)

FW = ("tensix", "firmware", "bh-10503743232459396191")
VALUE, SLOTS, SEM = 0x40000, 0x40100, 0x40200
#: the kernel config area: just above the firmware's reserved L1 (MEM_MAP_END), 16-aligned
CONFIG_BASE = 0xB000


def put(addr: int, register: str) -> str:
    return f"    li t0, {addr:#x}\n    sw {register}, 0(t0)\n"


def kernel(fw) -> Kernel:  # noqa: ANN001 - the loaded firmware
    """BRISC kernel, runtime args (value, slot, destination noc_xy, semaphore noc_xy): store
    the value; write it to the destination's slot (non-posted); increment the semaphore
    tile's counter (non-posted atomic); wait for the write's ack and the atomic's response
    (the NIU counters, read before issuing); return to the firmware."""
    rta = fw["brisc"].symbols.addr("rta_l1_base")
    ack, at = status("NIU_MST_WR_ACK_RECEIVED"), status("NIU_MST_ATOMIC_RESP_RECEIVED")
    text = f"""kernel_main:
    li t0, {rta:#x}
    lw a0, 0(t0)
    lw a1, 0(a0)
    lw a2, 4(a0)
    lw a3, 8(a0)
    lw a4, 12(a0)
    li t0, {VALUE:#x}
    sw a1, 0(t0)
    li t0, {ack:#x}
    lw a5, 0(t0)
    addi a5, a5, 1
    li t0, {at:#x}
    lw a6, 0(t0)
    addi a6, a6, 1
    slli a2, a2, 2
    li t1, {SLOTS:#x}
    add a2, a2, t1
"""
    text += put(reg("NOC_RET_ADDR_LO", 0), "a2") + put(reg("NOC_RET_ADDR_HI", 0), "a3")
    text += issue(0, NOC_CTRL=CMD_WR | CMD_RESP_MARKED | VC_STATIC, NOC_TARG_ADDR_LO=VALUE,
                  NOC_RET_ADDR_MID=0, NOC_AT_LEN_BE=4)
    text += put(reg("NOC_TARG_ADDR_HI", 2), "a4")
    text += issue(2, NOC_CTRL=CMD_AT | CMD_RESP_MARKED | VC_STATIC, NOC_TARG_ADDR_LO=SEM,
                  NOC_TARG_ADDR_MID=0, NOC_AT_LEN_BE=(1 << 12) | (31 << 2) | ((SEM >> 2) & 3),
                  NOC_AT_DATA=1)
    text += f"""    li t0, {ack:#x}
wait_ack:
    lw t1, 0(t0)
    bne t1, a5, wait_ack
    li t0, {at:#x}
wait_at:
    lw t1, 0(t0)
    bne t1, a6, wait_at
    ret
"""
    code = riscv.assemble(text, address=0)
    return Kernel("brisc", code, 0, [(0, "kernel_main")], name="grid_kernel")


def run(cols: int, rows: int, bad: tuple[int, int] | None = None, **order) -> Grid:  # noqa: ANN003
    fw = load_firmware_dir(refdata(*FW))
    g = Grid(cols, rows, **order)
    g.boot(fw)
    count = cols * rows

    def args(x: int, y: int) -> dict[str, list[int]]:
        i = y * cols + x
        dst = g.layout.worker_xy(*divmod_xy((i + 1) % count, cols))
        if bad is not None and (x, y) == bad:
            dst = (8, 5)  # the router column: nothing answers there
        return {"brisc": [0x1000 + i, i, noc_xy(*dst), noc_xy(*g.layout.worker_xy(0, 0))]}
    g.launch([kernel(fw)], [], CONFIG_BASE, runtime_args=args)
    g.run_program(max_steps=2_000_000)
    return g


def divmod_xy(i: int, cols: int) -> tuple[int, int]:
    return i % cols, i // cols


def test_one_program_runs_on_every_tile_with_its_own_arguments() -> None:
    g = run(3, 2)
    count = 6
    assert g.all_done()
    for i, tile in enumerate(g.tiles):
        assert tile.l1.read_int(VALUE, 4) == 0x1000 + i
        prev = (i - 1) % count  # the tile before in the ring wrote its value here
        assert tile.l1.read_int(SLOTS + 4 * prev, 4) == 0x1000 + prev
        others = [tile.l1.read_int(SLOTS + 4 * k, 4) for k in range(count) if k != prev]
        assert others == [0] * (count - 1)
    assert g.tiles[0].l1.read_int(SEM, 4) == count
    assert all(t.l1.read_int(SEM, 4) == 0 for t in g.tiles[1:])


def signature(g: Grid) -> tuple:
    return (g.scheduler.cycles,
            tuple(hashlib.sha256(t.l1.data.tobytes()).hexdigest() for t in g.tiles),
            tuple((c.instructions, c.hart.pc, c.state) for t in g.tiles
                  for c in t.cores.values()))


def outputs(g: Grid) -> tuple:
    return tuple(t.l1.read(VALUE, 0x204) for t in g.tiles)


def test_the_program_gives_the_same_bytes_and_counts_in_any_tile_order() -> None:
    g = run(2, 2)
    base, out = signature(g), outputs(g)
    for order in ({"order": "reverse"}, {"order": 5}):
        assert signature(run(2, 2, **order)) == base, order
    # shuffling the cores inside each tile changes the firmware's own timing (its cores
    # share L1), not what the program computes
    assert outputs(run(2, 2, order=9, shuffle_cores=True)) == out


def test_a_bad_coordinate_in_one_tiles_arguments_names_tile_core_pc_and_kernel() -> None:
    with pytest.raises(NocError, match=r"tile \(1, 0\) brisc pc 0x[0-9a-f]+ "
                                       r"<grid_kernel:kernel_main\+0x[0-9a-f]+>: "
                                       r"sw t1,0\(t0\): .*no NOC endpoint at \(8,5\)"):
        run(2, 1, bad=(1, 0))


def test_the_launch_says_this_firmware_has_64_circular_buffers_none_remote() -> None:
    g = Grid(1, 1)
    h = g.host(0, 0)
    assert h.num_circular_buffers() == 64  # local_cb_mask is 64 bits in this dev_msgs.h
    g.launch([Kernel("brisc", b"\x67\x80\x00\x00", 0)], [], CONFIG_BASE)
    assert h.read_mailbox("launch[0].kernel_config.min_remote_cb_start_index") == 64


def test_arguments_for_a_core_without_a_kernel_are_refused() -> None:
    fw = load_firmware_dir(refdata(*FW))
    g = Grid(1, 1)
    with pytest.raises(TileError, match="ncrisc, which run no kernel"):
        g.launch([kernel(fw)], [], CONFIG_BASE, runtime_args={(0, 0): {"ncrisc": [1]}})


def test_a_tiles_own_host_runs_the_whole_grid() -> None:
    """Host.run_program on one tile of a grid still carries the NOC transactions (the tile
    runs its grid): a kernel waiting for its write's ack finishes."""
    fw = load_firmware_dir(refdata(*FW))
    g = Grid(2, 1)
    g.boot(fw)
    g.launch([kernel(fw)], [], CONFIG_BASE,
             runtime_args=lambda x, y: {"brisc": [7 + x, x, noc_xy(2, 2), noc_xy(1, 2)]})
    g.host(0, 0).run_program(max_steps=1_000_000)
    assert g.tile(1, 0).l1.read_int(SLOTS, 4) == 7
    assert g.tile(0, 0).l1.read_int(SEM, 4) == 1
