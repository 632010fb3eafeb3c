"""The scalar unit (ThCon) on the GPRs: every op of spec 002 and the ISA documentation,
including the UndefinedBehaviour modes under both policies."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from isaforge.tensix import Coprocessor, assemble
from isaforge.tensix.machine.state import NotImplementedInstruction, UndefinedBehaviourError

M32 = 0xFFFFFFFF
u32 = st.integers(0, M32)


def run(text: str, gprs: dict[int, int] | None = None, thread: int = 1,
        ub: str = "stop") -> Coprocessor:
    cp = Coprocessor(ub=ub)
    for i, v in (gprs or {}).items():
        cp.gpr.set(thread, i, v)
    cp.set_stream(thread, assemble(text))
    cp.run()
    return cp


def test_gpr_file_shape() -> None:
    assert Coprocessor().gpr.v.shape == (3, 64)


def test_setdmareg_writes_one_half() -> None:
    # TT_SETDMAREG(0, NewValue, 0, ResultHalfReg): value bits 23..8, half index 6..0
    lo = (0x45 << 24) | (0xBEEF << 8) | (2 * 5)
    hi = (0x45 << 24) | (0x1234 << 8) | (2 * 5 + 1)
    cp = run("", {5: 0xAAAA5555})
    cp.set_stream(1, [lo])
    cp.run()
    assert cp.gpr.get(1, 5) == 0xAAAABEEF
    cp.set_stream(1, [hi])
    cp.run()
    assert cp.gpr.get(1, 5) == 0x1234BEEF


def test_setdmareg_special_form_needing_other_packers_is_not_implemented() -> None:
    # WhichPackers bit 1 (Wormhole's packer 1; Blackhole has one packer) with InputSource 8
    with pytest.raises(NotImplementedInstruction, match="not implemented: SETDMAREG"):
        run(f"ttsetdmareg 0,{(2 << 7) | (8 << 3)},1,3")


@settings(max_examples=60, deadline=None)
@given(u32, u32, st.integers(0, 63), st.booleans())
def test_add_sub_mul(a: int, b: int, imm: int, const: bool) -> None:
    right = imm if const else b
    op_b = imm if const else 2
    for name, want in (("adddmareg", (a + right) & M32), ("subdmareg", (a - right) & M32),
                       ("muldmareg", (a & 0xFFFF) * (right & 0xFFFF))):
        cp = run(f"tt{name} {int(const)},3,{op_b},1", {1: a, 2: b})
        assert cp.gpr.get(1, 3) == want, name


@settings(max_examples=60, deadline=None)
@given(u32, u32, st.integers(0, 63), st.booleans(), st.integers(0, 1))
def test_shift(a: int, b: int, imm: int, const: bool, mode: int) -> None:
    amount = (imm if const else b) & 0x1F
    cp = run(f"ttshiftdmareg {int(const)},{mode},3,{imm if const else 2},1", {1: a, 2: b})
    want = (a << amount) & M32 if mode == 0 else a >> amount
    assert cp.gpr.get(1, 3) == want


@settings(max_examples=60, deadline=None)
@given(u32, u32, st.integers(0, 63), st.booleans(), st.integers(0, 2))
def test_bitwop_and_cmp(a: int, b: int, imm: int, const: bool, mode: int) -> None:
    right = imm if const else b
    op_b = imm if const else 2
    cp = run(f"ttbitwopdmareg {int(const)},{mode},3,{op_b},1", {1: a, 2: b})
    assert cp.gpr.get(1, 3) == [a & right, a | right, a ^ right][mode]
    cp = run(f"ttcmpdmareg {int(const)},{mode},3,{op_b},1", {1: a, 2: b})
    assert cp.gpr.get(1, 3) == int([a > right, a < right, a == right][mode])


@pytest.mark.parametrize("insn,mode", [("ttshiftdmareg", 2), ("ttshiftdmareg", 7),
                                       ("ttbitwopdmareg", 3), ("ttcmpdmareg", 5)])
def test_undefined_modes_stop_or_continue(insn: str, mode: int) -> None:
    text = f"{insn} 0,{mode},3,2,1"
    with pytest.raises(UndefinedBehaviourError, match="undefined behaviour"):
        run(text, {1: 7, 2: 1, 3: 99})
    cp = run(text, {1: 7, 2: 1, 3: 99}, ub="continue")
    assert cp.gpr.get(1, 3) == 99  # result register left unchanged
    assert len(cp.ub_events) == 1 and cp.ub_events[0].thread == 1


def test_result_register_out_of_range() -> None:
    text = "ttadddmareg 1,70,5,1"  # 11-bit result field: register 70 does not exist
    with pytest.raises(UndefinedBehaviourError, match="result register 70"):
        run(text, {1: 1})
    cp = run(text, {1: 1}, ub="continue")
    assert cp.gpr.get(1, 70 & 63) == 6


def test_flushdma_and_dmanop_change_nothing() -> None:
    cp = run("ttflushdma 0\nttflushdma 15\nttdmanop", {1: 5})
    assert cp.gpr.v[1].tolist() == [0, 5] + [0] * 62
    assert cp.threads[1].executed == 3


def test_gprs_are_per_thread() -> None:
    cp = Coprocessor()
    cp.gpr.set(0, 1, 10)
    cp.gpr.set(2, 1, 20)
    cp.load_program({0: assemble("ttadddmareg 1,2,1,1"), 2: assemble("ttadddmareg 1,2,2,1")})
    cp.run()
    assert (cp.gpr.get(0, 2), cp.gpr.get(1, 2), cp.gpr.get(2, 2)) == (11, 0, 22)
