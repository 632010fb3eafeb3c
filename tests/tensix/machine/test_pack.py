"""The packer (PACR) beyond the oracle: the compiled kernel against the numpy reference on
random Dst contents of every conversion, runs of PACRs against one at a time, the counters
and addresses a tile's PACRs walk through, and the clear refusals of what is not modelled."""

from __future__ import annotations

import numpy as np
import pytest

from isaforge.tensix import Coprocessor, assemble
from isaforge.tensix.machine import l1formats as L
from isaforge.tensix.machine import l1formats_jit, pack
from isaforge.tensix.machine.state import NotImplementedInstruction
from tests.refdata import missing

OUT = 0x1000

#: (Read_32b_data, intermediate, output) of every conversion the packer implements
CONVERSIONS = sorted((m >> 8, m >> 4 & 15, m & 15) for m in L.PACK_MODES if m not in (0x1A, 0x11A))


def _packer(rng: np.random.Generator, read32: int, inter: int, out: int, *,
            relu: int = 0, edge: tuple[int, int] = (0xFFFF, 0xFFFF), plane: int = 16,
            exp_section: int = 1) -> Coprocessor:
    cp = Coprocessor()
    c = cp.config
    c.set("PCK_DEST_RD_CTRL_Read_32b_data", read32)
    c.set("PCK_DEST_RD_CTRL_Round_10b_mant", int((read32, inter, out) == (1, 1, 1)))
    c.set("ALU_FORMAT_SPEC_REG2_Dstacc", inter)
    c.set("THCON_SEC0_REG1_In_data_format", inter)
    c.set("THCON_SEC0_REG1_Out_data_format", out)
    c.set("PACK_COUNTERS_SEC0_pack_reads_per_xy_plane", plane)
    c.set("PCK_EDGE_OFFSET_SEC0_mask", edge[0])
    c.set("PCK_EDGE_OFFSET_SEC1_mask", edge[1])
    for r in range(0, 16, 3):
        c.set(f"TILE_ROW_SET_MAPPING_0_row_set_mapping_{r}", 1)
    c.set("THCON_SEC0_REG1_L1_Dest_addr", OUT // 16 - 1)
    c.set("THCON_SEC0_REG1_Exp_section_size", exp_section)
    size = {0: 4, 1: 2, 2: 1, 5: 2, 6: 1, 8: 4, 9: 2, 14: 1}[inter]
    c.set("PCK0_ADDR_CTRL_XY_REG_0_Ystride", 16 * size)
    if relu:
        c.set("STACC_RELU_ApplyRelu", relu)
        c.set("STACC_RELU_ReluThreshold", int(rng.integers(0, 0x8000)))
    cp.thread_config.regs[2, 37] = 4  # ADDR_MOD_PACK_SEC0: next four rows
    cp.dst.bits[:] = rng.integers(0, 1 << 16, cp.dst.bits.shape, dtype=np.uint16)
    cp.dst.valid[:] = rng.random(1024) < 0.9
    cp.adc.set(2, 2, 1, 0, 15)
    return cp


def _tile(n: int = 4) -> list[int]:
    return assemble("TTI_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)\n" * (n - 1)
                    + "TTI_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1)")


def _l1(cp: Coprocessor) -> np.ndarray:
    return cp.memory.l1[OUT:OUT + 0x400].copy()  # type: ignore[attr-defined]


@pytest.mark.parametrize("mode", CONVERSIONS, ids=lambda m: f"r{m[0]}_{m[1]}to{m[2]}")
def test_compiled_kernel_equals_numpy_reference(mode: tuple[int, int, int],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    read32, inter, out = mode
    kernel = l1formats_jit.load()
    if kernel is None:
        missing("NUMBA MISSING: the packer's compiled kernel is not tested")
    for seed in range(3):
        relu = seed if inter in (0, 1, 2, 5, 6) else (1 if inter == 8 and seed else 0)
        got = []
        for use_jit in (False, True):
            monkeypatch.setattr(pack, "USE_JIT", use_jit)
            monkeypatch.setitem(pack._JIT_STATE, "calls", 1 << 30)
            rng = np.random.default_rng(seed)
            cp = _packer(rng, read32, inter, out, relu=relu, edge=(0xFFFF, 1), plane=4)
            cp.set_stream(2, _tile())
            cp.run(max_steps=100)
            got.append(_l1(cp))
        assert (got[0] == got[1]).all(), f"seed {seed}: compiled and numpy paths differ"


@pytest.mark.parametrize("out", [5, 6, 7, 0])
def test_a_run_equals_one_pacr_at_a_time(out: int) -> None:
    inter = {6: 6, 7: 6, 5: 5, 0: 0}[out]
    results = []
    for one_at_a_time in (False, True):
        rng = np.random.default_rng(out)
        cp = _packer(rng, 1, inter, out, exp_section=0, edge=(0xFFFF, 0xF0F0), plane=3)
        cp.load_program({2: assemble("ttreplay 0,8,0,1") + _tile(8) + assemble(
            "ttreplay 0,8,0,0")})
        if one_at_a_time:  # an insn hook makes every instruction execute alone
            cp.hook_add("insn", lambda *args: None)
        runs: list[int] = []
        real = cp.units.pack.pacr_run
        def spy(t: int, w: list[int], n: int, runs: list[int] = runs,
                real: object = real) -> int:
            runs.append(real(t, w, n))  # type: ignore[operator]
            return runs[-1]

        cp._runners[0x41] = spy
        cp.run(max_steps=100)
        assert runs == ([] if one_at_a_time else [8])
        results.append((_l1(cp), cp.adc.v[2].copy(), cp.units.pack.state.key()))
    (l1a, adca, sta), (l1b, adcb, stb) = results
    assert (l1a == l1b).all() and (adca == adcb).all() and sta == stb
    assert l1a.any()


def test_tile_of_pacrs_walks_rows_and_output_and_last_closes_it() -> None:
    rng = np.random.default_rng(0)
    cp = _packer(rng, 1, 5, 5)
    cp.dst.valid[:] = True
    cp.set_stream(2, _tile(3)[:2])  # two PACRs, no Last: the tile stays open
    cp.run()
    st = cp.units.pack.state
    assert st.active and st.data_addr == OUT + 2 * 64 * 2
    assert cp.adc.get(2, 2, 0, 1) == 8  # channel 0 Y: four rows per PACR
    cp.set_stream(2, _tile(1))  # Last
    cp.run()
    assert not st.active and st.data_addr == OUT + 3 * 64 * 2
    want = L.pack_read(cp.dst.read32(range(12)).reshape(-1), True, 5)
    got = cp.memory.l1[OUT:OUT + 384].view("<u2")  # type: ignore[attr-defined]
    assert (got == want).all()


@pytest.mark.parametrize("word, message", [
    ("TTI_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1)", "Flush=1"),
    ("TTI_PACR(0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1)", "RowPadZero=1"),
    ("TTI_PACR(0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1)", "ZeroWrite=1"),
    ("TTI_PACR(0, 0, 0, 0, 0, 0, 6, 0, 0, 0, 0, 1)", "ReadIntfSel=6"),
])
def test_unmodelled_pacr_forms_are_clear_errors(word: str, message: str) -> None:
    cp = _packer(np.random.default_rng(0), 1, 5, 5)
    cp.set_stream(2, assemble(word))
    with pytest.raises(NotImplementedInstruction, match=f"thread 2: not implemented: PACR: "
                                                        f"{message}"):
        cp.run()


def test_unimplemented_conversion_is_a_clear_error() -> None:
    cp = _packer(np.random.default_rng(0), 1, 5, 1)  # FP32 Dst, BF16 -> FP16: no such path
    cp.set_stream(2, _tile(1))
    with pytest.raises(NotImplementedInstruction, match="intermediate format 5 to 1"):
        cp.run()


def test_pack_l1_acc_adds_to_l1() -> None:
    rng = np.random.default_rng(0)
    cp = _packer(rng, 1, 0, 0)
    cp.config.set("THCON_SEC0_REG1_Pack_L1_Acc", 1)
    cp.dst.valid[:] = True
    cp.dst.write("fp32", np.full((4, 16), 1.5, np.float32))
    cp.memory.l1[OUT:OUT + 256] = np.full(64, 2.25, "<f4").view(np.uint8)  # type: ignore
    cp.set_stream(2, _tile(1))
    cp.run()
    assert (cp.memory.l1[OUT:OUT + 256].view("<f4") == 3.75).all()  # type: ignore
