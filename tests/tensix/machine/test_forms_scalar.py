"""SETDMAREG's special form (SetSignalsMode=1), from the ISA documentation's SETDMAREG_Special
page: the packer state or tile header chosen by InputSource, written as 16, 32 or 128 bits
to the GPRs. That page describes Wormhole's four packers; Blackhole has one (PACR.md), so what
needs packers 1..3 stays "not implemented". The function is exercised directly (with the
machine's packer state and Config reader), and the last test runs it on the Coprocessor."""

from __future__ import annotations

import numpy as np
import pytest

from isaforge.tensix import Coprocessor, assemble
from isaforge.tensix.decode import decode_word
from isaforge.tensix.machine import scalar as scalar_ops
from isaforge.tensix.machine.state import NotImplementedInstruction

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
    p.acc_tile_size[:] = [0x7777, 0x111, 0x6666]  # per thread; T reads 0x111
    p.last_tile_size = 0x30
    p.last_thread = T
    p.all_zero_flags = 0xA0000005
    p.exp_histogram[:] = np.arange(32, dtype=np.uint8) + 0x40
    p.exp_histogram_max = 0x1F
    return cp


def test_field_names_match_the_encoding() -> None:
    # TT_SETDMAREG(ResultSize, (WhichPackers << 7) + (InputSource << 3) + InputHalfReg, 1, Half)
    word = assemble(f"ttsetdmareg 2,{(3 << 7) | (6 << 3) | 5},1,26")[0]
    got = dict(decode_word(word).fields)
    assert {k: got[k] for k in fields(0, 0, 0, 0)} == fields(2, 6, 5, 26, which=3)


def test_acc_tile_size_and_last_tile_size_of_this_thread() -> None:
    cp = packed_machine()
    special(cp, fields(1, 0, 0, 2 * 13))  # value 0 -> GPR 13
    assert cp.gpr.get(T, 13) == (0x111 << 16) | 0x30
    cp.packers.last_thread = 0  # another thread packed last: the low half reads 0
    special(cp, fields(1, 0, 1, 2 * 13))  # InputHalfReg 1 still selects value 0
    assert cp.gpr.get(T, 13) == 0x111 << 16


def test_one_half_to_one_half() -> None:
    cp = packed_machine()
    cp.gpr.set(T, 3, 0x12345678)
    special(cp, fields(0, 1, 1, 7))  # AllZeroFlags, high half (0xA000) -> GPR 3 high half
    assert cp.gpr.get(T, 3) == 0xA0005678
    special(cp, fields(0, 1, 0, 6))  # low half (0x0005) -> GPR 3 low half
    assert cp.gpr.get(T, 3) == 0xA0000005


def test_tile_header_with_size_format_and_zero_compression() -> None:
    cp = packed_machine()
    cp.config.set("THCON_SEC0_REG1_Out_data_format", 5)
    cp.config.set("THCON_SEC0_REG1_Disable_zero_compress", 1)
    special(cp, fields(2, 2, 0, 0))  # TileSize = LastTileSize + 1, GPRs 0..3
    assert [cp.gpr.get(T, r) for r in range(4)] == [0x31, (5 << 16) | (1 << 20), 0xA0000005, 0]
    for r in range(4, 8):
        cp.gpr.set(T, r, 0xFFFFFFFF)
    cp.packers.last_thread = 2  # not this thread: TileSize 0 + 1
    cp.config.set("THCON_SEC0_REG1_Disable_zero_compress", 0)
    special(cp, fields(3, 2, 0, 8))  # reserved fields kept, GPRs 4..7
    assert [cp.gpr.get(T, r) for r in range(4, 8)] == [
        0xFFFF0001,  # reserved high half kept
        0xFF05FFFF,  # DataFormat 5, DisableZeroCompression 0, SpareBits 0; reserved kept
        0xA0000005,  # AllZeroFlags
        0xFFFFFFFF]  # reserved word kept


def test_exponent_histogram_bytes_little_endian() -> None:
    cp = packed_machine()
    special(cp, fields(2, 7, 0, 0, which=4))  # WhichPackers & 3 = 0: packer 0, bytes 16..31
    assert cp.gpr.get(T, 0) == 0x53525150
    assert cp.gpr.get(T, 3) == 0x5F5E5D5C
    special(cp, fields(1, 6, 2, 2))  # bytes 4..7 -> GPR 1
    assert cp.gpr.get(T, 1) == 0x47464544


def test_acc_tile_size_reset_mask() -> None:
    cp = packed_machine()
    cp.gpr.set(T, 5, 0xFFFF)
    special(cp, fields(1, 8, 2, 10, which=1))  # value 1 (zero) -> GPR 5; resets packer 0
    assert cp.gpr.get(T, 5) == 0
    assert (cp.packers.acc_tile_size == 0).all()


def test_max_exponent_and_unused_sources_read_zero() -> None:
    cp = packed_machine()
    special(cp, fields(1, 9, 0, 2))
    assert cp.gpr.get(T, 1) == 0x1F
    for r in range(8, 12):
        cp.gpr.set(T, r, 0xDEADBEEF)
    special(cp, fields(2, 12, 0, 16))  # no such source: four GPRs set to zero
    assert [cp.gpr.get(T, r) for r in range(8, 12)] == [0, 0, 0, 0]


@pytest.mark.parametrize("f, what", [
    (fields(2, 0, 0, 0), "InputSource 0 values of packers 1..3"),
    (fields(1, 1, 2, 0), "InputSource 1 values of packers 1..3"),
    (fields(2, 3, 0, 0), "tile header of packer 1"),
    (fields(2, 5, 0, 0), "tile header of packer 3"),
    (fields(2, 6, 0, 0, which=1), "exponent histogram of packer 1"),
    (fields(1, 8, 0, 0), "InputSource 8 values of packers 1..3"),
    (fields(1, 8, 2, 0, which=2), "WhichPackers mask 0x2"),
])
def test_wormholes_other_packers_are_not_implemented(f: dict[str, int], what: str) -> None:
    cp = packed_machine()
    before = (cp.gpr.v.copy(), cp.packers.acc_tile_size.copy())
    with pytest.raises(NotImplementedInstruction, match=r"not implemented: SETDMAREG \(special "
                       rf"form, {what}: Blackhole has a single packer"):
        special(cp, f)
    assert (cp.gpr.v == before[0]).all() and (cp.packers.acc_tile_size == before[1]).all()


def test_all_pack_disable_zero_compress_override_is_not_implemented() -> None:
    cp = packed_machine()
    cp.config.set("THCON_SEC0_REG1_All_pack_disable_zero_compress_ovrd", 1)
    with pytest.raises(NotImplementedInstruction,
                       match=r"not implemented: SETDMAREG \(special form, tile header with"):
        special(cp, fields(2, 2, 0, 0))
    special(cp, fields(1, 0, 0, 0))  # the override matters to tile headers only
    assert cp.gpr.get(T, 0) == (0x111 << 16) | 0x30


def test_the_machine_runs_the_special_form() -> None:
    """Through the Coprocessor: thread T's SETDMAREG (ResultSize 1, InputSource 0) writes
    AccTileSize and LastTileSize of the packer state to the GPR chosen by ResultHalfReg."""
    cp = packed_machine()
    cp.set_stream(T, assemble(f"ttsetdmareg 1,0,1,{2 * 13}"))
    cp.run()
    assert cp.gpr.get(T, 13) == (0x111 << 16) | 0x30
