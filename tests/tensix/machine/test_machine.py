"""Machine state and single-thread mechanisms of the Coprocessor: configuration (SETC16,
WRCFG, RDCFG, RMWCIB), ZEROACC, Src bank ownership, MOV* row counts and broadcasts,
TRNSPSRCB, ZEROSRC, SFPLOAD/SFPSTORE lane mapping, the MOP and replay expanders, the
semaphore table, mutexes, and "not implemented" errors."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from isaforge.tensix import Coprocessor, assemble, ops
from isaforge.tensix.machine.regfiles import SrcClient
from isaforge.tensix.machine.replay import ReplayExpander
from isaforge.tensix.machine.state import (
    Config,
    NotImplementedInstruction,
    Semaphores,
    ThreadConfig,
    UndefinedBehaviourError,
    config_fields,
    thread_config_fields,
)

MU, UNP = SrcClient.MATRIX_UNIT, SrcClient.UNPACKERS


def run(text: str, thread: int = 0, cp: Coprocessor | None = None,
        ub: str = "stop") -> Coprocessor:
    cp = cp or Coprocessor(ub=ub)
    cp.set_stream(thread, assemble(text))
    cp.run(max_steps=100_000)
    return cp


def executed_words(cp: Coprocessor, text: str | list[int], thread: int = 0) -> list[int]:
    seen: list[int] = []
    cp.hook_add("insn", lambda m, a, n, ev: seen.append(ev.insn.word))
    cp.set_stream(thread, assemble(text) if isinstance(text, str) else text)
    cp.run(max_steps=100_000)
    return seen


# ---- configuration ---------------------------------------------------------------------------


def test_state_is_sized_as_the_hardware() -> None:
    cp = Coprocessor()
    assert cp.thread_config.regs.shape == (3, ThreadConfig.N_REGS)
    assert cp.config.words.shape == (2, Config.N_WORDS) and cp.config.words.dtype == np.uint32
    assert cp.dst.bits.shape == (1024, 16) and cp.srca.cells.shape == (2, 64, 16)
    assert cp.sync.sem.value.shape == (8,) and cp.lreg.shape == (17, 32)
    assert cp.threads[0].mop.cfg.shape == (9,) and cp.threads[0].replay.buf.shape == (32,)
    # every named field of ttsim's table is reachable
    assert len(thread_config_fields()) == 223 and len(config_fields()) == 597


def test_setc16_and_named_thread_config_fields() -> None:
    cp = run("ttsetc16 7,3\nttsetc16 11,2", thread=2)
    assert cp.thread_config.get(2, "CLR_DVALID_SrcA_Disable") == 1
    assert cp.thread_config.get(2, "CLR_DVALID_SrcB_Disable") == 1
    assert cp.thread_config.get(2, "FIDELITY_BASE_Phase") == 2
    assert cp.thread_config.get(0, "FIDELITY_BASE_Phase") == 0  # per thread
    with pytest.raises(UndefinedBehaviourError, match="ThreadConfig register 200"):
        run("ttsetc16 200,1")


def test_wrcfg_rdcfg_rmwcib() -> None:
    cp = Coprocessor()
    cp.gpr.v[1, 4:8] = [1 << 29, 0x11, 0x22, 0x33]
    cp.gpr.v[1, 9] = 0xDEADBEEF
    run("ttwrcfg 4,0,1\nttwrcfg 5,1,9\nttrdcfg 20,1\nttrmwcib2 255,7,1\nttrdcfg 21,1",
        thread=1, cp=cp)
    assert cp.config.get("ALU_ACC_CTRL_Fp32_enabled") == 1
    assert cp.config.words[0, 8:12].tolist() == [0x20000000, 0x11, 0x22, 0x33]  # 128-bit
    assert cp.gpr.get(1, 20) == 1 << 29
    assert cp.gpr.get(1, 21) == (1 << 29) | (7 << 16)  # byte 2 replaced
    cp2 = run("ttrmwcib0 0x0F,0xAB,3", cp=Coprocessor())
    assert cp2.config.words[0, 3] == 0x0B  # only the masked bits


def test_config_bank_follows_cfg_state_id() -> None:
    cp = Coprocessor()
    cp.gpr.set(0, 1, 5)
    run("ttsetc16 0,1\nttwrcfg 1,0,6", cp=cp)
    assert cp.config.get("DEST_REGW_BASE_Base", 1) == 5
    assert cp.config.get("DEST_REGW_BASE_Base", 0) == 0


def test_config_index_out_of_range() -> None:
    with pytest.raises(UndefinedBehaviourError, match="Config word 300"):
        run("ttrdcfg 1,300")
    cp = run("ttrdcfg 1,300", ub="continue")
    assert cp.gpr.get(0, 1) == 0 and len(cp.ub_events) == 1


# ---- ZEROACC ---------------------------------------------------------------------------------


def _zeroacc(text: str, setup: str = "", fp32: bool = False) -> np.ndarray:
    cp = Coprocessor()
    cp.config.set("ALU_ACC_CTRL_Fp32_enabled", int(fp32))
    run(setup + "\n" + text, cp=cp)
    return np.flatnonzero(~cp.dst.valid)


def test_zeroacc_one_row_16_and_32_bit() -> None:
    # Row = Imm10 + DEST_TARGET_REG_CFG_MATH_Offset + RWC.Dst
    got = _zeroacc("TTI_ZEROACC(0, 0, 0, 0, 5)", "ttsetc16 1,16\nttsetrwc 0,0,2,0,0,4")
    assert got.tolist() == [23]
    # 32-bit Dst: DstRowValid[Adj32(Row)], Adj32(13) = (8 << 1) | 5
    assert _zeroacc("TTI_ZEROACC(0, 0, 0, 0, 13)", fp32=True).tolist() == [21]


def test_zeroacc_16_rows_both_modes_and_out_of_range_nop() -> None:
    assert _zeroacc("TTI_ZEROACC(1, 0, 0, 0, 3)").tolist() == list(range(48, 64))
    want32 = [5 * 32 + (i & 8) * 2 + (i & 7) for i in range(16)]
    assert _zeroacc("TTI_ZEROACC(1, 1, 0, 0, 5)").tolist() == want32
    assert _zeroacc("TTI_ZEROACC(1, 0, 0, 0, 64)").tolist() == []  # out of range: NOP
    assert _zeroacc("TTI_ZEROACC(1, 1, 0, 0, 32)").tolist() == []
    assert _zeroacc("TTI_ZEROACC(1, 0, 0, 0, 0x103)").tolist() == list(range(48, 64))  # & 0xFF


def test_zeroacc_half_and_all_and_no_addrmod() -> None:
    assert _zeroacc("TTI_ZEROACC(2, 0, 0, 0, 0)").tolist() == list(range(512))
    assert _zeroacc("TTI_ZEROACC(2, 0, 0, 0, 1)").tolist() == list(range(512, 1024))
    assert _zeroacc("TTI_ZEROACC(3, 0, 0, 0, 0)").tolist() == list(range(1024))
    cp = run("ttsetc16 28,8\nTTI_ZEROACC(2, 0, 0, 0, 0)\nTTI_ZEROACC(1, 0, 0, 0, 99)")
    assert cp.rwc.get(0, 4) == 8  # only the 16-row form applied AddrMod 0 (Dst += 8)


def test_zeroacc_revert_is_undefined() -> None:
    with pytest.raises(UndefinedBehaviourError, match="Revert"):
        run("TTI_ZEROACC(3, 0, 1, 0, 0)")


def test_invalid_rows_read_as_zero_by_mvmul_and_become_valid() -> None:
    cp = Coprocessor()
    cp.config.set("ALU_ACC_CTRL_Fp32_enabled", 1)
    cp.dst.write("fp32", np.full((8, 16), 1000.0, np.float32))
    cp.load_src("a", 0, np.eye(16, dtype=np.float32).repeat(4, 0)[:64], "bf16")
    cp.load_src("b", 0, np.full((64, 16), 0.5, np.float32), "bf16")
    run("TTI_ZEROACC(1, 1, 0, 0, 0)\nttmvmul 0,0,0,0", cp=cp)
    assert cp.dst.row_valid(np.arange(8), True).all()
    got = cp.dst.read("fp32", range(8))
    # SrcA rows 0..15 = 4 copies of rows of I16 stacked: row k is e_{k // 4}
    a = np.eye(16).repeat(4, 0)[:16]
    np.testing.assert_array_equal(got, np.full((8, 16), 0.5) @ a)


# ---- Src banks and ownership -----------------------------------------------------------------


def _banks(cp: Coprocessor) -> tuple:
    return tuple((s.matrix_bank, s.unpacker_bank, tuple(s.allowed_client))
                 for s in (cp.srca, cp.srcb))


def test_unpacr_nop_setdvalid_gives_bank_and_flips_unpacker() -> None:
    cp = Coprocessor()
    cp.thread_config.set(0, "SRCA_SET_Base", 2)
    cp.config.set("THCON_SEC0_REG2_Out_data_format", 5)
    run("TTI_UNPACR_NOP(0, 0, 0, 0, 0, 0, 0, 1, 3)", cp=cp)
    assert _banks(cp)[0] == (0, 1, (MU, UNP))
    assert int(cp.srca.unpacker_row[0]) == 32 and int(cp.srca.implied_fmt[0]) == 5
    run("TTI_UNPACR_NOP(1, 0, 0, 0, 0, 0, 0, 1, 3)", cp=cp)
    assert _banks(cp)[1] == (0, 1, (MU, UNP))


def test_setdvalid_is_reported_then_flips() -> None:
    with pytest.raises(UndefinedBehaviourError, match="SETDVALID"):
        run("ttsetdvalid 3")
    cp = run("ttsetdvalid 3", ub="continue")
    assert _banks(cp) == ((0, 1, (MU, UNP)), (0, 1, (MU, UNP)))


def test_cleardvalid_returns_bank_and_flips_unless_keep() -> None:
    cp = run("ttsetdvalid 3\nttsetdvalid 3\nttcleardvalid 1,0", ub="continue")
    assert _banks(cp)[0] == (1, 0, (UNP, MU)) and _banks(cp)[1] == (0, 0, (MU, MU))
    cp = run("ttsetdvalid 3\nttcleardvalid 2,2", ub="continue")  # KeepReadingSameSrc
    assert _banks(cp)[1] == (0, 1, (UNP, UNP))


def test_mvmul_flip_bits_and_clr_dvalid_disable() -> None:
    cp = Coprocessor()
    for b in (0, 1):
        cp.load_src("a", b, np.ones((64, 16), np.float32), "bf16")
        cp.load_src("b", b, np.ones((64, 16), np.float32), "bf16")
    run("TTI_MVMUL(1, 0, 0, 0)", cp=cp)
    assert _banks(cp)[0] == (1, 0, (UNP, MU)) and _banks(cp)[1] == (0, 0, (MU, MU))
    run("ttsetc16 7,2\nTTI_MVMUL(2, 0, 0, 0)", cp=cp)  # SrcB flip with CLR_DVALID_SrcB_Disable
    assert _banks(cp)[1] == (1, 0, (MU, MU))


def test_setrwc_clear_ab_vld_flips_banks() -> None:
    cp = Coprocessor()
    cp.load_src("a", 0, np.ones((64, 16), np.float32), "bf16")
    run("ttsetrwc 1,0,0,0,0,0", cp=cp)
    assert _banks(cp)[0] == (1, 0, (UNP, UNP))


def test_matrix_instructions_wait_for_their_banks() -> None:
    """MVMUL waits at the Wait Gate for both banks; nothing can give them: a deadlock that
    names the wait."""
    from isaforge.tensix.machine.state import DeadlockError

    with pytest.raises(DeadlockError, match="SrcA bank 0 to be given to the Matrix Unit"):
        run("ttmvmul 0,0,0,0")
    with pytest.raises(DeadlockError, match="SrcB bank 0"):
        run("tttrnspsrcb")


# ---- moves -----------------------------------------------------------------------------------

def _bf16(x: np.ndarray) -> np.ndarray:
    return x.astype(ml_dtypes.bfloat16).astype(np.float32)


def _mov_machine() -> tuple[Coprocessor, np.ndarray, np.ndarray]:
    cp = Coprocessor()
    a = _bf16(np.arange(1, 1025, dtype=np.float32).reshape(64, 16))
    b = _bf16(-np.arange(1, 1025, dtype=np.float32).reshape(64, 16))
    cp.load_src("a", 0, a, "bf16")
    cp.load_src("b", 0, b, "bf16")
    cp.dst.write("bf16", np.full((1024, 16), 7.0, np.float32))
    return cp, a, b


def test_movb2d_rows_and_broadcasts() -> None:
    cp, _, b = _mov_machine()
    run("TTI_MOVB2D(0, 5, 0, 0, 100)", cp=cp)  # one row
    np.testing.assert_array_equal(cp.dst.read("bf16", [99, 100, 101]).astype(np.float32),
                                  [np.full(16, 7.0), b[5], np.full(16, 7.0)])
    cp, _, b = _mov_machine()
    run("TTI_MOVB2D(0, 6, 0, 4, 202)", cp=cp)  # 4 rows: both rows aligned down to 4
    np.testing.assert_array_equal(cp.dst.read("bf16", range(200, 204)).astype(np.float32),
                                  b[4:8])
    cp, _, b = _mov_machine()
    run("TTI_MOVB2D(0, 9, 0, 2, 13)", cp=cp)  # one row broadcast to 8 (Dst aligned to 8)
    np.testing.assert_array_equal(cp.dst.read("bf16", range(8, 16)).astype(np.float32),
                                  np.tile(b[9], (8, 1)))
    cp, _, b = _mov_machine()
    run("TTI_MOVB2D(0, 3, 0, 1, 40)", cp=cp)  # column 0 broadcast
    np.testing.assert_array_equal(cp.dst.read("bf16", [40]).astype(np.float32)[0],
                                  np.full(16, b[3, 0]))


def test_mova2d_rows() -> None:
    cp, a, _ = _mov_machine()
    run("TTI_MOVA2D(0, 3, 0, 0, 17)", cp=cp)
    np.testing.assert_array_equal(cp.dst.read("bf16", [17]).astype(np.float32)[0], a[3])
    cp, a, _ = _mov_machine()
    run("TTI_MOVA2D(0, 9, 0, 2, 21)", cp=cp)  # 8 rows, aligned to 8
    np.testing.assert_array_equal(cp.dst.read("bf16", range(16, 24)).astype(np.float32), a[8:16])


def test_movd2a_movd2b_movb2a_rows() -> None:
    cp, a, b = _mov_machine()
    rows = _bf16(np.arange(64 * 16, dtype=np.float32).reshape(64, 16) / 8 + 0.5)
    cp.dst.write("bf16", rows, np.arange(64))
    run("TTI_MOVD2A(0, 10, 0, 0, 3)\nTTI_MOVD2B(0, 21, 0, 2, 6)", cp=cp)
    sa = cp.srca.dump(0, "bf16").astype(np.float32)
    sb = cp.srcb.dump(0, "bf16").astype(np.float32)
    np.testing.assert_array_equal(sa[10], rows[3])
    np.testing.assert_array_equal(sa[[9, 11]], a[[9, 11]])  # neighbours untouched
    np.testing.assert_array_equal(sb[20:24], rows[4:8])  # 4 rows, both aligned to 4
    run("TTI_MOVB2A(33, 0, 0, 2)\nTTI_MOVB2A(40, 0, 2, 45)", cp=cp)
    sa = cp.srca.dump(0, "bf16").astype(np.float32)
    np.testing.assert_array_equal(sa[33], b[2])
    np.testing.assert_array_equal(sa[40:44], b[44:48])


def test_move_rows_follow_rwcs_and_advance_them() -> None:
    cp, _, b = _mov_machine()
    run("ttsetc16 12,0x0100\nttsetc16 28,1\nttsetrwc 0,0,4,2,0,6\n"
        "TTI_MOVB2D(0, 0, 0, 0, 0)\nTTI_MOVB2D(0, 0, 0, 0, 0)", cp=cp)
    np.testing.assert_array_equal(cp.dst.read("bf16", [4, 5]).astype(np.float32), b[2:4])
    assert (cp.rwc.get(0, 2), cp.rwc.get(0, 4)) == (4, 6)


def test_trnspsrcb_transposes_rows_16_to_31_only() -> None:
    cp, _, b = _mov_machine()
    before = cp.srcb.cells[0].copy()
    run("tttrnspsrcb", cp=cp)
    after = cp.srcb.cells[0]
    np.testing.assert_array_equal(after[16:32], before[16:32].T)
    np.testing.assert_array_equal(after[:16], before[:16])
    np.testing.assert_array_equal(after[32:], before[32:])


def test_zerosrc_banks() -> None:
    cp, _, _ = _mov_machine()
    cp.load_src("a", 1, np.ones((64, 16), np.float32), "bf16")
    run("TTI_ZEROSRC(0, 0, 0, 1)", cp=cp)  # SrcA, the unpackers' bank (0)
    assert not cp.srca.cells[0].any() and cp.srca.cells[1].all()
    run("TTI_ZEROSRC(1, 0, 1, 3)", cp=cp)  # both banks, -inf pattern for SrcA, 0 for SrcB
    assert (cp.srca.cells == 0x7FFFF).all() and not cp.srcb.cells.any()


# ---- SFPLOAD / SFPSTORE ----------------------------------------------------------------------


@pytest.mark.parametrize("addr", [0, 2, 4, 6, 13, 130])
def test_sfpload_lane_row_column_mapping(addr: int) -> None:
    cp = Coprocessor()
    vals = np.arange(512 * 16, dtype=np.float32).reshape(512, 16)
    cp.dst.write("fp32", vals)
    run(f"TTI_SFPLOAD(3, 3, 0, {addr})", cp=cp)
    lanes = cp.lreg[3].view(np.float32)
    for lane in range(32):
        row = (addr & ~3) + lane // 8
        col = (lane & 7) * 2 + (1 if addr & 2 else 0)
        assert lanes[lane] == vals[row, col], lane


def test_sfpload_address_adds_rwc_and_offset_partial_addrmod() -> None:
    cp = Coprocessor()
    vals = np.arange(512 * 16, dtype=np.float32).reshape(512, 16)
    cp.dst.write("fp32", vals)
    run("ttsetc16 1,8\nttsetc16 28,0x2004\nttsetrwc 0,0,4,0,0,4\nTTI_SFPLOAD(0, 3, 0, 2)",
        cp=cp)
    assert cp.lreg[0].view(np.float32)[0] == vals[12, 1]  # 2 + 8 + 4 = 14 -> rows 12.., odd
    assert (cp.rwc.get(0, 4), cp.rwc.get(0, 6)) == (8, 0)  # Dst += 4, fidelity untouched


def test_sfpstore_is_the_inverse_of_sfpload() -> None:
    cp = Coprocessor()
    rng = np.random.default_rng(3)
    cp.lreg[5] = rng.standard_normal(32).astype(np.float32).view(np.uint32)
    run("TTI_SFPSTORE(5, 3, 0, 42)\nTTI_SFPLOAD(6, 3, 0, 42)", cp=cp)
    np.testing.assert_array_equal(cp.lreg[6], cp.lreg[5])
    got = cp.dst.read("fp32", range(40, 44))
    np.testing.assert_array_equal(got[1, 3], cp.lreg[5].view(np.float32)[9])  # lane 9
    assert (got[:, ::2] == 0).all()  # odd columns only (addr bit 1)


def test_sfpload_bf16_and_fp16_modes() -> None:
    cp = Coprocessor()
    cp.dst.write("bf16", np.full((4, 16), 1.5, np.float32))
    cp.dst.write("fp16", np.full((4, 16), -2.25, np.float32), np.arange(4, 8))
    run("TTI_SFPLOAD(0, 2, 0, 0)\nTTI_SFPLOAD(1, 1, 0, 4)", cp=cp)
    assert (cp.lreg[0].view(np.float32) == 1.5).all()
    assert (cp.lreg[1].view(np.float32) == -2.25).all()


def test_sfpload_of_invalid_row_is_undefined() -> None:
    with pytest.raises(UndefinedBehaviourError, match="SFPLOAD reads"):
        run("TTI_ZEROACC(3, 0, 0, 0, 0)\nTTI_SFPLOAD(0, 3, 0, 0)")


# ---- MOP and replay --------------------------------------------------------------------------

NOP = assemble("ttnop")[0]
W = [assemble(f"ttadddmareg 1,{i},{i},0")[0] for i in range(10)]  # distinguishable words


def test_mop_template0_mask_and_flags() -> None:
    cp = Coprocessor()
    cfg = [0, 3, W[1], W[2], W[3], W[4], W[5], W[6], W[7]]  # HasB and HasA123
    cp.threads[0].mop.cfg[:] = cfg
    # count1 = 2 -> 3 iterations; mask 0b010: iteration 1 takes the skip path
    seen = executed_words(cp, "ttmop 0,2,2")
    a = [W[2], W[3], W[4], W[5], W[1]]
    assert seen == a + [W[6], W[7]] + a
    cp = Coprocessor()
    cp.threads[0].mop.cfg[:] = [0, 0, W[1], W[2], 0, 0, 0, W[6], W[7]]  # no B, no A123
    seen = executed_words(cp, "ttmopcfg 1\nttmop 0,1,0")  # MOP_CFG: mask bit 16 -> high half
    assert seen == [W[2], W[2]]
    cp = Coprocessor()
    cp.threads[0].mop.cfg[:] = [0, 0, W[1], W[2], 0, 0, 0, W[6], W[7]]
    assert executed_words(cp, "ttmopcfg 1\nttmop 0,16,0") == [W[2]] * 16 + [W[6]]


def test_mop_template1_loops_and_last_overrides() -> None:
    cp = Coprocessor()
    cp.threads[0].mop.cfg[:] = [2, 2, W[1], W[2], W[3], W[4], NOP, W[6], W[7]]
    seen = executed_words(cp, "ttmop 1,0,0")
    assert seen == [W[1], W[4], W[7], W[2], W[3], W[1], W[4], W[6], W[2], W[3]]
    # LoopOp1 not a NOP: the inner loop alternates and runs twice as long
    cp = Coprocessor()
    cp.threads[0].mop.cfg[:] = [1, 2, NOP, NOP, NOP, W[4], W[5], W[6], W[7]]
    assert executed_words(cp, "ttmop 1,0,0") == [W[4], W[5], W[4], W[6]]


def test_a_repeated_mop_follows_its_config_and_mask() -> None:
    """The expander reuses a MOP's expansion only while its MopCfg words and MOP_CFG mask are
    the same: writes between two identical MOP words take effect."""
    cp = Coprocessor()
    cp.threads[0].mop.cfg[:] = [0, 0, W[1], W[2], 0, 0, 0, W[6], W[7]]
    assert executed_words(cp, "ttmop 0,1,0\nttmop 0,1,0") == [W[2]] * 4
    cp.threads[0].mop.cfg[3] = W[3]
    assert executed_words(cp, "ttmop 0,1,0") == [W[3]] * 2
    assert executed_words(cp, "ttmopcfg 1\nttmop 0,16,0") == [W[3]] * 16 + [W[6]]
    assert executed_words(cp, "ttmopcfg 0\nttmop 0,16,0") == [W[3]] * 17
    cp.threads[0].mop.cfg[:] = [2, 1, NOP, W[2], NOP, W[4], NOP, W[6], W[7]]
    assert executed_words(cp, "ttmop 1,0,0\nttmop 1,0,0") == [W[7], W[2], W[6], W[2]] * 2


def test_mop_template1_outer_one_quirk() -> None:
    """Documented hardware bug: OuterCount 1, NOP StartOp, InnerCount 0 and a non-NOP
    EndOp0 run the outer loop 129 times."""
    cp = Coprocessor()
    cp.threads[0].mop.cfg[:] = [1, 0, NOP, W[3], W[8], NOP, NOP, NOP, NOP]
    assert executed_words(cp, "ttmop 1,0,0") == [W[3], W[8]] * 129
    cp = Coprocessor()
    cp.threads[0].mop.cfg[:] = [2, 0, NOP, W[3], NOP, NOP, NOP, NOP, NOP]
    assert executed_words(cp, "ttmop 1,0,0") == [W[3]] * 2


def test_replay_load_execute_and_execute_while_loading() -> None:
    words = assemble("ttreplay 4,3,0,1") + W[1:4] + assemble("ttreplay 4,3,0,0\nttreplay 5,1,0,0")
    assert executed_words(Coprocessor(), words) == [W[1], W[2], W[3], W[2]]
    words = assemble("ttreplay 30,3,1,1") + W[1:4] + assemble("ttreplay 30,3,0,0")
    cp = Coprocessor()
    assert executed_words(cp, words) == [W[1], W[2], W[3]] * 2  # and it wraps 30, 31, 0
    assert cp.threads[0].replay.buf[[30, 31, 0]].tolist() == W[1:4]


def test_replay_count_zero_means_32_and_mop_can_emit_replay() -> None:
    words = assemble("ttreplay 0,0,0,1") + [W[i % 10] for i in range(32)]
    words += assemble("ttreplay 0,0,0,0")
    assert executed_words(Coprocessor(), words) == [W[i % 10] for i in range(32)]
    cp = Coprocessor()
    rep = assemble("ttreplay 0,2,0,0")[0]
    cp.threads[0].mop.cfg[:] = [3, 1, NOP, NOP, NOP, rep, NOP, rep, rep]
    words = assemble("ttreplay 0,2,0,1") + W[4:6] + assemble("ttmop 1,0,0")
    assert executed_words(cp, words) == [W[4], W[5]] * 3


def test_replay_emits_from_every_start_and_wraps() -> None:
    exp = ReplayExpander()
    exp.buf[:] = np.arange(32) + 100
    for start in range(32):
        for length in (1, 5, 31, 0):
            word = assemble(f"ttreplay {start},{length},0,0")[0]
            assert exp.feed(word, pytest.fail) == [100 + (start + i) % 32
                                                  for i in range(length or 32)]


def test_replay_out_of_range_is_reported() -> None:
    with pytest.raises(UndefinedBehaviourError, match="len=40"):
        run("ttreplay 0,40,0,0")


# ---- semaphores, mutexes ---------------------------------------------------------------------


def test_semaphore_table_names() -> None:
    """Spec 001 §5.3 table (ckernel_structs.h)."""
    assert Semaphores.NAMES == ("FPU_SFPU", "MATH_PACK", "UNPACK_TO_DEST",
                                "UNPACK_OPERAND_SYNC", "PACK_DONE", "UNPACK_SYNC",
                                "UNPACK_MATH_DONE", "MATH_DONE")


def test_seminit_sempost_semget_saturate() -> None:
    cp = run("TTI_SEMINIT(2, 1, 0x06)")  # semaphores 1 and 2: Value 1, Max 2
    assert cp.sync.sem.value.tolist() == [0, 1, 1, 0, 0, 0, 0, 0]
    assert cp.sync.sem.max.tolist() == [0, 2, 2, 0, 0, 0, 0, 0]
    run("TTI_SEMPOST(0x02)\n" * 20 + "TTI_SEMGET(0x04)\n" * 3, cp=cp)
    assert cp.sync.sem.value[1] == 15 and cp.sync.sem.value[2] == 0  # saturate at 15 / 0


def test_semwait_blocks_only_the_listed_units() -> None:
    """SEMWAIT(B6 = Matrix Unit, sem 1, C0 = wait while Value == 0): the scalar unit keeps
    going, the Matrix Unit instruction waits, and with no poster it is a deadlock."""
    from isaforge.tensix.machine.state import DeadlockError

    cp = Coprocessor()
    with pytest.raises(DeadlockError, match="semaphore 1 .MATH_PACK. Value == 0") as e:
        run("TTI_SEMWAIT(64, 2, 1)\nttadddmareg 1,5,1,5\nttsetrwc 0,0,0,0,0,0", cp=cp)
    assert cp.gpr.get(0, 5) == 1 and 0 in e.value.reasons
    with pytest.raises(UndefinedBehaviourError, match="empty condition mask"):
        run("TTI_SEMWAIT(64, 2, 0)")


def test_stallwait_default_masks_and_conditions() -> None:
    """STALLWAIT 0,0: block mask B6, conditions C0..C3 (always met here): no wait."""
    cp = run("ttstallwait 0,0\nttsetrwc 0,0,1,0,0,4")
    assert cp.rwc.get(0, 4) == 1 and cp.sync.latched[0] is None
    from isaforge.tensix.machine.state import DeadlockError

    with pytest.raises(DeadlockError, match="C7: SrcA bank not owned by the Matrix Unit"):
        run("TTI_STALLWAIT(64, 0x80)\nttsetrwc 0,0,0,0,0,0")  # B6 + C7: wait for SrcA
    # a NOP is only held back when every block bit is set
    run("TTI_STALLWAIT(64, 0x80)\nttnop\nttnop")
    with pytest.raises(DeadlockError):
        run("TTI_STALLWAIT(511, 0x80)\nttnop")


def test_mutex_acquire_and_release() -> None:
    from isaforge.tensix.machine.state import DeadlockError

    cp = Coprocessor()
    cp.load_program({0: assemble("TTI_ATGETM(2)\nttnop\nttnop\nttnop\nTTI_ATRELM(2)"),
                     1: assemble("TTI_ATGETM(2)\nttadddmareg 1,1,1,1\nTTI_ATRELM(2)")})
    order: list[tuple[int, str]] = []
    cp.hook_add("insn", lambda m, a, n, ev: order.append((ev.thread, ev.insn.name)))
    cp.run()
    rel0 = order.index((0, "ATRELM"))
    assert order.index((1, "ADDDMAREG")) > rel0  # thread 1 waited for the release
    assert cp.sync.mutex.held_by.tolist() == [-1] * 5
    with pytest.raises(DeadlockError, match="ATGETM 1: no such mutex"):
        run("TTI_ATGETM(1)")


# ---- not implemented -------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["DOTPV", "PACR_SETREG", "XMOV", "RSTDMA", "CONV3S1"])
def test_unmodelled_instruction_is_a_clear_error(name: str) -> None:
    cp = Coprocessor()
    cp.set_stream(0, [ops()[name].opcode << 24])  # every operand 0
    with pytest.raises(NotImplementedInstruction, match=f"thread 0: not implemented: {name}"):
        cp.run()


def test_frontend_instruction_reaching_the_gate_is_undefined() -> None:
    """A REPLAY stored in the replay buffer comes back out of it and reaches the Wait Gate."""
    with pytest.raises(UndefinedBehaviourError, match="inside a replayed"):
        run("ttreplay 0,1,1,1\nttreplay 0,0,0,0")


# ---- element-wise operations through the machine --------------------------------------------


def _elw_machine() -> tuple[Coprocessor, np.ndarray, np.ndarray]:
    cp = Coprocessor()
    rng = np.random.default_rng(8)
    a = rng.integers(-8, 9, (64, 16)).astype(np.float32)
    b = rng.integers(-8, 9, (64, 16)).astype(np.float32)
    cp.load_src("a", 0, a, "bf16")
    cp.load_src("b", 0, b, "bf16")
    cp.config.set("ALU_ACC_CTRL_Fp32_enabled", 1)
    cp.dst.write("fp32", np.full((64, 16), 100.0, np.float32))
    return cp, a, b


def test_elwadd_elwsub_elwmul_rows_accumulate_and_broadcast() -> None:
    # RWCs: SrcA 8, SrcB 16, Dst 24 (+ dst field 0); 8 rows each; exact small integers
    setup = "ttsetrwc 0,0,8,8,8,7\nttincrwc 0,8,8,0\nttincrwc 0,8,0,0\n"
    cp, a, b = _elw_machine()
    run(setup + "TTI_ELWADD(0, 0, 0, 0, 0)", cp=cp)
    np.testing.assert_array_equal(cp.dst.read("fp32", range(24, 32)), a[8:16] + b[16:24])
    np.testing.assert_array_equal(cp.dst.read("fp32", [23, 32]), np.full((2, 16), 100.0))
    cp, a, b = _elw_machine()
    run(setup + "TTI_ELWSUB(0, 1, 0, 0, 0)", cp=cp)  # dest_accum_en: Dst += A - B
    np.testing.assert_array_equal(cp.dst.read("fp32", range(24, 32)),
                                  100 + a[8:16] - b[16:24])
    cp, a, b = _elw_machine()
    run(setup + "TTI_ELWMUL(0, 0, 2, 0, 0)", cp=cp)  # SrcB row 16 broadcast, Dst += A * B
    np.testing.assert_array_equal(cp.dst.read("fp32", range(24, 32)),
                                  100 + a[8:16] * b[16][None, :])
    cp, a, b = _elw_machine()
    run(setup + "TTI_ELWADD(0, 0, 1, 0, 0)", cp=cp)  # SrcB column 0 broadcast
    np.testing.assert_array_equal(cp.dst.read("fp32", range(24, 32)),
                                  a[8:16] + b[16:24, :1])


def test_unpacr_nop_zerosrc_form() -> None:
    """UNPACR_NOP op 0x1 clears the unpacker's bank once the bank the Matrix Unit uses
    belongs to the unpackers (WaitLikeUnpacr=0); bit 2 (op 0x5) clears to -inf (all ones)."""
    cp, _, _ = _mov_machine()  # both banks 0 with the Matrix Unit: the form must wait
    from isaforge.tensix.machine.state import DeadlockError

    with pytest.raises(DeadlockError, match="UNPACR_NOP ZEROSRC waiting for SrcA bank 0"):
        run("TTI_UNPACR_NOP(0, 0, 0, 0, 0, 0, 0, 0, 1)", cp=cp)
    cp = Coprocessor()
    cp.srcb.cells[:] = 5
    run("TTI_UNPACR_NOP(1, 0, 0, 0, 0, 0, 0, 1, 1)", cp=cp)
    assert (cp.srcb.cells[0] == 0x7FFFF).all() and (cp.srcb.cells[1] == 5).all()
    run("TTI_UNPACR_NOP(1, 0, 0, 0, 0, 0, 0, 0, 1)", cp=cp)
    assert not cp.srcb.cells[0].any()
    # WaitLikeUnpacr (bit 4): waits for the unpacker's own bank only
    cp, _, _ = _mov_machine()
    cp.srca.unpacker_bank = 1
    cp.srca.cells[1] = 9
    run("TTI_UNPACR_NOP(0, 0, 0, 0, 0, 0, 1, 0, 1)", cp=cp)
    assert not cp.srca.cells[1].any() and cp.srca.cells[0].any()
