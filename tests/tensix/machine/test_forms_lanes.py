"""LaneConfig (ISA documentation, Blackhole SFPCONFIG): its VD=15 form of SFPCONFIG, the
per-column BLOCK_DEST_MOV masks of MOVA2D/MOVB2D/MOVD2A/MOVD2B, and the SFPLOAD/SFPSTORE lane
controls (block, column exchange, FP16 infinity, Dst index capture)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from isaforge.tensix import Coprocessor, assemble
from isaforge.tensix.machine.state import NotImplementedInstruction

LANE = np.arange(32)


def run(text: str, cp: Coprocessor) -> Coprocessor:
    cp.set_stream(0, assemble(text))
    cp.run(max_steps=10_000)
    return cp


def bf16(x: np.ndarray) -> np.ndarray:
    return x.astype(ml_dtypes.bfloat16).astype(np.float32)


# ---- SFPCONFIG VD=15 ---------------------------------------------------------------------------


def test_sfpconfig_writes_imm16_and_keeps_the_two_high_bits() -> None:
    cp = Coprocessor()
    cp.lane_config[:] = 0x30000 | 0x1234
    run("TTI_SFPCONFIG(0x0600, 15, 1)", cp)  # MOD1_IMM16_IS_VALUE, plain write
    assert (cp.lane_config == 0x30600).all()


@pytest.mark.parametrize("mod1, want", [(1 | 2, 0x1234 | 0x0F0F), (1 | 4, 0x1234 & 0x0F0F),
                                        (1 | 6, 0x1234 ^ 0x0F0F)])
def test_sfpconfig_bitwise_forms(mod1: int, want: int) -> None:
    cp = Coprocessor()
    cp.lane_config[:] = 0x1234
    run(f"TTI_SFPCONFIG(0x0F0F, 15, {mod1})", cp)
    assert (cp.lane_config == want).all()


def test_sfpconfig_from_lreg0_broadcasts_eight_lanes_and_lane_mask() -> None:
    cp = Coprocessor()
    cp.lreg[0] = (LANE * 0x1111 + 0x30001).astype(np.uint32)  # lanes 8.. are ignored
    run("TTI_SFPCONFIG(0, 15, 0)", cp)  # value from LReg[0][lane & 7], all 18 bits
    np.testing.assert_array_equal(cp.lane_config, ((LANE & 7) * 0x1111 + 0x30001) & 0x3FFFF)
    cp.lane_config[:] = 0
    # MOD1_IMM16_IS_LANE_MASK: lane L is written when Imm16 bit (L & 7) * 2 is set
    run(f"TTI_SFPCONFIG({0b0100_0001}, 15, 8)", cp)  # bits 0 and 6: lanes with L & 7 in {0, 3}
    on = np.isin(LANE & 7, [0, 3])
    np.testing.assert_array_equal(cp.lane_config[on], ((LANE[on] & 7) * 0x1111 + 0x30001))
    assert (cp.lane_config[~on] == 0).all()


@pytest.mark.parametrize("vd", [0, 5, 8])
def test_sfpconfig_other_destinations_are_not_implemented(vd: int) -> None:
    with pytest.raises(NotImplementedInstruction, match=f"not implemented: SFPCONFIG VD={vd}"):
        run(f"TTI_SFPCONFIG(1, {vd}, 1)", Coprocessor())


# ---- BLOCK_DEST_MOV ---------------------------------------------------------------------------


def mov_machine() -> tuple[Coprocessor, np.ndarray, np.ndarray]:
    cp = Coprocessor()
    a = bf16(np.arange(1, 1025, dtype=np.float32).reshape(64, 16))
    b = bf16(-np.arange(1, 1025, dtype=np.float32).reshape(64, 16))
    cp.load_src("a", 0, a, "bf16")
    cp.load_src("b", 0, b, "bf16")
    cp.dst.write("bf16", np.full((1024, 16), 7.0, np.float32))
    return cp, a, b


def block(cp: Coprocessor, columns: list[int]) -> np.ndarray:
    """Set BLOCK_DEST_MOV (LaneConfig bits 9..10) for ``columns``; return the column mask."""
    for c in columns:
        cp.lane_config[c // 2] |= 1 << (9 + (c & 1))
    mask = np.zeros(16, dtype=bool)
    mask[columns] = True
    return mask


@pytest.mark.parametrize("columns", [[0], [7], [0, 1, 14], list(range(16))])
def test_mova2d_and_movb2d_skip_blocked_columns(columns: list[int]) -> None:
    cp, a, b = mov_machine()
    m = block(cp, columns)
    run("TTI_MOVA2D(0, 8, 0, 2, 16)\nTTI_MOVB2D(0, 5, 0, 0, 40)", cp)
    got = cp.dst.read("bf16", range(16, 24)).astype(np.float32)
    np.testing.assert_array_equal(got[:, ~m], a[8:16][:, ~m])
    assert (got[:, m] == 7.0).all()
    row = cp.dst.read("bf16", [40]).astype(np.float32)[0]
    np.testing.assert_array_equal(row[~m], b[5][~m])
    assert (row[m] == 7.0).all()


def test_movd2a_and_movd2b_skip_blocked_columns_movb2a_does_not() -> None:
    cp, a, b = mov_machine()
    rows = bf16(np.arange(64 * 16, dtype=np.float32).reshape(64, 16) / 8 + 0.5)
    cp.dst.write("bf16", rows, np.arange(64))
    m = block(cp, [2, 3, 9])
    run("TTI_MOVD2A(0, 10, 0, 0, 3)\nTTI_MOVD2B(0, 20, 0, 2, 4)\nTTI_MOVB2A(33, 0, 0, 2)", cp)
    sa = cp.srca.dump(0, "bf16").astype(np.float32)
    sb = cp.srcb.dump(0, "bf16").astype(np.float32)
    np.testing.assert_array_equal(sa[10][~m], rows[3][~m])
    np.testing.assert_array_equal(sa[10][m], a[10][m])
    np.testing.assert_array_equal(sb[20:24][:, ~m], rows[4:8][:, ~m])
    np.testing.assert_array_equal(sb[20:24][:, m], b[20:24][:, m])
    np.testing.assert_array_equal(sa[33], b[2])  # MOVB2A is not in the documented list


def test_block_dest_mov_written_by_sfpconfig() -> None:
    cp, a, _ = mov_machine()
    # LaneConfig lane 2 (columns 4, 5): BLOCK_DEST_MOV = 0b10 -> column 5 only
    cp.lreg[0] = np.where(LANE & 7 == 2, 2 << 9, 0).astype(np.uint32)
    run("TTI_SFPCONFIG(0, 15, 0)\nTTI_MOVA2D(0, 3, 0, 0, 17)", cp)
    row = cp.dst.read("bf16", [17]).astype(np.float32)[0]
    assert row[5] == 7.0
    np.testing.assert_array_equal(np.delete(row, 5), np.delete(a[3], 5))


# ---- SFPLOAD / SFPSTORE lane controls ------------------------------------------------------------


def fp32_dst(cp: Coprocessor) -> np.ndarray:
    vals = np.arange(1, 16 * 16 + 1, dtype=np.float32).reshape(16, 16)
    cp.dst.write("fp32", vals, np.arange(16))
    return vals


def test_sfpload_block_and_column_exchange() -> None:
    cp = Coprocessor()
    vals = fp32_dst(cp)
    cp.lane_config[LANE % 5 == 0] |= 1 << 5  # BLOCK_SFPU_RD_FROM_DEST
    cp.lane_config[3] |= 1 << 6  # DEST_RD_COL_EXCHANGE of LaneConfig[3]: lanes 3, 11, 19, 27
    cp.lreg[1] = 0xDEAD
    run("TTI_SFPLOAD(1, 3, 0, 4)", cp)
    got = cp.lreg[1].view(np.float32)
    for lane in range(32):
        if lane % 5 == 0:
            assert cp.lreg[1][lane] == 0xDEAD, lane
        else:
            col = (lane & 7) * 2 + (1 if lane & 7 == 3 else 0)
            assert got[lane] == vals[4 + lane // 8, col], lane


def test_sfpstore_block_and_column_exchange() -> None:
    cp = Coprocessor()
    cp.dst.write("fp32", np.full((8, 16), -1.0, np.float32), np.arange(8))
    cp.lane_config[LANE // 8 == 2] |= 1 << 4  # BLOCK_DEST_WR_FROM_SFPU for lanes 16..23
    cp.lane_config[0] |= 1 << 7  # DEST_WR_COL_EXCHANGE of LaneConfig[0]: lanes 0, 8, 16, 24
    cp.lreg[2] = (LANE.astype(np.float32) + 100).view(np.uint32)
    run("TTI_SFPSTORE(2, 3, 0, 0)", cp)
    got = cp.dst.read("fp32", np.arange(4))
    for lane in range(32):
        col = (lane & 7) * 2 + (1 if lane & 7 == 0 else 0)
        want = -1.0 if lane // 8 == 2 else lane + 100.0
        assert got[lane // 8, col] == want, lane
    assert got[0, 0] == -1.0 and got[1, 0] == -1.0  # the exchanged lanes left column 0


def test_sfpload_fp16a_infinity() -> None:
    cp = Coprocessor()
    largest = (0x3FF << 5) | 0x1F  # Dst16b FP16: sign 0, man all ones, exp all ones
    cells = np.full((4, 16), largest, dtype=np.uint16)
    cells[1] |= 0x8000
    cp.dst.write16(np.arange(4), cells)
    cp.lane_config[: 16] |= 1  # ENABLE_FP16A_INF on lanes 0..15 (rows 0 and 1)
    run("TTI_SFPLOAD(0, 1, 0, 0)", cp)
    got = cp.lreg[0]
    assert (got[:8] == 0x7F800000).all() and (got[8:16] == 0xFF800000).all()
    plain = (0x8F << 23) | (0x3FF << 13)  # exponent 31 + 112, mantissa kept
    assert (got[16:] == plain).all()


def test_sfpload_captures_the_dst_index() -> None:
    cp = Coprocessor()
    fp32_dst(cp)
    cp.lane_config[:] = (1 << 2) | (1 << 3)  # ENABLE_DEST_INDEX + CAPTURE_DEFAULT_DEST_INDEX
    cp.lane_config[8:] = 1 << 2  # lanes 8..31: ENABLE_DEST_INDEX alone does not capture
    cp.lreg[5] = 0x55
    run("TTI_SFPLOAD(1, 3, 0, 6)", cp)
    want = ((4 + LANE // 8) << 4) | ((LANE & 7) * 2 + 1)  # Addr 6: rows 4.., odd columns
    np.testing.assert_array_equal(cp.lreg[5][:8], want[:8])  # VD 1 -> LReg 5
    assert (cp.lreg[5][8:] == 0x55).all()
