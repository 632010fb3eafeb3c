"""The unpackers (UNPACR) beyond the official simulator's cases (tests/tensix/test_ttsim_vectors.py
covers the conversions it implements): hand-computed results for the paths only the ISA
documentation describes (16-bit unpack to Dst, BFP8a, the row cursor without
SRCA_SET_SetOvrdWithAddr, Unpack_Src_Reg_Set_Upd), the bank hand-over and the Wait Gate, and
the clear refusals."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from isaforge.tensix import Coprocessor, assemble
from isaforge.tensix.machine import l1formats as L
from isaforge.tensix.machine.regfiles import SrcClient
from isaforge.tensix.machine.state import DeadlockError, NotImplementedInstruction

IN = 0x2000


def _unpacker(which: int, in_fmt: int, out_fmt: int, count: int, *, x_dim: int = 1024,
              dest: int = 64, to_dst: bool = False, ovrd: int = 1) -> Coprocessor:
    """Unpacker ``which`` of thread 0 set up for ``count`` datums at IN (context 0)."""
    cp = Coprocessor()
    sec = 64 if which == 0 else 112
    cp.config.words[:, sec] = in_fmt | 0x10 | (x_dim << 16)
    cp.config.words[:, sec + 1] = 1 | (1 << 16)  # YDim 1, ZDim 1
    c = cp.config.set
    c(f"THCON_SEC{which}_REG2_Out_data_format", out_fmt)
    c(f"THCON_SEC{which}_REG2_Disable_zero_compress_cntx0", 1)
    c(f"THCON_SEC{which}_REG3_Base_address", IN // 16 - 1)
    if which == 0:
        c("THCON_SEC0_REG5_Tile_x_dim_cntx0", x_dim)
        c("THCON_SEC0_REG5_Dest_cntx0_address", dest)
        c("THCON_SEC0_REG2_Unpack_if_sel_cntx0", int(to_dst))
    cp.thread_config.set(0, "SRCA_SET_SetOvrdWithAddr", ovrd)
    cp.adc.set(0, which, 1, 0, count - 1)
    return cp


def _unpacr(which: int, dvalid: int = 1, ovrd: int = 1) -> list[int]:
    return assemble(f"TTI_UNPACR({which}, 0, 0, 0, 0, {ovrd}, {dvalid}, 0, 0, 0, 0, 0, 1)")


def _l1(cp: Coprocessor, data: np.ndarray, at: int = IN) -> None:
    cp.memory.l1[at:at + len(data)] = data  # type: ignore[attr-defined]


def test_bf16_tile_to_srca_hands_the_bank_to_the_matrix_unit() -> None:
    x = L.bf16_values(np.random.default_rng(0).standard_normal(1024))
    cp = _unpacker(0, 5, 5, 1024)
    _l1(cp, L.encode(x, 5))
    cp.set_stream(0, _unpacr(0))
    cp.run()
    assert (cp.srca.dump(0, "bf16").astype(np.float32).reshape(-1) == x).all()
    assert cp.srca.allowed_client[0] == SrcClient.MATRIX_UNIT and cp.srca.unpacker_bank == 1
    assert cp.srca.implied_fmt[0] == 5


def test_unpacr_waits_at_the_gate_for_a_bank_the_matrix_unit_owns() -> None:
    cp = _unpacker(1, 5, 5, 16)
    cp.set_stream(0, _unpacr(1) * 3)  # the third finds bank 0 still with the Matrix Unit
    with pytest.raises(DeadlockError, match="UNPACR waiting for SrcB bank 0"):
        cp.run()
    cp.srcb.release_to_unpackers(flip=False)
    cp.run()
    assert cp.threads[0].executed == 3


def test_unpack_bf16_to_dst16_as_the_documentation_models_it() -> None:
    x = L.bf16_values(np.linspace(-3, 3, 32))
    cp = _unpacker(0, 5, 5, 32, dest=64 + 16 * 6, to_dst=True, ovrd=0)
    _l1(cp, L.encode(x, 5))
    cp.dst.valid[:] = False
    cp.set_stream(0, _unpacr(0, dvalid=0))
    cp.run()
    assert (cp.dst.read("bf16", [6, 7]).astype(np.float32).reshape(-1) == x).all()
    assert cp.dst.row_valid([6, 7], False).all() and not cp.dst.row_valid([5, 8], False).any()


def test_unpack_fp32_to_dst32_keeps_every_bit() -> None:
    x = np.random.default_rng(1).standard_normal(16).astype(np.float32)
    cp = _unpacker(0, 0, 0, 16, dest=64 + 16 * 3, to_dst=True, ovrd=0)
    _l1(cp, L.encode(x, 0))
    cp.set_stream(0, _unpacr(0, dvalid=0))
    cp.run()
    assert (cp.dst.read("fp32", [3]).reshape(-1) == x).all()


def test_bfp8a_to_fp16_from_the_documentation() -> None:
    # BFP8a: 5-bit shared exponent 15 (2**0); magnitudes 0x40 = 1.0, 0x60 = 1.5, 0x20 = 0.5
    cp = _unpacker(1, 2, 2, 16, x_dim=16)
    data = np.zeros(32, np.uint8)
    data[0] = 15
    data[16:19] = [0x40, 0x60 | 0x80, 0x20]
    _l1(cp, data)
    cp.set_stream(0, _unpacr(1))
    cp.run()
    got = cp.srcb.dump(0, "fp16", [0]).reshape(-1)[:4]
    assert got.tolist() == [1.0, -1.5, 0.5, 0.0]


def test_bfp8_b_datum_semantics() -> None:
    # sign + 7-bit magnitude with the leading one explicit; magnitude 0 with sign is -inf
    exp = np.full(4, 127)
    got = L.bfp8_to_bf16(np.array([0x40, 0xC0, 0x01, 0x80]), exp)
    assert got.tolist() == [0x3F80, 0xBF80, 0x3C80, 0xFF80]


def test_row_cursor_without_set_ovrd_with_addr_and_src_reg_set_upd() -> None:
    x = L.bf16_values(np.arange(32, dtype=np.float32))
    cp = _unpacker(0, 5, 5, 16, ovrd=0)
    cp.config.set("THCON_SEC0_REG2_Unpack_Src_Reg_Set_Upd", 1)
    # without OvrdThreadId the output address is the counters' alone: datum 64 (row 4, the
    # first that exists) is channel 1 Y = 1 times a Y stride of 128 bytes (2-byte datums)
    cp.config.set("UNP0_ADDR_CTRL_XY_REG_1_Ystride", 128)
    cp.adc.set(0, 0, 1, 1, 1)
    _l1(cp, L.encode(x, 5))
    cp.set_stream(0, _unpacr(0, dvalid=0, ovrd=0) * 2)
    cp.run()
    # the cursor moves by 16 rows after each: rows 0 and 16 hold the same 16 datums
    a = cp.srca.dump(0, "bf16").astype(np.float32)
    assert (a[0] == x[:16]).all() and (a[16] == x[:16]).all()
    assert cp.srca.unpacker_row[0] == 32


def test_haloize_transposes_srca_faces() -> None:
    x = L.bf16_values(np.arange(256, dtype=np.float32))
    cp = _unpacker(0, 5, 5, 256)
    cp.config.set("THCON_SEC0_REG2_Haloize_mode", 1)
    _l1(cp, L.encode(x, 5))
    cp.set_stream(0, _unpacr(0))
    cp.run()
    a = cp.srca.dump(0, "bf16", range(16)).astype(np.float32)
    assert (a == x.reshape(16, 16).T).all()


def test_int8_to_integer8_and_unsigned() -> None:
    data = np.array([0x05, 0x85, 0xFF, 0x00] + [0] * 12, np.uint8)
    for unsigned, want in ((0, [5, -5, -127, 0]), (1, [5, 133, 255, 0])):
        cp = _unpacker(1, 14, 14, 16, x_dim=16)
        cp.config.set("ALU_FORMAT_SPEC_REG0_SrcBUnsigned", unsigned)
        _l1(cp, data)
        cp.set_stream(0, _unpacr(1))
        cp.run()
        assert cp.srcb.dump(0, "int8", [0]).reshape(-1)[:4].tolist() == want


@pytest.mark.parametrize("setting, message", [
    ("THCON_SEC0_REG2_Disable_zero_compress_cntx0=0", "compressed data"),
    ("THCON_SEC0_REG2_Upsample_rate=1", "upsampling"),
])
def test_unmodelled_unpacker_configurations_are_clear_errors(setting: str,
                                                             message: str) -> None:
    cp = _unpacker(0, 5, 5, 16)
    name, value = setting.split("=")
    cp.config.set(name, int(value))
    cp.set_stream(0, _unpacr(0))
    with pytest.raises(NotImplementedInstruction, match=f"thread 0: not implemented: UNPACR: "
                                                        f".*{message}"):
        cp.run()


def test_row_search_is_a_clear_error() -> None:
    cp = _unpacker(0, 5, 5, 16)
    cp.set_stream(0, assemble("TTI_UNPACR(0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 1)"))
    with pytest.raises(NotImplementedInstruction, match="UNPACR: RowSearch=1"):
        cp.run()


def test_conversion_mismatch_is_undefined_behaviour() -> None:
    cp = _unpacker(1, 5, 4, 16)  # BF16 in L1, TF32 out: the documentation's UB
    cp.set_stream(0, _unpacr(1))
    with pytest.raises(Exception, match="same output format"):
        cp.run()


def test_bf16_values_are_what_ml_dtypes_rounds() -> None:
    x = np.array([1 / 3, 2 / 3, 1e-3], np.float32)
    assert (L.bf16_values(x) == x.astype(ml_dtypes.bfloat16).astype(np.float32)).all()
