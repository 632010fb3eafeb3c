"""L1 formats: the host-side encode/decode of every format tt-metal puts in L1, tile order, the
packer's and unpacker's conversions on hand-computed values, and ``--load l1:`` /
``--dump l1:`` of ``isaforge tensix run``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from isaforge.cli import main
from isaforge.tensix.machine import l1formats as L
from isaforge.tensix.machine.formats import FormatError

FLOATS = np.array([0.0, 1.0, -1.5, 0.333, 100.25, -2.0e-3, 65504.0, 3.0e-5] * 4, np.float32)


@pytest.mark.parametrize("name", ["fp32", "tf32", "fp16", "bf16", "bfp8_b", "bfp4_b", "bfp2_b",
                                  "fp8"])
def test_float_formats_round_trip_within_their_precision(name: str) -> None:
    code, _ = L.format_code(name)
    data = L.encode(FLOATS, code)
    assert len(data) == L.l1_size(code, len(FLOATS))
    back = L.decode(data, code, len(FLOATS))
    again = L.decode(L.encode(back, code), code, len(FLOATS))
    assert (again == back).all(), "a decoded value encodes to itself"
    bits = {"fp32": 23, "tf32": 23, "fp16": 10, "bf16": 7, "bfp8_b": 6, "bfp4_b": 2,
            "bfp2_b": 0, "fp8": 2}[name]
    if name.startswith("bfp"):  # relative to each block's largest magnitude
        scale = np.repeat(np.abs(FLOATS).reshape(-1, 16).max(axis=1), 16)
    else:
        scale = np.abs(FLOATS)
    small = np.abs(FLOATS) < (6.2e-5 if name in ("fp16", "fp8") else 1e-38)
    ok = np.abs(back - FLOATS) <= scale * 2.0 ** -bits + 1e-7
    assert (ok | small).all(), (name, back)


@pytest.mark.parametrize("name, values", [
    ("int8", [-127, -1, 0, 5, 127]), ("uint8", [0, 1, 200, 255, 7]),
    ("int32", [-(2 ** 31 - 1), -5, 0, 7, 2 ** 31 - 1]), ("uint16", [0, 1, 40000, 65535, 9])])
def test_integer_formats_round_trip_exactly(name: str, values: list[int]) -> None:
    code, unsigned = L.format_code(name)
    v = np.array(values)
    assert (L.decode(L.encode(v, code, unsigned), code, len(v), unsigned) == v).all()


def test_sign_magnitude_integers_in_l1() -> None:
    assert L.encode(np.array([-5]), 14).tolist() == [0x85]
    assert L.encode(np.array([-5]), 8).view("<u4").tolist() == [0x80000005]


def test_encoding_refuses_what_the_format_cannot_hold() -> None:
    with pytest.raises(FormatError, match="-127..127"):
        L.encode(np.array([128]), 14)
    with pytest.raises(FormatError, match="multiples of 16"):
        L.encode(np.zeros(10), 6)
    with pytest.raises(FormatError, match="unknown L1 format"):
        L.format_code("bfp16")


def test_bfp8_b_layout_exponents_first() -> None:
    x = np.zeros(32, np.float32)
    x[0], x[16] = 1.0, -8.0
    data = L.encode(x, 6)
    assert len(data) == 16 + 32  # two exponents padded to 16 bytes, then 32 datums
    assert data[:2].tolist() == [127, 130] and not data[2:16].any()
    assert data[16] == 0x40 and data[32] == 0xC0  # 1.0 and -8.0: hidden one at bit 6


def test_tile_order_is_four_row_major_faces() -> None:
    m = np.arange(1024).reshape(32, 32)
    t = L.tilize(m)
    assert t[:16].tolist() == list(range(16))  # face 0, row 0
    assert t[256:272].tolist() == list(range(16, 32))  # face 1, row 0
    assert t[512] == 16 * 32  # face 2 starts at row 16
    assert (L.untilize(t) == m).all()


def test_packer_rounding_and_flush_by_hand() -> None:
    def bf16(bits: int) -> int:
        raw = L.dst_encode_fp32(np.array([bits]))
        return int(L.pack_read(raw, True, 5)[0])
    assert bf16(0x3F808000) == 0x3F81  # a tie rounds away from zero
    assert bf16(0xBF808000) == 0xBF81
    assert bf16(0x3F807FFF) == 0x3F80
    assert bf16(0x7FC00001) == 0x7F80  # NaN -> Inf
    assert bf16(0x007FFFFF) == 0x0080  # rounds up into the smallest normal
    assert bf16(0x80400000) == 0  # exponent 0: +0, sign dropped


def _run(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(main, ["tensix", "run", *args])
    return r.exit_code, r.stderr


def test_cli_loads_and_dumps_l1(tmp_path: Path) -> None:
    prog = tmp_path / "p.s"
    prog.write_text("TTI_NOP\n")
    np.save(tmp_path / "x.npy", FLOATS.reshape(2, 16))
    out8, out16 = tmp_path / "b8.npy", tmp_path / "b16.npy"
    code, err = _run(str(prog), "--load", f"l1:0x1000:bfp8_b={tmp_path / 'x.npy'}",
                     "--dump", f"l1:0x1000:bfp8_b:32={out8}",
                     "--load", f"l1:0x2000:bf16={tmp_path / 'x.npy'}",
                     "--dump", f"l1:0x2000:bf16:32={out16}")
    assert code == 0, err
    assert (np.load(out8) == L.decode(L.encode(FLOATS, 6), 6, 32)).all()
    got = np.load(out16)
    # BF16 as the packer rounds FP32: ties away from zero (100.25 -> 100.5; numpy's
    # round-to-nearest-even gives 100.0), otherwise as ml_dtypes
    tie = FLOATS == np.float32(100.25)
    assert (got[tie] == 100.5).all()
    assert (got[~tie] == L.bf16_values(FLOATS)[~tie]).all()


@pytest.mark.parametrize("spec, message", [
    ("--dump=l1:0x1000:bf16=o.npy", "needs a count"),
    ("--load=l1:0x17FFF0:fp32=x.npy", "go beyond L1"),
    ("--load=l1:0x10:bfp9=x.npy", "unknown L1 format 'bfp9'"),
    ("--load=l1:zz:bf16=x.npy", "address must be a number"),
])
def test_cli_l1_errors_are_one_line(tmp_path: Path, spec: str, message: str) -> None:
    prog = tmp_path / "p.s"
    prog.write_text("TTI_NOP\n")
    np.save(tmp_path / "x.npy", FLOATS)
    option, value = spec.split("=", 1)
    value = value.replace("x.npy", str(tmp_path / "x.npy")).replace("o.npy",
                                                                    str(tmp_path / "o.npy"))
    code, err = _run(str(prog), option, value)
    assert code == 1 and message in err and err.count("\n") == 1, err
