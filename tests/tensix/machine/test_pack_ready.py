"""PACRs from prepared plans (``Packer.ready_plans``: a repeated PACR, or run of PACRs, is one
compiled call of a plan prepared the first time) must be invisible: the same L1 bytes, the
same ``l1_written`` calls in the same order, the same counters and packer state, the same
undefined-behaviour reports and refusals, and for add1 and a matmul the same outputs and every
count, with the switch on and off. Each comparison also checks the prepared path was taken
when it may be (else it compares nothing)."""

from __future__ import annotations

import copy
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from isaforge.tensix import Coprocessor, assemble
from isaforge.tensix.machine import l1formats as L
from isaforge.tensix.machine import l1formats_jit, pack
from isaforge.tensix.machine.l1 import L1Memory
from isaforge.tensix.machine.pack import Packer
from isaforge.tensix.machine.state import NotImplementedInstruction
from tests.refdata import missing

from ..switched import add1_on_off, matmul_on_off, setting

OUT = 0x1000
#: (Read_32b_data, intermediate, output) of every conversion the packer implements
MODES = sorted((m >> 8, m >> 4 & 15, m & 15) for m in L.PACK_MODES)
SIZE = {0: 4, 1: 2, 2: 1, 5: 2, 6: 1, 8: 4, 9: 2, 14: 1}


class Watched(L1Memory):
    """An L1 that records what the packer tells its watchers, with what L1 then held there."""

    def __init__(self, size: int = 1 << 16) -> None:
        super().__init__(size)
        self.calls: list[tuple[int, int, bytes]] = []

    def l1_written(self, addr: int, size: int) -> None:
        self.calls.append((addr, size, self.l1[addr:addr + size].tobytes()))


@pytest.fixture(autouse=True)
def kernel() -> None:
    if l1formats_jit.load() is None:
        missing("NUMBA MISSING: prepared PACR plans need the compiled kernel")
    pack._jit()


def _count_ready(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the PACRs (or runs) executed from prepared plans."""
    done = [0]
    real = Packer._run_ready

    def counted(self: Packer, *a: object) -> bool:
        ok = real(self, *a)  # type: ignore[arg-type]
        done[0] += ok
        return ok

    monkeypatch.setattr(Packer, "_run_ready", counted)
    return done


def _packer(mode: tuple[int, int, int], variant: int, memory: L1Memory) -> Coprocessor:
    read32, inter, out = mode
    cp = Coprocessor(ub="continue", memory=memory)
    c = cp.config
    c.set("PCK_DEST_RD_CTRL_Read_32b_data", read32)
    c.set("PCK_DEST_RD_CTRL_Round_10b_mant", int(bool(read32) and inter == 1 and out in (1, 10)))
    c.set("ALU_FORMAT_SPEC_REG2_Dstacc", inter)
    c.set("THCON_SEC0_REG1_In_data_format", inter)
    c.set("THCON_SEC0_REG1_Out_data_format", out)
    c.set("THCON_SEC0_REG1_Pac_LF8_4b_exp", 1)
    c.set("PACK_COUNTERS_SEC0_pack_reads_per_xy_plane", (16, 4, 3)[variant])
    c.set("PCK_EDGE_OFFSET_SEC0_mask", (0xFFFF, 0xFFFF, 0x0FF1)[variant])
    c.set("PCK_EDGE_OFFSET_SEC1_mask", (0xFFFF, 1, 0xF0F0)[variant])
    for r in range(0, 16, 3):
        c.set(f"TILE_ROW_SET_MAPPING_0_row_set_mapping_{r}", 1)
    c.set("THCON_SEC0_REG1_L1_Dest_addr", OUT // 16 - 1)
    c.set("THCON_SEC0_REG1_Exp_section_size", (1, 0, 2)[variant])
    c.set("PCK0_ADDR_CTRL_XY_REG_0_Ystride", 16 * SIZE[inter])
    relu = variant if inter in (0, 1, 2, 5, 6) else int(inter == 8 and variant > 0)
    if relu:
        c.set("STACC_RELU_ApplyRelu", relu)
        c.set("STACC_RELU_ReluThreshold", 0x1234)
    if variant == 2:
        c.set("DEST_ACCESS_CFG_remap_addrs", 1)
        c.set("DEST_ACCESS_CFG_swizzle_32b", 1)
    cp.thread_config.regs[2, 37] = 4  # ADDR_MOD_PACK_SEC0: next four rows
    cp.adc.set(2, 2, 1, 0, 15)
    return cp


def _tiles(cp: Coprocessor, program: list[int], seed: int, tiles: int = 3,
           alone: bool = False) -> list[object]:
    """Pack ``tiles`` times from the same counters, new Dst contents and valid rows each
    time; what each tile left."""
    rng = np.random.default_rng(seed)
    adc = cp.adc.v.copy()
    if alone:  # an insn hook makes every instruction execute alone (no runs of PACRs)
        cp.hook_add("insn", lambda *args: None)
    seen: list[object] = []
    for _ in range(tiles):
        cp.dst.bits[:] = rng.integers(0, 1 << 16, cp.dst.bits.shape, dtype=np.uint16)
        cp.dst.valid[:] = rng.random(1024) < 0.8
        cp.adc.v[:] = adc
        cp.set_stream(2, program)
        cp.run(max_steps=1000)
        memory = cp.memory
        assert isinstance(memory, Watched)
        seen.append((memory.l1.tobytes(), list(memory.calls), cp.adc.v.tobytes(),
                     cp.units.pack.state.key(), [str(e) for e in cp.ub_events]))
    return seen


def _program(n: int) -> list[int]:
    return assemble("TTI_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)\n" * (n - 1)
                    + "TTI_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1)")


@pytest.mark.parametrize("alone", [False, True], ids=["runs", "single"])
@pytest.mark.parametrize("variant", [0, 1, 2])
@pytest.mark.parametrize("mode", MODES, ids=lambda m: f"r{m[0]}_{m[1]}to{m[2]}")
def test_ready_plans_on_and_off(mode: tuple[int, int, int], variant: int, alone: bool,
                                monkeypatch: pytest.MonkeyPatch) -> None:
    done = _count_ready(monkeypatch)
    got = {}
    for on in (True, False):
        monkeypatch.setattr(Packer, "ready_plans", on)
        before = done[0]
        cp = _packer(mode, variant, Watched())
        got[on] = _tiles(cp, _program(4), seed=sum(mode) + variant, alone=alone)
        got[on, "ready"] = done[0] - before
    assert got[True] == got[False]
    assert got[False, "ready"] == 0
    if not got[True][-1][4]:  # nothing undefined: the later tiles are prepared plans
        assert got[True, "ready"] >= (8 if alone else 2)


def test_undefined_behaviour_is_reported_every_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """A negative ReLU threshold (every PACR) and writing beyond L1 (the last two PACRs of
    each tile, 128 bytes each from OUT): reported each time, on or off."""
    done = _count_ready(monkeypatch)
    for setup, reports, ready in (("relu", 4 * 3, 0), ("beyond", 2 * 3, 2 * 3)):
        got = {}
        for on in (True, False):
            monkeypatch.setattr(Packer, "ready_plans", on)
            before = done[0]
            cp = _packer((0, 5, 5), 0, Watched(OUT + 0x100 if setup == "beyond" else 1 << 16))
            if setup == "relu":
                cp.config.set("STACC_RELU_ApplyRelu", 1)
                cp.config.set("STACC_RELU_ReluThreshold", 0x8001)
            got[on] = _tiles(cp, _program(4), seed=5, alone=True)
            got[on, "ready"] = done[0] - before
        assert got[True] == got[False]
        assert len(got[True][-1][4]) == reports
        assert (got[True, "ready"], got[False, "ready"]) == (ready, 0)


def test_a_refused_conversion_stays_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """FP8 e5m2 and ReLU on INT8 are refused by the numpy path: the compiled kernel (which
    would pack them) is not used for them either, on or off."""
    for on in (True, False):
        monkeypatch.setattr(Packer, "ready_plans", on)
        for mode, relu, message in (((0, 1, 10), 0, "e5m2"), ((1, 14, 14), 1, "ReLU with")):
            cp = _packer(mode, 0, Watched())
            cp.config.set("THCON_SEC0_REG1_Pac_LF8_4b_exp", 0)
            cp.config.set("STACC_RELU_ApplyRelu", relu)
            cp.set_stream(2, _program(2))
            with pytest.raises(NotImplementedInstruction, match=message):
                cp.run()


def test_l1_watched_by_a_core_wakes_it_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """add1 (whose cores wait on L1 the packer writes), on and off: outputs and counts."""
    done = _count_ready(monkeypatch)
    on, off = add1_on_off(monkeypatch, setting(monkeypatch, Packer, "ready_plans"), 30, [done])
    assert on[0] > 100 and off[0] == 0


def test_matmul_on_and_off(monkeypatch: pytest.MonkeyPatch, made: tuple[list, list]) -> None:
    matmul_on_off(setting(monkeypatch, Packer, "ready_plans"), 31, made)


def test_the_kernel_loads_at_once_when_numba_is_imported() -> None:
    """JIT_AFTER waits only while numba is not imported (loading it is what it saves)."""
    src = Path(pack.__file__).parents[3]
    code = ("import sys\nfrom isaforge.tensix.machine import pack\n"
            "first = pack._jit() is None\n"
            "import numba\n"
            "print(first, pack._jit() is not None, pack._JIT_STATE['calls'])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(src)}, timeout=300,
                         check=True).stdout
    assert out.split() == ["True", "True", "2"]


@pytest.mark.parametrize("on", [True, False])
def test_replaced_configuration_arrays_are_read_again(on: bool,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Config.words and ThreadConfig.regs replaced (new arrays) between tiles: the packer reads
    the new values, as a coprocessor configured so from the start does."""
    monkeypatch.setattr(Packer, "ready_plans", on)

    def fresh(out: int, addr_mod: int) -> Coprocessor:
        cp = _packer((0, 5, out), 1, Watched())
        cp.thread_config.regs[2, 37] = addr_mod
        return cp

    cp = fresh(5, 4)
    _tiles(cp, _program(4), seed=7, tiles=2)
    words = np.array(fresh(0, 4).config.words)
    regs = np.array(cp.thread_config.regs)
    regs[2, 37] = 2  # ADDR_MOD_PACK_SEC0: next two rows
    cp.config.words = words
    cp.thread_config.regs = regs
    cp.adc.v[:] = fresh(0, 2).adc.v
    cp.memory.calls.clear()  # type: ignore[attr-defined]
    got = _tiles(cp, _program(4), seed=8, tiles=2)
    want = _tiles(fresh(0, 2), _program(4), seed=8, tiles=2)
    assert [g[1:4] for g in got] == [w[1:4] for w in want]


def test_a_deep_copy_reads_its_own_configuration() -> None:
    """The packer of a deep copy reads the copy's Config and ThreadConfig, the original's
    keeps reading its own (the PackRegs caches hold nothing of either's arrays)."""
    cp = _packer((0, 5, 5), 0, Watched())
    cp.thread_config.regs.touch()
    assert cp.units.pack.regs(2).out == 5
    dup = copy.deepcopy(cp)
    dup.config.set("THCON_SEC0_REG1_Out_data_format", 0)
    dup.thread_config.regs[2, 37] = 2
    assert (dup.units.pack.regs(2).out, dup.units.pack.regs(2).addr_mods[0][0]) == (0, 2)
    cp.thread_config.regs.touch()
    assert (cp.units.pack.regs(2).out, cp.units.pack.regs(2).addr_mods[0][0]) == (5, 4)


def test_regs_are_found_again_by_content(monkeypatch: pytest.MonkeyPatch) -> None:
    """Configuration writes that change nothing the packer reads (another thread's
    ThreadConfig, the other Config bank), or that come back to values seen before, find the
    same PackRegs without reading them again; a write it reads gives new ones."""
    reads = [0]
    real = pack.read_regs

    def counted(*a: object) -> pack.PackRegs:
        reads[0] += 1
        return real(*a)  # type: ignore[arg-type]

    monkeypatch.setattr(pack, "read_regs", counted)
    cp = _packer((0, 5, 5), 0, Watched())
    pk = cp.units.pack
    first = pk.regs(2)
    assert reads[0] == 1
    cp.thread_config.regs[0, 37] = 7  # thread 0's ADDR_MOD_PACK_SEC0
    cp.config.words[1, 5] ^= 1  # the other bank
    assert pk.regs(2) is first and reads[0] == 1
    cp.config.set("THCON_SEC0_REG1_Out_data_format", 0, state=0)
    assert pk.regs(2).out == 0 and reads[0] == 2
    cp.config.set("THCON_SEC0_REG1_Out_data_format", 5, state=0)
    assert pk.regs(2) is first and reads[0] == 2


def test_a_run_of_the_same_words_again_is_cut_the_same() -> None:
    """pacr_run takes the head of the pending words it took last time at once when they come
    again (PACRs, the last alone with Last, within the limit): every other head is worked
    out word by word; both give the same run."""
    tile = _program(4)
    nop = assemble("ttincrwc 0,0,1,0")
    cases = [(tile, 10), (tile, 4), (tile, 3), (tile + tile, 10), (tile[:2] + nop + tile, 10),
             (tile[:3], 10), (tile[:3] + tile[3:], 2), (nop + tile, 10)]
    for words, limit in cases:
        got = []
        for primed in (True, False):
            cp = _packer((0, 5, 5), 0, Watched())
            pk = cp.units.pack
            assert pk.pacr_run(2, tile, 10) == 4
            if not primed:
                pk._last_run = ()
            n = pk.pacr_run(2, words, limit)
            got.append((n, cp.memory.l1.tobytes(), cp.adc.v.tobytes(), pk.state.key()))
        assert got[0] == got[1], (words, limit)
