"""Each MMIO window of the tile, accessed as a core would (through the core's address-space
callbacks), with the expected effects worked out by hand from the documented behaviour."""

from __future__ import annotations

import pytest

from isaforge import riscv, tensix
from isaforge.tensix.tile import Tile
from isaforge.tensix.tile.errors import NocError, UnmappedAccess
from isaforge.tensix.tile.memmap import memory_map
from isaforge.tensix.tile.mmio import Stall

MM = memory_map()
T = MM.tensix


@pytest.fixture
def tile() -> Tile:
    return Tile()


def rd(tile: Tile, core: str, addr: int, size: int = 4) -> int:
    c = tile.cores[core]
    w = tile.window_at(addr)
    assert w is not None, f"no window at {addr:#x}"
    return tile.mmio_read(c, w, addr, size)


def wr(tile: Tile, core: str, addr: int, value: int, size: int = 4) -> None:
    c = tile.cores[core]
    w = tile.window_at(addr)
    assert w is not None, f"no window at {addr:#x}"
    tile.mmio_write(c, w, addr, size, value)


def word(text: str) -> int:
    return tensix.assemble(text)[0]


# -- instruction push -----------------------------------------------------------------------------

def test_trisc_push_goes_to_its_own_thread_before_the_mop_expander(tile: Tile) -> None:
    setc = word("TTI_SETC16(5, 4)")
    wr(tile, "trisc1", T("INSTRN_BUF_BASE"), setc)
    assert tile.cp.threads[1].program == [setc]
    assert not tile.tensix_idle(1) and tile.tensix_idle(0)
    tile.cp.run(max_steps=10)
    assert tile.cp.thread_config.regs[1, 5] == 4


def test_brisc_pushes_to_any_thread(tile: Tile) -> None:
    setc = word("TTI_SETC16(7, 9)")
    wr(tile, "brisc", T("INSTRN_BUF_BASE") + 2 * T("INSTRN_BUF_STRIDE"), setc)
    assert tile.cp.threads[2].program == [setc] and tile.tensix_idle(0)
    tile.cp.run(max_steps=10)
    assert tile.cp.thread_config.regs[2, 7] == 9
    # its pushes bypass the MOP expander, which one queue per thread cannot model
    with pytest.raises(UnmappedAccess, match="MOP"):
        wr(tile, "brisc", T("INSTRN_BUF_BASE"), word("TTI_MOP(1, 0, 0)"))


def test_push_refusals(tile: Tile) -> None:
    with pytest.raises(UnmappedAccess, match="ncrisc.*not mapped"):
        wr(tile, "ncrisc", T("INSTRN_BUF_BASE"), 0)
    with pytest.raises(UnmappedAccess, match="hangs"):
        wr(tile, "trisc0", T("INSTRN_BUF_BASE") + T("INSTRN_BUF_STRIDE"), 0)
    with pytest.raises(UnmappedAccess, match="reads are not modelled"):
        rd(tile, "trisc0", T("INSTRN_BUF_BASE"))


def test_ttinsn_is_a_push_of_its_tensix_word(tile: Tile) -> None:
    setc = word("TTI_SETC16(3, 2)")
    code = riscv.assemble(f".ttinsn {setc:#x}\nsw a0, 0(a1)\n", address=0x8000)
    assert int.from_bytes(code[:4], "little") == ((setc << 2) | (setc >> 30)) & 0xFFFFFFFF
    tile.l1.write(0x8000, code)
    core = tile.cores["trisc2"]
    core.leave_reset(0x8000)
    core.hart.reg_write("a0", setc)
    core.hart.reg_write("a1", T("INSTRN_BUF_BASE"))
    assert core.run(2) == 2
    assert tile.cp.threads[2].program == [setc, setc]


# -- MOP configuration, GPRs, configuration -------------------------------------------------------

def test_mop_config_words_per_thread(tile: Tile) -> None:
    base = T("TENSIX_MOP_CFG_BASE")
    wr(tile, "trisc0", base + 4 * 8, 0xDEADBEEF)
    wr(tile, "trisc2", base, 3)
    assert tile.cp.threads[0].mop.cfg[8] == 0xDEADBEEF
    assert tile.cp.threads[2].mop.cfg[0] == 3 and tile.cp.threads[1].mop.cfg[0] == 0
    with pytest.raises(UnmappedAccess, match="brisc"):
        wr(tile, "brisc", base, 1)


def test_gprs_per_thread_with_byte_enables(tile: Tile) -> None:
    base = T("REGFILE_BASE")
    wr(tile, "trisc1", base + 4 * 10, 0x11223344)
    assert tile.cp.gpr.get(1, 10) == 0x11223344 and tile.cp.gpr.get(0, 10) == 0
    wr(tile, "trisc1", base + 4 * 10 + 2, 0xAB, size=1)
    assert tile.cp.gpr.get(1, 10) == 0x11AB3344
    assert rd(tile, "trisc1", base + 4 * 10 + 2, size=2) == 0x11AB
    # BRISC sees the three threads' GPRs one after the other
    assert rd(tile, "brisc", base + 4 * (64 + 10)) == 0x11AB3344
    with pytest.raises(UnmappedAccess, match="ncrisc"):
        rd(tile, "ncrisc", base)


def test_configuration_two_banks(tile: Tile) -> None:
    base = T("TENSIX_CFG_BASE")
    bank = MM.cfg("CFG_STATE_SIZE") * 4
    wr(tile, "trisc0", base + 4 * 3, 0x12345678)
    wr(tile, "brisc", base + 4 * (bank + 3), 0x9)
    assert tile.cp.config.words[0, 3] == 0x12345678 and tile.cp.config.words[1, 3] == 0x9
    assert rd(tile, "trisc2", base + 4 * 3) == 0x12345678
    with pytest.raises(UnmappedAccess, match="ncrisc"):
        rd(tile, "ncrisc", base)
    with pytest.raises(UnmappedAccess, match="beyond the two banks"):
        rd(tile, "brisc", base + 4 * 2 * bank)


# -- PC buffers, TTSync, semaphores ---------------------------------------------------------------

def test_semaphores_read_post_and_get(tile: Tile) -> None:
    sem = T("PC_BUF_BASE") + 4 * MM.llk("PC_BUF_SEMAPHORE_BASE_WORD")
    tile.cp.sync.seminit(1 << 3, 14, 15)
    assert rd(tile, "trisc0", sem + 12) == 14
    wr(tile, "trisc1", sem + 12, 0)        # bit 0 clear: SEMPOST
    wr(tile, "trisc1", sem + 12, 0)        # saturates at 15
    assert int(tile.cp.semaphores.value[3]) == 15
    wr(tile, "trisc2", sem + 12, 1)        # bit 0 set: SEMGET
    assert rd(tile, "trisc2", sem + 12) == 14


def test_ttsync_waits_for_the_thread(tile: Tile) -> None:
    sync = T("PC_BUF_BASE") + 4 * MM.llk("PC_BUF_TENSIX_SYNC_WORD")
    assert rd(tile, "trisc0", sync) == 0          # idle: completes at once
    tile.cp.push(0, [word("TTI_NOP")])
    with pytest.raises(Stall) as e:
        rd(tile, "trisc0", sync)
    assert "Tensix thread 0" in e.value.reason and not e.value.ready()
    tile.cp.run(max_steps=10)
    assert e.value.ready()


def test_pc_buffer_fifo_from_brisc(tile: Tile) -> None:
    wr(tile, "brisc", T("PC1_BUF_BASE"), 0x1234)
    assert rd(tile, "trisc1", T("PC_BUF_BASE")) == 0x1234
    with pytest.raises(Stall, match="empty"):
        rd(tile, "trisc1", T("PC_BUF_BASE"))
    # TRISC1 now waits on an empty FIFO and its thread is idle: BRISC's read completes
    assert rd(tile, "brisc", T("PC1_BUF_BASE")) == 0
    with pytest.raises(Stall, match="TRISC2"):
        rd(tile, "brisc", T("PC2_BUF_BASE"))


# -- mailboxes ------------------------------------------------------------------------------------

def test_mailboxes_between_cores(tile: Tile) -> None:
    mb = T("TENSIX_MAILBOX0_BASE")
    step = T("TENSIX_MAILBOX1_BASE") - mb
    wr(tile, "trisc0", mb + 3 * step, 11)      # TRISC0 -> TRISC2
    wr(tile, "trisc0", mb + 3 * step, 12)
    assert rd(tile, "trisc2", mb + step + 4) == 1  # TRISC2 asks: anything from TRISC0?
    assert rd(tile, "trisc2", mb + step) == 11
    assert rd(tile, "trisc2", mb + step) == 12
    with pytest.raises(Stall, match="empty"):
        rd(tile, "trisc2", mb + step)
    for v in range(4):                          # four words in flight from one writer
        wr(tile, "brisc", mb + 2 * step, v)
    with pytest.raises(Stall, match="full"):
        wr(tile, "brisc", mb + 3 * step, 9)
    with pytest.raises(UnmappedAccess, match="ncrisc"):
        rd(tile, "ncrisc", mb)


# -- Dst ------------------------------------------------------------------------------------------

def test_dst_window_32_and_16_bit_elements(tile: Tile) -> None:
    base = MM.llk("RISCV_DEST_START_ADDR")
    cfg = tile.cp.config
    cfg.set("RISC_DEST_ACCESS_CTRL_SEC1_fmt", 0)          # FP32
    cfg.set("RISC_DEST_ACCESS_CTRL_SEC1_no_swizzle", 1)
    wr(tile, "trisc1", base + 4 * (16 * 5 + 3), 0x3F800000)
    assert int(tile.cp.dst.read32(5)[0, 3]) == 0x3F800000
    assert rd(tile, "trisc1", base + 4 * (16 * 5 + 3)) == 0x3F800000
    cfg.set("RISC_DEST_ACCESS_CTRL_SEC2_fmt", 3)          # FP16B (BF16)
    cfg.set("RISC_DEST_ACCESS_CTRL_SEC2_no_swizzle", 1)
    wr(tile, "trisc2", base + 2 * (16 * 7 + 1), 0x4040, size=2)
    assert int(tile.cp.dst.read16(7)[0, 1]) == 0x4040
    cfg.set("RISC_DEST_ACCESS_CTRL_SEC0_no_swizzle", 0)
    with pytest.raises(UnmappedAccess, match="no_swizzle=0"):
        rd(tile, "trisc0", base)


# -- debug registers: soft reset, reset PCs, wall clock -------------------------------------------

def test_soft_reset_reads_back_and_starts_cores_at_their_reset_pc(tile: Tile) -> None:
    reg = T("RISCV_DEBUG_REG_SOFT_RESET_0")
    everyone = sum(MM.core(c).reset_bit for c in tile.cores)
    assert rd(tile, "brisc", reg) == everyone
    assert all(c.state == "reset" for c in tile.cores.values())
    wr(tile, "brisc", T("RISCV_DEBUG_REG_TRISC1_RESET_PC"), 0x70E0)
    wr(tile, "brisc", T("RISCV_DEBUG_REG_TRISC_RESET_PC_OVERRIDE"), 0b010)
    wr(tile, "brisc", reg, everyone & ~MM.core("trisc1").reset_bit)
    assert tile.cores["trisc1"].state == "running"
    assert tile.cores["trisc1"].hart.pc == 0x70E0
    assert tile.cores["trisc0"].state == "reset"
    assert rd(tile, "trisc1", T("RISCV_DEBUG_REG_TRISC1_RESET_PC")) == 0x70E0


def test_leaving_reset_without_the_override_is_an_error(tile: Tile) -> None:
    from isaforge.tensix.tile.errors import TileError
    reg = T("RISCV_DEBUG_REG_SOFT_RESET_0")
    with pytest.raises(TileError, match="override"):
        wr(tile, "brisc", reg, rd(tile, "brisc", reg) & ~MM.core("ncrisc").reset_bit)


def test_wall_clock_latches_the_high_half(tile: Tile) -> None:
    tile.scheduler.cycles = (5 << 32) | 0x100
    assert rd(tile, "trisc0", T("RISCV_DEBUG_REG_WALL_CLOCK_L")) == 0x100
    tile.scheduler.cycles = (6 << 32) | 0x100
    assert rd(tile, "trisc0", T("RISCV_DEBUG_REG_WALL_CLOCK_H")) == 5   # latched
    assert rd(tile, "trisc0", T("RISCV_DEBUG_REG_WALL_CLOCK_L") + 4) == 6  # live


def test_unmodelled_debug_register_is_named(tile: Tile) -> None:
    with pytest.raises(UnmappedAccess, match=r"read of 0xffb120a0: .*offset 0xa0"):
        rd(tile, "brisc", T("RISCV_DEBUG_REG_DBG_INSTRN_BUF_CTRL0"))


# -- TDMA, NOC, streams ---------------------------------------------------------------------------

def test_tdma_clock_gating_is_storage(tile: Tile) -> None:
    wr(tile, "brisc", T("RISCV_TDMA_REG_CLK_GATE_EN"), 0x3F)
    assert rd(tile, "brisc", T("RISCV_TDMA_REG_CLK_GATE_EN")) == 0x3F
    with pytest.raises(UnmappedAccess, match="TDMA"):
        wr(tile, "brisc", T("RISCV_TDMA_REG_XMOV_SRC_ADDR"), 1)


def test_noc_registers(tile: Tile) -> None:
    n = MM.noc
    inst = n("NOC_INSTANCE_OFFSET")
    x, y = tile.noc_virtual_xy
    logical = n("NOC_CFG_BASE") + 4 * n("NOC_ID_LOGICAL")
    assert rd(tile, "brisc", logical) == (y << 6) | x
    assert rd(tile, "brisc", logical + inst) == (y << 6) | x   # same on both NOCs
    sx, sy = tile.msgs.const("noc_size_x"), tile.msgs.const("noc_size_y")
    assert rd(tile, "ncrisc", n("NOC_NODE_ID") + inst) == ((sy - 1 - y) << 6) | (sx - 1 - x)
    niu = n("NOC_CFG_BASE") + 4 * n("NIU_CFG_0")
    assert rd(tile, "brisc", niu) == 1 << n("NIU_CFG_0_NOC_ID_TRANSLATE_EN")
    wr(tile, "brisc", niu, rd(tile, "brisc", niu) | 1)
    assert rd(tile, "brisc", niu) & 1
    buf2 = 2 * n("NOC_CMD_BUF_OFFSET")
    wr(tile, "brisc", n("NOC_TARG_ADDR_LO") + buf2, 0x1000)
    assert rd(tile, "brisc", n("NOC_TARG_ADDR_LO") + buf2) == 0x1000
    assert rd(tile, "brisc", n("NOC_TARG_ADDR_LO")) == 0
    assert rd(tile, "brisc", n("NOC_CMD_CTRL") + buf2) == 0          # ready
    assert rd(tile, "brisc", n("NOC_STATUS_BASE") + 4 * n("NIU_MST_RD_RESP_RECEIVED")) == 0
    # a read from a coordinate where nothing is attached: the issuing core is named
    with pytest.raises(NocError, match=r"brisc pc .*no NOC endpoint at \(0,0\)"):
        wr(tile, "brisc", n("NOC_CMD_CTRL") + buf2, 1)


def test_stream_registers_as_cb_counters(tile: Tile) -> None:
    s = MM.stream
    def addr(stream: int, reg: str) -> int:
        return (s("NOC_OVERLAY_START_ADDR") + stream * s("NOC_STREAM_REG_SPACE_SIZE")
                + 4 * s(reg))
    received = addr(5, "STREAM_REMOTE_DEST_BUF_SIZE_REG_INDEX")
    wr(tile, "ncrisc", received, 7)
    assert rd(tile, "trisc0", received) == 7
    assert tile.streams.get(5, "STREAM_REMOTE_DEST_BUF_SIZE") == 7
    assert rd(tile, "trisc0", addr(5, "STREAM_REMOTE_DEST_BUF_START_REG_INDEX")) == 0
    with pytest.raises(UnmappedAccess, match="stream 5 register"):
        rd(tile, "brisc", addr(5, "STREAM_CURR_PHASE_REG_INDEX"))


# -- the mailbox area of L1 -----------------------------------------------------------------------

def test_mailbox_area_is_l1(tile: Tile) -> None:
    a = tile.msgs.addr("go_messages[0].signal")
    wr(tile, "brisc", a, 0x80, size=1)
    assert tile.l1.data[a] == 0x80
    assert rd(tile, "ncrisc", a - 3) == 0x80000000
    assert tile.describe(a) == "mailboxes.go_messages[0].signal"
    assert tile.describe(tile.msgs.addr("subordinate_sync.map[2]")) == \
        "mailboxes.subordinate_sync.trisc1"
