"""SETDMAREG's special form (SetSignalsMode=1), from the ISA documentation's SETDMAREG_Special
page: the packer state or tile header chosen by InputSource, written as 16, 32 or 128 bits
to the GPRs. The function is exercised directly (with the machine's packer state and Config
reader); the Coprocessor does not dispatch it yet (see the last test)."""

from __future__ import annotations

import numpy as np
import pytest

from isaforge.tensix import Coprocessor, assemble
from isaforge.tensix import scalar as scalar_ops
from isaforge.tensix.disasm import decode_word
from isaforge.tensix.state import NotImplementedInstruction

T = 1  # the executing thread


def fields(size: int, source: int, in_half: int, result_half: int, which: int = 0
           ) -> dict[str, int]:
    return {"Payload_SigSelSize": size, "Payload_SigSel": (which << 7) | (source << 3) | in_half,
            "SetSignalsMode": 1, "RegIndex16b": result_half}


def special(cp: Coprocessor, f: dict[str, int]) -> None:
    scalar_ops.execute("SETDMAREG", cp.gpr, T, f, cp.report_ub, packers=cp.packers,
                       cfg=lambda name: cp.cfg(T, name))


def packed_machine() -> Coprocessor:
    cp = Coprocessor()
    p = cp.packers
    p.acc_tile_size[:, T] = [0x111, 0x222, 0x333, 0x444]
    p.acc_tile_size[:, 0] = 0x7777  # another thread's count: not read
    p.last_tile_size[:] = [0x10, 0x20, 0x30, 0x40]
    p.last_thread[:] = [T, 0, T, 2]  # packers 0 and 2 packed last for this thread
    p.all_zero_flags[:] = [0xA0000001, 0x0, 0x5, 0xFFFFFFFF]
    p.exp_histogram[:] = np.arange(128, dtype=np.uint8).reshape(4, 32)
    p.exp_histogram_max = np.uint32(0x1F)
    return cp


def test_field_names_match_the_encoding() -> None:
    # TT_SETDMAREG(ResultSize, (WhichPackers << 7) + (InputSource << 3) + InputHalfReg, 1, Half)
    word = assemble(f"ttsetdmareg 2,{(3 << 7) | (6 << 3) | 5},1,26")[0]
    got = dict(decode_word(word).fields)
    assert {k: got[k] for k in fields(0, 0, 0, 0)} == fields(2, 6, 5, 26, which=3)


def test_acc_tile_sizes_as_128_bits() -> None:
    cp = packed_machine()
    special(cp, fields(2, 0, 0, 2 * 13))  # GPRs (13 & 0x3C) = 12..15
    assert [cp.gpr.get(T, r) for r in range(12, 16)] == [
        0x1110010, 0x2220000, 0x3330030, 0x4440000]


def test_one_half_to_one_half_and_one_value_to_one_gpr() -> None:
    cp = packed_machine()
    cp.gpr.set(T, 3, 0x12345678)
    special(cp, fields(0, 1, 5, 7))  # AllZeroFlags of packer 2 (0x5), high half (0) -> GPR 3 hi
    assert cp.gpr.get(T, 3) == 0x00005678
    special(cp, fields(0, 1, 0, 6))  # packer 0's low half 0x0001 -> GPR 3 lo
    assert cp.gpr.get(T, 3) == 0x00000001
    special(cp, fields(1, 1, 6, 9))  # value 3 (0xFFFFFFFF) -> GPR 4
    assert cp.gpr.get(T, 4) == 0xFFFFFFFF


def test_tile_header_with_size_format_and_zero_compression() -> None:
    cp = packed_machine()
    cp.config.set("THCON_SEC0_REG8_Out_data_format", 5)  # packer 1
    cp.config.set("THCON_SEC0_REG8_Disable_zero_compress", 1)
    cp.config.set("THCON_SEC1_REG1_Out_data_format", 0xA)  # packer 2
    special(cp, fields(2, 3, 0, 0))  # packer 1 last packed for thread 0: TileSize 0 + 1
    assert [cp.gpr.get(T, r) for r in range(4)] == [1, (5 << 16) | (1 << 20), 0, 0]
    for r in range(4, 8):
        cp.gpr.set(T, r, 0xFFFFFFFF)
    special(cp, fields(3, 4, 0, 8))  # packer 2, this thread: TileSize 0x30 + 1, GPRs 4..7
    assert [cp.gpr.get(T, r) for r in range(4, 8)] == [
        0xFFFF0031,  # reserved high half kept
        0xFF0AFFFF,  # DataFormat 0xA, DisableZeroCompression 0, SpareBits 0; reserved kept
        0x5,  # AllZeroFlags
        0xFFFFFFFF]  # reserved word kept


def test_exponent_histogram_bytes_little_endian() -> None:
    cp = packed_machine()
    special(cp, fields(2, 7, 0, 0, which=2 | 4))  # packer (6 & 3) = 2, bytes 16..31
    assert cp.gpr.get(T, 0) == 0x53525150  # bytes 80..83 of the 0..127 ramp
    assert cp.gpr.get(T, 3) == 0x5F5E5D5C


def test_zero_flag_bits_and_acc_tile_size_reset() -> None:
    cp = packed_machine()
    special(cp, fields(1, 8, 0, 0, which=0b0101))
    assert cp.gpr.get(T, 0) == 0b1101  # bit 0 of each packer's AllZeroFlags
    assert (cp.packers.acc_tile_size[[0, 2]] == 0).all()
    assert list(cp.packers.acc_tile_size[[1, 3], T]) == [0x222, 0x444]


def test_max_exponent_and_unused_sources_read_zero() -> None:
    cp = packed_machine()
    special(cp, fields(1, 9, 0, 2))
    assert cp.gpr.get(T, 1) == 0x1F
    for r in range(8, 12):
        cp.gpr.set(T, r, 0xDEADBEEF)
    special(cp, fields(2, 12, 0, 16))  # no such source: four GPRs set to zero
    assert [cp.gpr.get(T, r) for r in range(8, 12)] == [0, 0, 0, 0]


def test_all_pack_disable_zero_compress_override_is_not_implemented() -> None:
    cp = packed_machine()
    cp.config.set("THCON_SEC0_REG1_All_pack_disable_zero_compress_ovrd", 1)
    with pytest.raises(NotImplementedInstruction,
                       match=r"not implemented: SETDMAREG \(special form, tile header"):
        special(cp, fields(2, 2, 0, 0))
    special(cp, fields(2, 0, 0, 0))  # the override matters to tile headers only


def test_machine_does_not_dispatch_the_special_form_yet() -> None:
    cp = Coprocessor()
    cp.set_stream(0, assemble("ttsetdmareg 0,0,1,3"))
    with pytest.raises(NotImplementedInstruction, match="not implemented: SETDMAREG"):
        cp.run()
