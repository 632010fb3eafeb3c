"""The bundled whole-tile program (``isaforge/examples/tensix/programs/matmul_l1.s``): two BF16
tiles unpacked from L1, multiplied on the Matrix Unit, made absolute and converted to BF16 by
the SFPU (SFPABS, SFPSTORE), packed
back to L1, against numpy; run through ``isaforge tensix run`` with ``--load l1:`` and
``--dump l1:``, and through the API."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import numpy as np
from click.testing import CliRunner

from isaforge.cli import main
from isaforge.tensix import Coprocessor
from isaforge.tensix.machine import l1formats as L

PROGRAM = resources.files("isaforge") / "examples" / "tensix" / "programs" / "matmul_l1.s"
A_AT, B_AT, C_AT = 0x10000, 0x20000, 0x30000


def _truncate_bf16(x: np.ndarray) -> np.ndarray:
    """What the SFPU's SFPSTORE BF16 keeps of FP32 values: the top 16 bits."""
    return (np.asarray(x, np.float32).view(np.uint32) & 0xFFFF0000).view(np.float32)


def test_cli_runs_the_tile_through_l1_and_matches_numpy(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    a = rng.integers(-8, 9, (32, 32)).astype(np.float32)
    b = rng.integers(-8, 9, (32, 32)).astype(np.float32)
    np.save(tmp_path / "A.npy", L.tilize(a))
    np.save(tmp_path / "B.npy", L.tilize(b))
    out = tmp_path / "C.npy"
    result = CliRunner().invoke(main, [
        "tensix", "run", str(PROGRAM),
        "--load", f"l1:{A_AT:#x}:bf16={tmp_path / 'A.npy'}",
        "--load", f"l1:{B_AT:#x}:bf16={tmp_path / 'B.npy'}",
        "--dump", f"l1:{C_AT:#x}:bf16:1024={out}"])
    assert result.exit_code == 0, result.output
    c = L.untilize(np.load(out))
    exact = (a.astype(np.float64) @ b).astype(np.float32)  # small integers: exact in FP32
    assert (c == _truncate_bf16(np.abs(exact))).all()
    assert (exact < 0).any(), "SFPABS shows on these values"
    assert (c != exact).any(), "the SFPU's BF16 truncation shows on these values"


def test_api_random_bf16_tiles_match_numpy_to_bf16_precision() -> None:
    rng = np.random.default_rng(4)
    a = L.bf16_values(rng.standard_normal((32, 32)))
    b = L.bf16_values(rng.standard_normal((32, 32)))
    cp = Coprocessor()
    cp.load_program(PROGRAM.read_text(), "matmul_l1.s")
    l1 = cp.memory.l1  # type: ignore[attr-defined]
    for at, m in ((A_AT, a), (B_AT, b)):
        data = L.encode(L.tilize(m), 5)
        l1[at:at + len(data)] = data
    res = cp.run(max_steps=10_000)
    assert res.per_thread[0] == 3 and res.per_thread[2] == 20  # 3 unpack; 16 PACRs + 4
    c = L.untilize(L.decode(l1[C_AT:C_AT + 2048], 5, 1024))
    assert (c >= 0).all()
    want = np.abs(a.astype(np.float64) @ b)
    # HiFi4 BF16 products are exact; the Matrix Unit aligns each group of eight products to
    # the largest (error relative to the sum of magnitudes), the SFPU truncates to BF16 (2**-7
    # of the value)
    scale = np.abs(a).astype(np.float64) @ np.abs(b)
    err = np.abs(c - want)
    assert np.all(err <= np.abs(want) * 2.0 ** -7 + scale * 2.0 ** -12)
    assert np.median(err / np.abs(want)) < 2.0 ** -8
    assert not cp.units.pack.state.active
    assert (l1[C_AT + 2048:C_AT + 2064] == 0).all()
