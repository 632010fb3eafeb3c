"""The unpackers' and the Matrix Unit's fast paths (UNPACR plans and the resolved fields and
configuration behind them, the compiled UNPACR of 16-bit datums, MOVA2D plans, SETRWC and
ZEROACC results remembered, UNPACR_NOP's ZEROSRC form decoded once) must be invisible: add1,
a matmul and a coprocessor program of repeated UNPACR, MOVA2D, ZEROACC, SETRWC and UNPACR_NOP
with edge cases (configuration, L1, LaneConfig, counters and row cursors changed between
repeats, undefined behaviour reported at every repeat) give the same outputs, state (after
every instruction), undefined-behaviour reports and counts with each switched off. Each
comparison also checks the fast path was taken."""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterator

import numpy as np
import pytest

from isaforge.tensix import Coprocessor, assemble
from isaforge.tensix.machine import fpu, fpu_jit
from isaforge.tensix.machine import matrix as matrix_mod
from isaforge.tensix.machine.matrix import MatrixUnit
from isaforge.tensix.machine.unpack import Unpackers
from tests.refdata import requires

from ..switched import add1_on_off, counting, matmul_on_off, setting

#: switch name -> (class, attribute)
SWITCHES = {
    "unpack plans": (Unpackers, "plans"),
    "MOVA2D plans": (MatrixUnit, "mova2d_plans"),
    "SETRWC/ZEROACC plans": (MatrixUnit, "rwc_plans"),
    "compiled unpack": (Unpackers, "compiled"),
}


@pytest.fixture
def slow_calls(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[int]]:
    """Calls of each fast path's long way (fewer with the fast path on)."""
    calls = {
        "unpack plans": counting(monkeypatch, Unpackers, "_worked_out"),
        "MOVA2D plans": counting(monkeypatch, MatrixUnit, "_move_columns"),
        "SETRWC/ZEROACC plans": counting(monkeypatch, MatrixUnit, "_zeroacc_long"),
    }
    calls["SETRWC"] = counting(monkeypatch, matrix_mod, "setrwc")
    # the compiled unpack: its calls, counted negatively (fewer with it off)
    requires("numba", "the unpackers' and the Matrix Unit's compiled fast paths")
    kernels = fpu_jit.load()
    assert kernels is not None
    cells16_calls = [0]

    def cells16(*a: object) -> None:
        cells16_calls[0] -= 1
        kernels.cells16(*a)  # type: ignore[operator]

    monkeypatch.setitem(fpu_jit._LOADED, "kernels", kernels._replace(cells16=cells16))
    calls["compiled unpack"] = cells16_calls
    return calls


@pytest.mark.parametrize("switch", sorted(SWITCHES))
def test_add1_with_and_without(switch: str, monkeypatch: pytest.MonkeyPatch,
                               slow_calls: dict[str, list[int]]) -> None:
    fpu._jit(now=True)  # (MOVA2D plans need the compiled kernels)
    cls, attr = SWITCHES[switch]
    names = sorted(slow_calls)
    on, off = add1_on_off(monkeypatch, setting(monkeypatch, cls, attr), 31,
                          [slow_calls[k] for k in names], sizes=(1, 3, 9))
    slow = {True: dict(zip(names, on, strict=True)), False: dict(zip(names, off, strict=True))}
    assert slow[True][switch] < slow[False][switch]  # the fast path was taken
    if switch == "SETRWC/ZEROACC plans":
        assert slow[True]["SETRWC"] < slow[False]["SETRWC"]


@pytest.mark.parametrize("switch", sorted(SWITCHES))
def test_matmul_with_and_without(switch: str, monkeypatch: pytest.MonkeyPatch,
                                 made: tuple[list, list]) -> None:
    cls, attr = SWITCHES[switch]
    matmul_on_off(setting(monkeypatch, cls, attr), 32, made)


# -- a coprocessor program --------------------------------------------------------------------

IN = 0x2000
COUNT = 64  # datums per UNPACR: four Src rows


def _setup(cp: Coprocessor) -> None:
    """Both unpackers of thread 0: BF16 datums at IN, context 0, COUNT datums per UNPACR,
    each UNPACR's channel 0 Y (AddrMode) moving to the next COUNT datums in L1 and channel
    1 Y to the next four Src rows."""
    c = cp.config.set
    for which in (0, 1):
        sec = 64 if which == 0 else 112
        cp.config.words[:, sec] = 5 | 0x10 | (COUNT << 16)
        cp.config.words[:, sec + 1] = 8 | (1 << 16)  # YDim 8, ZDim 1
        c(f"THCON_SEC{which}_REG2_Out_data_format", 5)
        c(f"THCON_SEC{which}_REG2_Disable_zero_compress_cntx0", 1)
        c(f"THCON_SEC{which}_REG3_Base_address", IN // 16 - 1)
        c(f"UNP{which}_ADDR_CTRL_XY_REG_1_Ystride", COUNT * 2)
        cp.adc.set(0, which, 1, 0, COUNT - 1)
    c("THCON_SEC0_REG5_Tile_x_dim_cntx0", COUNT)
    c("THCON_SEC0_REG5_Dest_cntx0_address", 64)
    c("UNP0_ADD_DEST_ADDR_CNTR_add_dest_addr_cntr", 1)
    cp.thread_config.set(0, "SRCA_SET_SetOvrdWithAddr", 1)
    # AddrMod section 1: SrcA += 8, Dst += 8 (MOVA2D's and ZEROACC's addr_mode 1)
    cp.thread_config.regs[0, 12 + 1] = 8
    cp.thread_config.regs[0, 28 + 1] = 8


#: one round: both Src banks filled, moved to Dst by MOVA2D (8 rows and 1 row, high and low
#: halves), Dst rows cleared (each ZEROACC mode), the banks released by SETRWC; and the
#: undefined-behaviour cases that must be reported at every repeat (UNPACR AddrCntContextId
#: 3, ZEROACC Revert)
ROUND = """
TTI_UNPACR_NOP(0, 0, 0, 0, 0, 0, 1, 0, 1)
TTI_UNPACR(0, 4, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 1)
TTI_UNPACR(1, 0x44, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 1)
TTI_ZEROACC(2, 0, 0, 0, 1)
TTI_UNPACR_NOP(1, 0, 0, 0, 0, 0, 1, 0, 1)
TTI_MOVA2D(0, 0, 1, 2, 0)
TTI_MOVA2D(0, 8, 1, 2, 16)
TTI_MOVA2D(1, 3, 0, 0, 40)
TTI_ZEROACC(0, 0, 0, 1, 20)
TTI_ZEROACC(1, 0, 0, 1, 3)
TTI_ZEROACC(1, 1, 0, 0, 5)
TTI_SETRWC(3, 0, 0, 0, 0, 3)
"""
UB_ROUND = """
TTI_UNPACR_NOP(0, 0, 0, 0, 0, 0, 0, 1, 1)
TTI_UNPACR_NOP(0, 0, 0, 0, 0, 0, 0, 3, 1)
TTI_ZEROACC(3, 0, 0, 0, 0)
TTI_ZEROACC(2, 0, 1, 0, 0)
TTI_ZEROACC(0, 0, 1, 0, 7)
TTI_UNPACR_NOP(0, 0, 0, 0, 0, 0, 1, 0, 1)
TTI_UNPACR(0, 0, 0, 0, 3, 1, 1, 0, 0, 0, 0, 0, 1)
TTI_MOVA2D(0, 0, 0, 2, 64)
TTI_SETRWC(1, 0, 0, 0, 0, 15)
"""
RESET = "TTI_SETADCXY(3, 0, 0, 0, 0, 10)\nTTI_SETRWC(0, 0, 0, 0, 0, 15)\n"


def _segments(cp: Coprocessor, rng: np.random.Generator) -> Iterator[str]:
    """The program in segments, with changes made between them from outside."""
    yield (ROUND * 3 + RESET) * 2 + UB_ROUND * 2 + ROUND
    cp.memory.l1[IN:IN + 8 * COUNT * 2] = rng.integers(0, 256, 8 * COUNT * 2)  # type: ignore[attr-defined]
    yield RESET + ROUND * 3
    cp.config.words[:, 64] = 1 | 0x10 | (COUNT << 16)  # FP16 datums, implied format
    cp.config.set("THCON_SEC0_REG2_Out_data_format", 1)
    yield RESET + ROUND * 2 + UB_ROUND
    cp.config.words[:, 64] = 5 | 0x10 | (COUNT << 16)  # the first configuration again
    cp.config.set("THCON_SEC0_REG2_Out_data_format", 5)
    cp.thread_config.set(0, "SRCB_SET_Base", 1)  # SrcB's row cursor restarts at 16
    yield RESET + ROUND * 3
    cp.lane_config[2] = 1 << 9  # BLOCK_DEST_MOV: column 4 kept by MOVA2D
    yield RESET + ROUND * 2
    cp.lane_config[2] = 0
    cp.config.set("DEST_ACCESS_CFG_remap_addrs", 1)
    yield RESET + ROUND * 2
    cp.config.set("DEST_ACCESS_CFG_remap_addrs", 0)
    cp.thread_config.regs[0, 28 + 1] = 16  # AddrMod 1: Dst += 16
    yield RESET + ROUND * 3


def _run_program() -> tuple[object, ...]:
    rng = np.random.default_rng(33)
    cp = Coprocessor(ub="continue")
    _setup(cp)
    cp.memory.l1[IN:IN + 8 * COUNT * 2] = rng.integers(0, 256, 8 * COUNT * 2)  # type: ignore[attr-defined]
    cp.dst.bits[:] = rng.integers(0, 1 << 16, cp.dst.bits.shape)
    trace: list[bytes] = []  # the state after each instruction

    def after(cp: Coprocessor, address: int, size: int, ev: object) -> None:
        trace.append(hashlib.sha256(b"".join(a.tobytes() for a in (
            cp.dst.bits, cp.dst.valid, cp.srca.cells, cp.srcb.cells, cp.rwc.v, cp.adc.v,
            cp.srca.implied_fmt, cp.srcb.implied_fmt, cp.srca.unpacker_row,
            cp.srcb.unpacker_row)) + bytes([cp.dst.remap_addrs, cp.dst.swizzle_32b])).digest())

    cp.hook_add("insn", after)
    results = []
    for text in _segments(cp, rng):
        cp.set_stream(0, assemble(text))
        r = cp.run()
        results.append((r.steps, r.rounds, r.per_thread))
    srcs = [(s.cells.tobytes(), list(s.allowed_client), s.matrix_bank, s.unpacker_bank,
             s.unpacker_row.tolist(), s.implied_fmt.tolist()) for s in (cp.srca, cp.srcb)]
    return (results, trace, cp.dst.bits.tobytes(), cp.dst.valid.tobytes(), srcs,
            cp.rwc.v.tobytes(), cp.adc.v.tobytes(),
            [(e.thread, e.instruction, e.message) for e in cp.ub_events])


@pytest.mark.parametrize("off", [(s,) for s in sorted(SWITCHES)] + [tuple(sorted(SWITCHES))],
                         ids=lambda off: "+".join(off).replace(" ", "_").replace("/", "_"))
def test_unpack_and_move_program_with_and_without(off: tuple[str, ...],
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  slow_calls: dict[str, list[int]]) -> None:
    fpu._jit(now=True)
    for name in SWITCHES:
        monkeypatch.setattr(*SWITCHES[name], True)
    before = {k: v[0] for k, v in slow_calls.items()}
    fast = _run_program()
    fast_slow = {k: v[0] - before[k] for k, v in slow_calls.items()}
    for name in off:
        monkeypatch.setattr(*SWITCHES[name], False)
    before = {k: v[0] for k, v in slow_calls.items()}
    slow = _run_program()
    slow_slow = {k: v[0] - before[k] for k, v in slow_calls.items()}
    assert fast == slow
    ubs = fast[-1]
    assert sum("AddrCntContextId 3" in m for _, _, m in ubs) == 3  # every repeat reported
    assert sum("Revert" in m for _, _, m in ubs) == 6
    assert sum("both banks" in m for _, _, m in ubs) == 3
    for name in off:
        assert fast_slow[name] < slow_slow[name], name


def test_program_moves_what_it_unpacks() -> None:
    """The program above does what it says (else the comparisons compare little): SrcA's
    datums reach Dst, Dst rows are cleared, the counters and banks move."""
    fpu._jit(now=True)
    out = _run_program()
    results, dst_bits, valid = out[0], out[2], np.frombuffer(out[3], dtype=bool)
    assert all(r[0] > 20 for r in results)
    assert not valid.all() and valid.any()
    assert dst_bits != bytes(len(dst_bits))
    assert len({m for _, _, m in out[-1]}) >= 2
    assert list(itertools.chain(*(r[2] for r in results)))[0] > 0
    assert len(out[1]) == sum(r[0] for r in results)  # a state after each instruction


def test_split_tables_give_every_entry() -> None:
    """The byte-split conversion of the compiled unpack: BF16's table splits (a bit
    permutation), and a split, when there is one, gives every entry; a table that no split
    gives is refused."""
    from isaforge.tensix.machine import unpack

    d = np.arange(1 << 16)
    for fmt in (1, 5, 9):  # FP16, BF16, UINT16
        table = unpack._cells_by_datum(16, fmt, fmt, False, False)
        if table is None:
            continue
        split = unpack._split_table(table)
        if fmt == 5:
            assert split is not None
        if split is not None:
            assert (split[0][d >> 8] | split[1][d & 0xFF] == table).all()
    mixed = (d * 2654435761 & 0x7FFFF).astype(np.uint32)
    assert unpack._split_table(mixed) is None


@pytest.mark.parametrize("plans", [True, False])
def test_setrwc_flips_keep_a_bank_with_clr_dvalid_disable(
        plans: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """SETRWC's bank flips read CLR_DVALID_Src?_Disable (the thread's own, as they change):
    a disabled side flips but keeps its bank with the Matrix Unit."""
    from isaforge.tensix.machine.regfiles import SrcClient

    monkeypatch.setattr(MatrixUnit, "rwc_plans", plans)
    cp = Coprocessor()
    m = SrcClient.MATRIX_UNIT
    got = []
    for disable_a in (1, 0, 1):
        for src in (cp.srca, cp.srcb):
            src.allowed_client[:] = [m, m]
        cp.thread_config.set(1, "CLR_DVALID_SrcA_Disable", disable_a)
        cp.set_stream(1, assemble("TTI_SETRWC(3, 0, 0, 0, 0, 0)"))
        cp.run()
        got.append((list(cp.srca.allowed_client), cp.srca.matrix_bank,
                    list(cp.srcb.allowed_client), cp.srcb.matrix_bank))
    u = SrcClient.UNPACKERS
    assert got == [([m, m], 1, [u, m], 1), ([m, u], 0, [m, u], 0), ([m, m], 1, [u, m], 1)]
