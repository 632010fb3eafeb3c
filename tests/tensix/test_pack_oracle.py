"""PACR against every record of the official simulator's packer oracle
(refdata/tensix/oracle/pack, layout in that folder's README), bit for bit: once through the
conversion functions on all records of a file at once, once as a PACR instruction on the
coprocessor, comparing every byte it writes to L1 (and the zero padding after them).

Every ``*.npz`` file present in the folder is a test case (its id is the file's stem), so a
new vector file of the same layout is checked with no code change. Each record is one
``PACR 0x41000001`` (Last, all four Dst read interfaces, AddrMode 0) on the pack thread:
packer ADC channel 0 at 0 and channel 1 X = 15 (16 datums per interface: Dst rows 0..3),
``pack_reads_per_xy_plane`` 16, edge mask 0xFFFF, no ReLU, no L1 accumulation,
``L1_Dest_addr`` 0xFF (output at byte 0x1000), ``Exp_section_size`` 1 (BFP exponents at
0x1000, datums at 0x1010), and ``params`` = (Read_32b_data, Dstacc = In_data_format,
Out_data_format, Round_10b_mant).

Where the oracle and the documentation differ, the oracle is followed; the evidence is in
these vectors: FP32 Dst to BF16 rounds half away from zero ((bits + 0x8000) >> 16), not to
nearest even; FP32 Dst to FP16 without Round_10b_mant truncates and does not flush exponent 0;
BFP8_b from FP32 or BF16 Dst with Dstacc BFP8_b first rounds to 6 stored mantissa bits.
"""

from __future__ import annotations

import numpy as np
import pytest

from isaforge.tensix import Coprocessor
from isaforge.tensix.machine import l1formats as L
from tests.refdata import npz_files, refdata

OUT_ADDR = 0x1000
PACR_LAST = 0x41000001


FILES = npz_files("tensix", "oracle", "pack", placeholder="pack_oracle_missing.npz")
IDS = [name.removesuffix(".npz") for name in FILES]


def _load(name: str) -> dict[str, np.ndarray]:
    with np.load(refdata("tensix", "oracle", "pack", name)) as d:
        return {k: d[k] for k in d.files}


def _params(d: dict[str, np.ndarray]) -> tuple[bool, int, int, bool]:
    names = [str(n) for n in d["params_names"]]
    p = dict(zip(names, (int(x) for x in d["params"]), strict=True))
    return (bool(p["Read_32b_data"]), p["Dstacc_and_In_data_format"], p["Out_data_format"],
            bool(p["Round_10b_mant"]))


@pytest.mark.parametrize("name", FILES, ids=IDS)
def test_conversions_match_every_oracle_record(name: str) -> None:
    d = _load(name)
    read32, inter, out, round10 = _params(d)
    raw = d["dst_in_raw"].astype(np.int64)
    v = L.pack_read(raw.reshape(-1), read32, inter, round10)
    v = L.pack_late(v, read32, inter, out)
    if out in L.BFP_FORMATS:
        shared, mags = L.bfp_pack(v, out)
        assert (shared.reshape(len(raw), -1) == d["l1_exp"]).all()
        got = L.pack_datums_to_bytes(mags, L.datum_bits(out)).reshape(len(raw), -1)
    else:
        assert (v.reshape(raw.shape) == d["out"]).all(), _first_difference(v, d["out"])
        got = L.pack_datums_to_bytes(v, L.datum_bits(out)).reshape(len(raw), -1)
    bad = np.argwhere(got != d["l1_data"])
    assert bad.size == 0, (f"{len(bad)} L1 bytes differ; first at record/byte "
                           f"{bad[0].tolist()}: got {got[tuple(bad[0])]:#x}, oracle "
                           f"{d['l1_data'][tuple(bad[0])]:#x}")


def _first_difference(got: np.ndarray, want: np.ndarray) -> str:
    g = got.reshape(want.shape)
    bad = np.argwhere(g != want)
    if not bad.size:
        return ""
    return (f"{len(bad)} datums differ; first at {bad[0].tolist()}: got "
            f"{int(g[tuple(bad[0])]):#x}, oracle {int(want[tuple(bad[0])]):#x}")


def _packer(read32: bool, inter: int, out: int, round10: bool) -> Coprocessor:
    cp = Coprocessor()
    c = cp.config
    c.set("PCK_DEST_RD_CTRL_Read_32b_data", int(read32))
    c.set("PCK_DEST_RD_CTRL_Round_10b_mant", int(round10))
    c.set("ALU_FORMAT_SPEC_REG2_Dstacc", inter)
    c.set("THCON_SEC0_REG1_In_data_format", inter)
    c.set("THCON_SEC0_REG1_Out_data_format", out)
    c.set("PACK_COUNTERS_SEC0_pack_reads_per_xy_plane", 16)
    c.set("PCK_EDGE_OFFSET_SEC0_mask", 0xFFFF)
    c.set("THCON_SEC0_REG1_L1_Dest_addr", OUT_ADDR // 16 - 1)
    c.set("THCON_SEC0_REG1_Exp_section_size", 1)
    return cp


@pytest.mark.parametrize("name", FILES, ids=IDS)
def test_pacr_on_the_coprocessor_writes_the_oracle_bytes(name: str) -> None:
    d = _load(name)
    read32, inter, out, round10 = _params(d)
    cp = _packer(read32, inter, out, round10)
    l1 = cp.memory.l1  # type: ignore[attr-defined]
    bfp = out in L.BFP_FORMATS
    n_exp = d["l1_exp"].shape[1]
    n_data = d["l1_data"].shape[1]
    data_at = OUT_ADDR + 16 if bfp else OUT_ADDR
    rows = np.arange(4)
    for n in range(len(d["dst_in_raw"])):
        raw = d["dst_in_raw"][n].reshape(4, 16)
        if read32:
            cp.dst.write32(rows, raw)
        else:
            cp.dst.write16(rows, raw)
        l1[OUT_ADDR:OUT_ADDR + 0x200] = 0xAA  # stale bytes the padding must clear
        cp.adc.set(2, 2, 1, 0, 15)  # packer ADC channel 1 X = 15 (thread 2)
        cp.set_stream(2, [PACR_LAST])
        cp.run(max_steps=10)
        got = l1[data_at:data_at + n_data]
        assert (got == d["l1_data"][n]).all(), (
            f"record {n}: L1 data {got.tobytes().hex()} != oracle "
            f"{d['l1_data'][n].tobytes().hex()}")
        pad_end = (data_at + n_data + 15) & ~15
        assert (l1[data_at + n_data:pad_end] == 0).all(), f"record {n}: data padding"
        assert l1[pad_end] == 0xAA, f"record {n}: wrote past the padding"
        if bfp:
            assert (l1[OUT_ADDR:OUT_ADDR + n_exp] == d["l1_exp"][n]).all(), f"record {n}: exps"
            assert (l1[OUT_ADDR + n_exp:OUT_ADDR + 16] == 0).all(), f"record {n}: exp padding"
        assert not cp.units.pack.state.active, "Last closes the tile"


def test_the_oracle_folder_holds_vectors() -> None:
    """Something is checked: the folder holds vector files of the README's layout."""
    assert FILES and all(n.startswith("pack_") for n in FILES)
    for name in FILES:
        d = _load(name)
        assert d["dst_in_raw"].shape[1] == 64 and len(d["l1_data"]) == len(d["dst_in_raw"])
