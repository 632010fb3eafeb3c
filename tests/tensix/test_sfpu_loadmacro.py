"""SFPLOADMACRO and its configuration (ISA documentation, Blackhole SFPLOADMACRO.md and
SFPCONFIG.md; the official simulator does not model it, so there is no oracle).

The evidence: tt-llk's Blackhole SFPU kernels that use SFPLOADMACRO each have a plain
version (``DISABLE_SFPLOADMACRO``) computing the same thing one instruction at a time;
their instruction sequences (tt-llk @ 36b092e8, ``ckernel_sfpu_recip.h`` and
``ckernel_sfpu_where.h``, written out here as PROG.s) must leave Dst bit for bit the same.
They exercise the templates (SFPCONFIG and the back-door load), the sequences, LReg 16,
delays by instructions and by cycles, SFPSTORE at the macro's own address, simultaneous
sub-units, SFPMAD's one-cycle-late result and SFPMAD_MOD1_INDIRECT_VD. Then the mechanics
one at a time.
"""

from __future__ import annotations

import numpy as np
import pytest

from isaforge.tensix.machine.coprocessor import Coprocessor
from isaforge.tensix.machine.state import DST, NotImplementedInstruction, UndefinedBehaviourError
from isaforge.tensix.program import parse_program

HEADER = ".thread 1\n.threadconfig ADDR_MOD_DST_SEC6_DestIncr 2\n"  # ADDR_MOD_6: Dst += 2
NOP = "TTI_SFPNOP\n"
ENABLE_CC = "TTI_SFPENCC(3, 0, 0, 10)\n"  # UseLaneFlagsForLaneEnable and every flag set


def run(body: str, dst: np.ndarray, fp32: bool = True, ub: str = "stop") -> np.ndarray:
    """Run ``body`` on thread 1 with Dst holding ``dst``; Dst afterwards as uint32 bits."""
    cp = Coprocessor(ub=ub)
    cfg = ".config ALU_ACC_CTRL_SFPU_Fp32_enabled 1\n" if fp32 else ""
    cp.load_program(parse_program(cfg + HEADER + body))
    fmt = "fp32" if fp32 else "bf16"
    cp.dst.write(fmt, dst)
    cp.run()
    return cp.dst.read(fmt, range(len(dst))).astype(np.float32).view(np.uint32)


def sequence(macro: int, simple: int = 0, mad: int = 0, rnd: int = 0, store: int = 0) -> str:
    """LoadMacroConfig.Sequence[macro] through LReg 0 (as tt-llk writes it)."""
    return (f"TTI_SFPLOADI(0, 10, {(mad << 8) | simple:#x})\n"
            f"TTI_SFPLOADI(0, 8, {(store << 8) | rnd:#x})\nTTI_SFPCONFIG(0, {4 + macro}, 0)\n")


def lm(macro: int, vd: int, mod0: int, addr_mode: int, offset: int) -> str:
    """SFPLOADMACRO(macro, VD) at ``offset`` (VD's high bit is the address's bit 0)."""
    return (f"TTI_SFPLOADMACRO({(macro << 2) | (vd & 3)}, {mod0}, {addr_mode}, "
            f"{offset | (vd >> 2)})\n")


def data(seed: int, rows: int = 64) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal((rows, 16)) * 10).astype(np.float32)


def changed(a: np.ndarray, b: np.ndarray) -> int:
    return int((a != b.astype(np.float32).view(np.uint32)).sum())


# ---- tt-llk's kernels: SFPLOADMACRO version == plain version ----------------------------------


def recip_7b(n: int, macro: bool) -> str:
    if not macro:
        return ("TTI_SFPLOAD(0, 0, 7, 0)\nTTI_SFPARECIP(0, 0, 0, 0)\n"
                "TTI_SFPSTORE(0, 0, 6, 0)\n") * n
    init = ("TTI_SFPARECIP(0, 0, 12, 0)\n"  # VD = 12: InstructionTemplate[0] (back door)
            + sequence(0, simple=0x40 | 4, store=0x40 | (1 << 3) | 3)
            + "TTI_SFPCONFIG(0x110, 8, 1)\n")
    return init + lm(0, 0, 0, 6, 0) * n + NOP * 2


def recip_8b_3c(n: int, macro: bool) -> str:
    if not macro:
        return "TTI_SFPLOADI(2, 2, 0x8000)\n" + (
            "TTI_SFPLOAD(0, 0, 7, 0)\nTTI_SFPMAD(9, 9, 0, 1, 0)\nTTI_SFPARECIP(0, 0, 0, 0)\n"
            "TTI_SFPOR(0, 2, 0, 0)\nTTI_SFPMAD(1, 0, 11, 1, 0)\nTTI_SFPSHFT(0xFF0, 1, 1, 5)\n"
            "TTI_SFPIADD(0, 1, 0, 4)\nTTI_SFPSTORE(0, 0, 6, 0)\n") * n
    t, prev = 1, -4 & 0x3FF
    body = ("TTI_SFPARECIP(0, 0, 12, 0)\nTTI_SFPMAD(9, 9, 0, 13, 8)\n"
            "TTI_SFPMAD(1, 0, 11, 14, 0)\nTTI_SFPIADD(0, 1, 15, 4)\n"
            + sequence(0, simple=4, mad=5, store=0x83)
            + sequence(1, simple=0xC0 | (5 << 3) | 7, mad=0xC0 | 6, store=0x40 | (2 << 3) | 3)
            + sequence(2, store=0x40 | (1 << 3) | 3)
            + "TTI_SFPCONFIG(0x700, 8, 1)\nTTI_SFPLOADI(0, 0, 0x8000)\nTTI_SFPLOADI(7, 2, 1)\n")
    for d in range(min(n, 2)):
        y = 3 + d % 3
        body += lm(0, y, 0, 7, 0) + NOP + lm(1, y, 14, 6, 0)
    for d in range(2, n):
        y = 3 + d % 3
        body += lm(0, y, 0, 7, 0) + lm(2, t, 9, 7, prev) + lm(1, y, 14, 6, 0)
    for _ in range(max(n, 2), n + 2):
        body += NOP + lm(2, t, 9, 6, prev) + NOP
    return body + NOP


def recip_24b_5c(n: int, macro: bool) -> str:
    if not macro:
        return ("TTI_SFPLOAD(0, 0, 7, 0)\nTTI_SFPARECIP(0, 0, 1, 0)\nTTI_SFPMAD(0, 1, 10, 2, 1)\n"
                "TTI_SFPMAD(2, 2, 2, 3, 0)\nTTI_SFPMAD(3, 2, 2, 3, 0)\nTTI_SFPSWAP(0, 10, 3, 1)\n"
                "TTI_SFPMAD(3, 1, 1, 0, 0)\nTTI_SFPSTORE(0, 0, 6, 0)\n") * n
    e, t2, z, y, prev = 0, 1, 2, 3, -2 & 0x3FF
    init = ("TTI_SFPARECIP(0, 0, 12, 0)\nTTI_SFPMAD(0, 0, 0, 13, 0)\nTTI_SFPMAD(1, 0, 2, 14, 0)\n"
            "TTI_SFPSWAP(0, 10, 15, 1)\n"
            + sequence(0, simple=4, store=0x40 | (6 << 3) | 3)
            + sequence(1, simple=0x40 | 4, mad=(2 << 3) | 5, store=(2 << 3) | 3)
            + f"TTI_SFPCONFIG({(6 << 8) | 0x80 | (2 << 3) | 7:#x}, 6, 1)\n"
            + sequence(3, mad=0xC0 | (1 << 3) | 6, store=0x40 | (3 << 3) | 3)
            + "TTI_SFPCONFIG(0xff0, 8, 1)\n")
    record = ("TTI_REPLAY(0, 6, 0, 1)\n" + lm(0, y, 0, 7, 0) + lm(2, t2, 0, 7, prev)
              + lm(1, e, 0, 7, 0) + "TTI_SFPMAD(0, 3, 10, 0, 1)\n" + lm(3, z, 0, 6, prev)
              + lm(3, z, 0, 7, prev))

    def replay(start: int, length: int) -> str:
        return f"TTI_REPLAY({start}, {length}, 0, 0)\n"

    return (init + record + replay(0, 4) + "TTI_SFPLOAD(7, 0, 6, 0)\n" + replay(0, 5) * (n - 1)
            + NOP + replay(1, 1) + NOP + replay(3, 2) + NOP * 4)


@pytest.mark.parametrize("n", [1, 3, 8])
def test_recip_7b_macro_equals_plain(n: int) -> None:
    d = data(n)
    plain = run(recip_7b(n, False), d)
    assert changed(plain, d) == 32 * n
    np.testing.assert_array_equal(run(recip_7b(n, True), d), plain)


@pytest.mark.parametrize("n", [2, 3, 8])
def test_recip_8b_3c_macro_equals_plain(n: int) -> None:
    """BF16 Dst. (With n = 1 tt-llk's epilogue reads its previous element 4 rows before the
    first one: its SFPLOADMACRO version is not meant for a single iteration.)"""
    d = data(10 + n)
    plain = run(recip_8b_3c(n, False), d, fp32=False)
    assert changed(plain, d.astype(np.float32)) > 0
    np.testing.assert_array_equal(run(recip_8b_3c(n, True), d, fp32=False), plain)


@pytest.mark.parametrize("n", [1, 2, 6])
def test_recip_24b_5c_macro_equals_plain(n: int) -> None:
    d = data(20 + n)
    plain = run(recip_24b_5c(n, False), d)
    assert changed(plain, d) == 32 * n
    np.testing.assert_array_equal(run(recip_24b_5c(n, True), d), plain)


def where(i0: int, i1: int, i2: int, out: int, macro: bool, n: int = 8) -> str:
    """where(in0 == 0, in2, in1) per 64-row tile, INT32 load/store mode."""
    if not macro:
        step = (f"TTI_SFPLOAD(0, 4, 7, {i0 * 64})\nTTI_SFPLOAD(1, 4, 7, {i1 * 64})\n"
                f"TTI_SFPSETCC(0, 0, 0, 6)\nTTI_SFPLOAD(1, 4, 7, {i2 * 64})\n"
                f"TTI_SFPENCC(0, 0, 0, 0)\nTTI_SFPSTORE(1, 4, 6, {out * 64})\n")
    else:
        step = ("TTI_SFPSETCC(0, 0, 12, 6)\nTTI_SFPENCC(0, 0, 13, 0)\n"
                + sequence(0, simple=4, store=(2 << 3) | 3)
                + "TTI_SFPCONFIG(4, 5, 1)\nTTI_SFPCONFIG(5, 6, 1)\nTTI_SFPCONFIG(0x770, 8, 1)\n")
        if out == i0:
            loop = (lm(0, 0, 4, 7, i0 * 64) + lm(2, 0, 4, 7, i1 * 64)
                    + f"TTI_SFPLOAD(0, 4, 6, {i2 * 64})\n")
        else:
            loop = (lm(1, 0, 4, 7, i0 * 64) + lm(2, 0, 4, 7, i1 * 64)
                    + f"TTI_SFPLOAD(0, 4, 7, {i2 * 64})\nTTI_SFPSTORE(0, 4, 6, {out * 64})\n")
        return ENABLE_CC + step + loop * n
    return ENABLE_CC + step * n


@pytest.mark.parametrize("tiles", [(0, 1, 2, 3), (0, 1, 2, 0)], ids=["out_apart", "out_is_in0"])
def test_where_macro_equals_plain_and_numpy(tiles: tuple[int, int, int, int]) -> None:
    i0, i1, i2, out = tiles
    rng = np.random.default_rng(3)
    d = (rng.standard_normal((256, 16)) * 4).astype(np.float32)
    d[:64][rng.random((64, 16)) < 0.5] = 0.0
    bits = d.view(np.uint32)
    want = bits.copy()
    cond = bits[i0 * 64:i0 * 64 + 16]
    want[out * 64:out * 64 + 16] = np.where(cond == 0, bits[i2 * 64:i2 * 64 + 16],
                                            bits[i1 * 64:i1 * 64 + 16])
    plain = run(where(*tiles, macro=False), d)
    np.testing.assert_array_equal(plain, want)
    np.testing.assert_array_equal(run(where(*tiles, macro=True), d), want)


# ---- the mechanics ---------------------------------------------------------------------------


def lanes_of(cp: Coprocessor, addr: int) -> np.ndarray:
    rows = (addr & 0x3FC) + np.arange(32) // 8
    cols = (np.arange(32) & 7) * 2 + (1 if addr & 2 else 0)
    return cp.dst.read("fp32", range(64)).view(np.uint32)[rows, cols]


def machine(body: str, dst: np.ndarray | None = None) -> Coprocessor:
    cp = Coprocessor(ub="continue")
    cp.load_program(parse_program(".config ALU_ACC_CTRL_SFPU_Fp32_enabled 1\n" + HEADER + body))
    if dst is not None:
        cp.dst.write("fp32", dst)
    return cp


def test_store_uses_the_macros_address_and_delay_counts_cycles() -> None:
    """A macro's SFPSTORE of LReg VD, delay 2 counted in cycles: it runs in the third cycle
    after its SFPLOADMACRO even when the cycles are other units' instructions, at the
    address SFPLOADMACRO formed, not where the RWCs moved since."""
    d = data(1)
    body = (sequence(0, store=(2 << 3) | 3) + "TTI_SFPCONFIG(0x10, 8, 1)\n"  # UsesLoadMod0
            + lm(0, 5, 3, 6, 8)  # load LReg 5 from address 8, then Dst RWC += 2
            + "TTI_SFPLOADI(5, 0, 0x4000)\n"  # cycle 1: LReg 5 = 2.0 (before the store reads)
            + "ttnop\nttnop\n")  # cycles 2, 3: the store runs in cycle 3
    cp = machine(body, d)
    cp.step()
    seen = []
    while cp.step():
        seen.append(lanes_of(cp, 8).copy())
    before = d.view(np.uint32)[8:12, 0:16:2].reshape(32)
    np.testing.assert_array_equal(seen[-1], before)  # after the first ttnop: not yet stored
    assert (lanes_of(cp, 8) == 0x40000000).all()  # then: LReg 5 (2.0) at address 8
    assert cp.rwc.get(1, DST) == 2  # the Dst RWC moved by the macro's AddrMod only


def test_delay_by_instructions_waits_for_sfpu_instructions() -> None:
    """With UnitDelayKind set, only SFP instructions count: other units' instructions in
    between do not run the scheduled SFPMOV (LReg 2 = LReg 10, 1.0), the next SFPNOP does."""
    body = ("TTI_SFPMOV(0, 10, 12, 0)\n"  # template 0: SFPMOV VC=10 (back-door load, VD=12)
            + sequence(0, simple=0x80 | 4)  # 0x80: the loaded LReg is VB, VC stays 10
            + "TTI_SFPCONFIG(0x100, 8, 1)\n"  # UnitDelayKind: simple counts instructions
            + lm(0, 2, 3, 7, 0) + "ttnop\nttnop\nttnop\n" + NOP)
    cp = machine(body, np.zeros((64, 16), dtype=np.float32))
    for _ in range(9):  # up to the last ttnop
        cp.step()
    assert cp.units.sfpu.scheduled and not cp.lreg[2].any()  # loaded 0, SFPMOV not yet run
    cp.step()  # SFPNOP: the cycle the SFPMOV runs in
    assert not cp.units.sfpu.scheduled and (cp.lreg[2] == 0x3F800000).all()


def test_lreg16_and_vb_vc_overrides() -> None:
    """Sequence bits 0x40 (result to LReg 16) and 0x80 (the loaded register is VB): an
    SFPIADD template ``VD = VC + VB`` with VC = LReg 1 from the template."""
    body = ("TTI_SFPIADD(0, 1, 12, 4)\n"  # template 0: SFPIADD VC=1, VD=12 (CC_NONE)
            + sequence(0, simple=0xC0 | 4, store=0x40 | (1 << 3) | 3)
            + "TTI_SFPCONFIG(0x10, 8, 1)\n" + lm(0, 3, 4, 7, 0) + NOP * 3)
    d = np.zeros((64, 16), dtype=np.uint32)
    d[0:4, 0:16:2] = np.arange(32).reshape(4, 8)
    cp = machine(body, d.view(np.float32))
    cp.lreg[1] = 1000
    cp.run()
    np.testing.assert_array_equal(lanes_of(cp, 0), np.arange(32) + 1000)
    np.testing.assert_array_equal(cp.lreg[16], np.arange(32) + 1000)
    np.testing.assert_array_equal(cp.lreg[3], np.arange(32))  # VD = LReg 16, not 3


def test_new_instruction_replaces_one_due_in_the_same_cycle() -> None:
    """Two SFPLOADMACROs whose stores fall in the same cycle: the second one's wins."""
    body = (sequence(0, store=(1 << 3) | 3) + sequence(1, store=(0 << 3) | 3)
            + "TTI_SFPCONFIG(0x30, 8, 1)\n" + lm(0, 0, 3, 7, 0) + lm(1, 1, 3, 7, 4) + NOP * 3)
    d = data(2)
    cp = machine(body, d)
    cp.run()
    bits = d.view(np.uint32)
    np.testing.assert_array_equal(lanes_of(cp, 4), bits[4:8, 0:16:2].reshape(32))
    np.testing.assert_array_equal(lanes_of(cp, 0), bits[0:4, 0:16:2].reshape(32))
    assert cp.ub_events == []


def test_scheduled_instruction_displaces_the_threads() -> None:
    """An issued SFPMOV reaching the simple sub-unit in the cycle a scheduled SFPNOP does is
    discarded."""
    body = (sequence(0, simple=2) + "TTI_SFPCONFIG(0x100, 8, 1)\n" + lm(0, 0, 3, 7, 0)
            + "TTI_SFPMOV(0, 10, 4, 0)\n")  # LReg 4 = 1.0, but displaced
    cp = machine(body)
    cp.run()
    assert not cp.lreg[4].any()


@pytest.mark.parametrize("store, message", [(1, "instruction kind 1"),
                                            (4, "gives the store sub-unit SFPNOP")])
def test_undefined_sequences_are_reported(store: int, message: str) -> None:
    body = ("TTI_SFPNOP\n" + sequence(0, store=store) + "TTI_SFPCONFIG(0x10, 8, 1)\n"
            + lm(0, 0, 3, 7, 0) + NOP)
    cp = machine(body)
    cp.run()
    assert any(message in e.message for e in cp.ub_events), cp.ub_events
    with pytest.raises(UndefinedBehaviourError, match="SFPLOADMACRO"):
        run(body, np.zeros((64, 16), dtype=np.float32))


def test_lane_differing_configuration_is_a_clear_error() -> None:
    body = ("TTI_SFPCONFIG(0x0203, 4, 9)\n"  # Sequence[0] = 0x0203 in lanes 0 and 4 only
            + lm(0, 0, 3, 7, 0))
    with pytest.raises(NotImplementedInstruction, match="differing between lanes"):
        run(body, np.zeros((64, 16), dtype=np.float32))


def test_backdoor_load_writes_the_template_unless_disabled() -> None:
    cp = Coprocessor()
    sfpu = cp.units.sfpu
    cp.lreg[0] = 0x3F800000
    word = 0x7C0000D1  # SFPMOV VC=0, VD=13, Mod1=1
    sfpu.execute_word(0, word)
    assert (sfpu.lanes.templates[1] == word).all() and (cp.lreg[13] == 0xBF2CC4C7).all()
    cp.lane_config[:] = 2  # DISABLE_BACKDOOR_LOAD: the instruction runs (LReg 13 is not
    sfpu.execute_word(0, word + 0x100)  # writable by SFPMOV), the template stays
    assert (sfpu.lanes.templates[1] == word).all()
    sfpu.execute_word(0, 0x72D40000)  # SFPSTORE LReg 13 (INT32) now reaches Dst
    np.testing.assert_array_equal(lanes_of(cp, 0), cp.lreg[13])
