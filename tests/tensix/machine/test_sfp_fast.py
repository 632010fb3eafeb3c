"""The Vector Unit's short ways must be invisible. Each has a switch; with it off the same
programs give the same LRegs, Dst, valid bits, RWCs, steps, rounds, per-thread counts and
errors (undefined-behaviour reports included):

* ``SfpBlocks.run_plans``: a loop found again with the same RWCs and configuration objects
  replays what its last pass worked out;
* ``SfpBlocks.quick_ops``: SFPLOADI and SFPNOP the short way;
* ``SfpBlocks.fused``: a loop of SFPLOAD, a MAD and SFPSTORE of its result (add1's) in one
  compiled call (its short way for exact products, ``SfpBlocks.fused_add``:
  ``test_sfp_add_fast.py``);
* ``SfpBlocks.compiled_bf16``: a single SFPLOAD/SFPSTORE's BF16 cells by a compiled call;
* ``fma.EAGER_WHEN_IMPORTED``: the compiled multiply-add loaded at once when numba is
  imported already (the same bits as numpy: ``test_sfpu_oracle.py``).

The programs exercise what must send an instruction the long way: lane flags, LaneConfig
(ENABLE_DEST_INDEX's TEN-2932 report, column exchange, row masks), SFPLOADMACRO's scheduled
work, back-door template loads (VD >= 12), ZEROACC'd Dst rows, 32-bit Dst."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from isaforge.tensix.machine.coprocessor import Coprocessor
from isaforge.tensix.machine.matrix import MatrixUnit
from isaforge.tensix.machine.sfpu import convert, fma, fma_jit, movement
from isaforge.tensix.machine.sfpu.block import SfpBlocks
from isaforge.tensix.machine.sfpu.movement import MovementMixin
from isaforge.tensix.machine.sfpu.ops import parse, sfp_names
from tests.refdata import requires

from ..switched import add1_on_off, counting
from .test_sfp_runs import _new, _run, _state, _unroll

SWITCHES = ("run_plans", "quick_ops", "fused", "compiled_bf16")

#: instructions that make the short ways step aside (besides the plain ones)
edge = st.one_of(
    st.builds(lambda v: f"TTI_SFPCONFIG({v:#x}, 15, 1)", st.sampled_from(
        [0, 0, 0x4, 0x44, 0x40, 0x10, 0x1000, 0x2])),  # LaneConfig (4: ENABLE_DEST_INDEX)
    st.builds(lambda c: f"TTI_SFPSETCC(0, {c}, 0, 4)", st.integers(0, 7)),
    st.just("TTI_SFPENCC(3, 0, 0, 10)"),
    st.just("TTI_SFPENCC(0, 0, 0, 0)"),
    st.builds(lambda vd, mod, imm: f"TTI_SFPLOADI({vd}, {mod}, {imm:#x})",
              st.integers(0, 15), st.sampled_from([0, 1, 2, 4, 8, 10, 3]),
              st.integers(0, 0xFFFF)),
    st.builds(lambda vd: f"TTI_SFPMAD(0, 10, 9, {vd}, 0)", st.integers(12, 15)),  # back door
    st.builds(lambda vd: f"TTI_SFPLOAD({vd}, 0, 0, 4)", st.integers(4, 15)),
    st.builds(lambda vd: f"TTI_SFPSTORE({vd}, 3, 0, 8)", st.integers(0, 15)),
    st.just("TTI_SFPNOP"),
    # SFPLOADMACRO: template 0 an SFPMAD (back door), macro 0 runs it after 1 cycle and
    # stores LReg 0 after 2 (tests/tensix/test_sfpu_loadmacro.py has the mechanics)
    st.just("TTI_SFPMAD(0, 10, 9, 12, 0)\nTTI_SFPLOADI(0, 10, 0x0c)\n"
            "TTI_SFPLOADI(0, 8, 0x1300)\nTTI_SFPCONFIG(0, 4, 0)\n"
            "TTI_SFPLOADMACRO(0, 0, 3, 16)"),
)
plain = st.one_of(
    st.builds(lambda vd, mod, a: f"TTI_SFPLOAD({vd}, {mod}, {a % 4}, {a})",
              st.integers(0, 7), st.sampled_from([0, 1, 2, 3, 4, 6, 12]), st.integers(0, 63)),
    st.builds(lambda vd, mod, a: f"TTI_SFPSTORE({vd}, {mod}, {a % 4}, {a})",
              st.integers(0, 7), st.sampled_from([0, 1, 2, 3, 4, 6, 12]), st.integers(0, 63)),
    st.builds(lambda a, b, c, d, m: f"TTI_SFPMAD({a}, {b}, {c}, {d}, {m})",
              st.integers(0, 11), st.integers(0, 11), st.integers(0, 11), st.integers(0, 7),
              st.integers(0, 3)),
    st.just("TTI_SFPNOP"),
)


def _program(body: list[str], fp32: int) -> str:
    """Thread 1 runs ``body`` while thread 2 does other things for a while (single
    instructions), then waits for it with thread 0 (runs and loops)."""
    wait = "TTI_SEMWAIT(511, 2, 1)"
    return "\n".join([
        f".config ALU_ACC_CTRL_SFPU_Fp32_enabled {fp32}",
        ".threadconfig ADDR_MOD_DST_SEC3_DestIncr 2",
        ".thread 0", wait, "ttsetrwc 0,0,0,0,0,15",
        ".thread 1", *body, "TTI_SFPNOP", "TTI_SFPNOP", "TTI_SEMPOST(2)",
        ".thread 2", *["ttincrwc 0,0,1,0"] * 6, wait, "ttsetrwc 0,0,0,0,0,15"]) + "\n"


def _compare(program: str, seed: int) -> None:
    fma_jit.load()  # (the compiled calls are taken only once loaded)
    results = []
    for on in (True, False):
        try:
            for switch in SWITCHES:
                setattr(SfpBlocks, switch, on)
            cp = _new(program, seed, False)
            cp.ub.mode = "continue" if seed % 2 else "stop"
            err = _run(cp)
        finally:
            for switch in SWITCHES:
                setattr(SfpBlocks, switch, True)
            results.append((err, _state(cp), [str(e) for e in cp.ub.events]))
    cp = _new(program, seed, False)
    cp.ub.mode = "continue" if seed % 2 else "stop"
    cp.units.sfpu.blocks = None  # (no short way at all: Sfpu._issue)
    results.append((_run(cp), _state(cp), [str(e) for e in cp.ub.events]))
    assert results[0] == results[1] == results[2]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(plain, edge), min_size=2, max_size=40), st.integers(0, 1),
       st.integers(0, 1 << 30))
def test_edge_cases_on_and_off(body: list[str], fp32: int, seed: int) -> None:
    _compare(_program(["TTI_SFPENCC(3, 0, 0, 10)", *body], fp32), seed)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(edge, max_size=3), st.integers(4, 12), st.integers(1, 3), st.integers(0, 1),
       st.integers(0, 1 << 30))
def test_loops_found_again_on_and_off(prefix: list[str], reps: int, again: int, fp32: int,
                                      seed: int) -> None:
    """add1's loop several times over, after edge cases (LaneConfig, flags, a macro): a
    replayed plan must step aside where a fresh one would."""
    body = [("TTI_SFPLOAD(0, 0, 3, {addr})", 0, 2), ("TTI_SFPADD(0, 10, 1, 0, 0)", 0, 0),
            ("TTI_SFPNOP", 0, 0), ("TTI_SFPSTORE(0, 0, 3, {addr})", 0, 2)]
    loop = ["ttsetrwc 0,0,0,0,0,15", "TTI_SFPLOADI(1, 0, 0x3f80)", *_unroll(body, reps)]
    program = _program([*loop, *prefix, *loop * again], fp32)
    _compare(program, seed)


@pytest.mark.parametrize(("cls", "method"), [(MatrixUnit, "advance"),
                                             (MovementMixin, "x_sfploadi")])
def test_add1_on_and_off(cls: type, method: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """add1 (inf, nan and denormal inputs too): the same outputs and counts; the short
    ways were taken (the slow path's method is called less)."""
    calls = counting(monkeypatch, cls, method)

    def switch(on: bool) -> None:
        for name in SWITCHES:
            monkeypatch.setattr(SfpBlocks, name, on)

    on, off = add1_on_off(monkeypatch, switch, 15, [calls])
    assert on[0] < off[0]


@pytest.mark.parametrize("vd", [0, 3, 4, 7, 12])
@pytest.mark.parametrize("lane_config", [0, 4])
def test_sfpnop_reports_ten2932_either_way(vd: int, lane_config: int,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """An SFPNOP word with VD 4..7 (the coprocessor's decoder gives VD 0; a word issued
    another way may not) under ENABLE_DEST_INDEX is reported (TEN-2932) with the short
    way on and off, as the handler does it; otherwise it does nothing."""
    word = next(op for op, name in sfp_names().items() if name == "SFPNOP") << 24 | vd << 4
    seen = []
    for on in (True, False):
        monkeypatch.setattr(SfpBlocks, "quick_ops", on)
        cp = Coprocessor(ub="continue")
        cp.lane_config[:] = lane_config
        before = cp.lreg.copy()
        sfpu = cp.units.sfpu
        op = parse("SFPNOP", word)
        if not sfpu.blocks.nop(1, op):  # (what the SFPNOP handler does)
            sfpu._issue(1, op)
        seen.append((len(cp.ub.events), cp.lreg.tobytes() == before.tobytes()))
    assert seen[0] == seen[1]
    assert seen[0] == (int(lane_config == 4 and 4 <= vd < 8), True)


def test_fma_loads_at_once_when_numba_is_imported(monkeypatch: pytest.MonkeyPatch) -> None:
    """With numba imported the compiled multiply-add is used from the first call; with the
    switch off only after JIT_AFTER calls."""
    requires("numba", "the SFPU's compiled multiply-add loading at once")
    assert "numba" in sys.modules
    loaded = fma_jit.load()
    for eager, expect in ((True, loaded), (False, None)):
        monkeypatch.setattr(fma, "EAGER_WHEN_IMPORTED", eager)
        monkeypatch.setattr(fma, "USE_JIT", True)
        monkeypatch.setattr(fma_jit, "_LOADED", {})  # (not loaded yet)
        monkeypatch.setattr(fma_jit, "load", lambda: loaded)
        monkeypatch.setattr(fma, "_STATE", {"calls": 0})
        assert fma.kernel() is expect
        x = np.arange(32, dtype=np.uint32) * 0x01234567
        assert np.array_equal(fma.fma(x, x[::-1].copy(), x), fma.fma_bh(x, x[::-1], x))


def _mad_loop(lvd: int, lmod: int, a: int, b: int, c: int, d: int, mod: int, svd: int,
              smod: int, shift: int, stride: int, nop: bool) -> list[tuple[str, int, int]]:
    body = [(f"TTI_SFPLOAD({lvd}, {lmod}, 0, {{addr}})", 0, stride),
            (f"TTI_SFPMAD({a}, {b}, {c}, {d}, {mod})", 0, 0),
            (f"TTI_SFPSTORE({svd}, {smod}, 0, {{addr}})", shift, stride)]
    return [*body[:2], ("TTI_SFPNOP", 0, 0), body[2]] if nop else body


reg = st.sampled_from([0, 1, 2, 9, 10])
mad_loop = st.builds(_mad_loop, st.sampled_from([0, 1, 2]), st.sampled_from([0, 0, 2, 1, 6]),
                     reg, reg, reg, st.sampled_from([0, 1, 2]), st.integers(0, 3),
                     st.sampled_from([0, 1, 2, 9]), st.sampled_from([0, 0, 2, 1, 3]),
                     st.sampled_from([0, 0, 2, 4, 64, 1]), st.sampled_from([2, 4, 0]),
                     st.booleans())


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mad_loop, st.integers(4, 16), st.integers(0, 1), st.integers(0, 1 << 30))
def test_fused_loops_on_and_off(body: list[tuple[str, int, int]], reps: int, fp32: int,
                                seed: int) -> None:
    """Loops of SFPLOAD, a MAD (any operand the loaded register or not, negations) and
    SFPSTORE (of the MAD's result or not; the same cells, others, overlapping ones):
    compiled in one call or not, and one at a time, the same."""
    fma_jit.load()  # (the fused path needs the compiled kernels)
    program = _program(["TTI_SFPLOADI(1, 0, 0x3f80)", "TTI_SFPLOADI(2, 0, 0xbfc0)",
                        *_unroll(body, reps)], fp32)
    results = []
    for fused in (True, False):
        try:
            SfpBlocks.fused = fused
            cp = _new(program, seed, False)
            results.append((_run(cp), _state(cp)))
        finally:
            SfpBlocks.fused = True
    one = _new(program, seed, True)  # (a hook: one instruction at a time)
    results.append((_run(one), _state(one)))
    assert results[0] == results[1] == results[2]


def test_add1_loop_is_fused() -> None:
    """add1's loop (load, add 1.0, nop, store in place) takes the compiled call, and other
    loops do not (where it would not be what the pass gives)."""
    fma_jit.load()
    add1 = [("TTI_SFPLOAD(0, 0, 3, {addr})", 0, 2), ("TTI_SFPADD(0, 10, 1, 0, 0)", 0, 0),
            ("TTI_SFPNOP", 0, 0), ("TTI_SFPSTORE(0, 0, 3, {addr})", 0, 2)]
    # (each iteration stores to the cells the one before loaded: a pass, not the call)
    shifted = [*add1[:3], ("TTI_SFPSTORE(0, 0, 3, {addr})", 1022, 2)]
    seen = []
    for body in (add1, shifted):
        cp = _new(_program(["TTI_SFPLOADI(1, 0, 0x3f80)", *_unroll(body, 16)], 0), 3, False)
        assert _run(cp) is None
        plans = [p for p in cp.units.sfpu.blocks._plans.values() if p is not None]
        seen.append([p.fused is not None for p in plans])
    assert seen == [[True], [False]]


@pytest.mark.parametrize("add", [0, fma_jit.ADD_FAST])
@pytest.mark.parametrize("sel", [1, 2, 4, 3, 7])
def test_fused_kernel_every_cell(sel: int, add: int) -> None:
    """The compiled load-MAD-store call converts as SFPLOAD/SFPSTORE's BF16 modes do, for
    every Dst cell (and every stored result pattern the MAD gives from them); with its short
    way for exact products (lane 0's factor is 1.0) too."""
    fma_jit.load()
    kernel = fma.compiled("load_mad_store")
    assert kernel is not None
    rng = np.random.default_rng(sel)
    cells = np.arange(1 << 16, dtype=np.uint16)
    rows = [rng.integers(0, 1 << 32, 32, dtype=np.uint64).astype(np.uint32) for _ in range(3)]
    rows[0][:4] = [0x3F800000, 0, 0x80000000, 0x7F800000]
    flat = cells.copy()
    at = rng.permutation(1 << 16).astype(np.int64)
    last_v = np.empty(32, dtype=np.uint32)
    last_d = np.empty(32, dtype=np.uint32)
    fast = kernel(flat, at, at, *rows, sel | add, 0x80000000 if sel & 1 else 0, 0, last_v,
                  last_d)
    assert (fast > 0) == (add != 0)
    loaded = convert.load_convert(convert.BF16, cells[at], np.zeros(1 << 16, np.uint32))
    tiled = [np.tile(r, (1 << 16) // 32) for r in rows]
    ops = [loaded if sel & bit else r for bit, r in zip((1, 2, 4), tiled, strict=True)]
    ops[1] = ops[1] ^ np.uint32(0x80000000 if sel & 1 else 0)
    result = fma.fma_bh(*ops)
    expect = cells.copy()
    expect[at] = convert.store_convert(convert.BF16, result).astype(np.uint16)
    assert np.array_equal(flat, expect)
    assert np.array_equal(last_v, loaded[-32:]) and np.array_equal(last_d, result[-32:])


def test_single_bf16_kernels_every_cell() -> None:
    """The single SFPLOAD/SFPSTORE calls convert as the BF16 modes do, for every cell and
    every stored word's high half (with denormal and zero exponents)."""
    fma_jit.load()
    load, store = fma.compiled("load_bf16"), fma.compiled("store_bf16")
    assert load is not None and store is not None
    cells = np.arange(1 << 16, dtype=np.uint16)
    at = np.random.default_rng(1).permutation(1 << 16).astype(np.int64)
    out = np.empty(1 << 16, dtype=np.uint32)
    load(cells, at, out)
    zeros = np.zeros(1 << 16, np.uint32)
    assert np.array_equal(out, convert.load_convert(convert.BF16, cells[at], zeros))
    words = (np.arange(1 << 16, dtype=np.uint32) << 16) | np.uint32(0x1234)
    flat = np.zeros(1 << 16, dtype=np.uint16)
    store(flat, at, words)
    assert np.array_equal(flat[at], convert.store_convert(convert.BF16, words))


def test_sfpu_regs_follow_the_words_they_read() -> None:
    """SFPLOAD/SFPSTORE's settings are found by the Config words they read: writing one of
    them changes them, writing another word keeps the same object."""
    cp = Coprocessor()
    sfpu = cp.units.sfpu
    first = sfpu._regs(1)
    cp.config.set("ALU_ACC_CTRL_SFPU_Fp32_enabled", 1)
    assert sfpu._regs(1).srcb_mode == convert.FP32 != first.srcb_mode
    cp.config.set("ALU_ACC_CTRL_SFPU_Fp32_enabled", 0)
    assert sfpu._regs(1) is first
    cp.config.set("DEST_REGW_BASE_Base", 5)
    assert sfpu._regs(1).regw_base == 5
    cp.config.set("DEST_REGW_BASE_Base", 0)
    assert 200 not in movement._config_words()
    cp.config.words[0, 200] ^= 1  # a word _SfpuRegs does not read
    assert sfpu._regs(1) is first
