"""The Coprocessor's fast path for Matrix Unit instructions: the cached configuration
(``MatrixUnit.math_regs``), the remembered RWC updates of ``MatrixUnit.advance`` and the write
counting of the configuration arrays that keeps both current.

Every way of writing a register that feeds the Matrix Unit's configuration must take effect
at the next instruction: WRCFG, RMWCIB*, SETC16, a program's ``.config``, ``Config.set``,
``ThreadConfig.set`` and plain assignment to ``Config.words``. Each case runs two MVMULs
with a write in between and compares Dst, bit for bit, with ``fpu.mvmul`` called directly
with the two configurations; the two configurations give different results, so a stale
cache fails the test."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable

import numpy as np
import pytest

from isaforge.core.errors import EmulationError
from isaforge.tensix.asm import assemble
from isaforge.tensix.machine import formats as F
from isaforge.tensix.machine import fpu
from isaforge.tensix.machine.coprocessor import Coprocessor
from isaforge.tensix.machine.regfiles import Dst, SrcRegs
from isaforge.tensix.machine.rwc import apply_addr_mod
from isaforge.tensix.machine.state import (
    Config,
    RWCs,
    ThreadConfig,
    WriteCountedArray,
    config_fields,
)

BF16, TF32 = int(F.DataFormat.FLOAT16_B), int(F.DataFormat.TF32)
FMT_A = config_fields()["ALU_FORMAT_SPEC_REG0_SrcA"]

#: FP32 Dst; SrcA/SrcB formats from the configuration (BF16), not the implied ones (TF32);
#: fidelity phase 1, where SrcA's low mantissa bits (which BF16 drops) are multiplied.
SETUP = """
.threadconfig FIDELITY_BASE_Phase 1
.config ALU_ACC_CTRL_Fp32_enabled 1
.config ALU_FORMAT_SPEC_REG0_SrcA 5
.config ALU_FORMAT_SPEC_REG1_SrcB 5
.threadconfig DISABLE_IMPLIED_SRCA_FMT_Base 1
.threadconfig DISABLE_IMPLIED_SRCB_FMT_Base 1
"""


def _operands() -> tuple[np.ndarray, np.ndarray]:
    """TF32 values with low mantissa bits set: BF16 and TF32 formats read them differently."""
    rng = np.random.default_rng(11)
    a = rng.standard_normal((64, 16)).astype(np.float32)
    b = rng.standard_normal((64, 16)).astype(np.float32)
    return a, b


def _word_with(fmt_a: int) -> int:
    """Config word 1 as SETUP leaves it, with SrcA's format replaced."""
    word = (1 << 29) | (BF16 << 21) | (fmt_a << 17)
    assert FMT_A.index == 1 and FMT_A.shift == 17
    return word


def _machine(program: str) -> Coprocessor:
    cp = Coprocessor()
    cp.load_program(SETUP + program)
    a, b = _operands()
    cp.load_src("a", 0, a, "tf32")
    cp.load_src("b", 0, b, "tf32")
    return cp


def _expected(second_a_fmt: int) -> tuple[np.ndarray, np.ndarray]:
    """Dst after MVMUL (BF16 x BF16) into rows 0..7, then MVMUL (second_a_fmt x BF16) into
    rows 8..15, through fpu.mvmul with explicit configurations (no machine, no cache)."""
    a, b = _operands()
    dst, srca, srcb = Dst(), SrcRegs("SrcA"), SrcRegs("SrcB")
    srca.load(0, a, "tf32")
    srcb.load(0, b, "tf32")
    for row, fmt in ((0, BF16), (8, second_a_fmt)):
        fpu.mvmul(dst, srca, srcb, srca_row=0, srcb_row=0, dst_row=row, phase=1,
                  cfg=fpu.MathConfig(srca_fmt=fmt, srcb_fmt=BF16, fp32_dst=True))
    return dst.bits.copy(), dst.valid.copy()


def _in_program(between: str) -> Callable[[], Coprocessor]:
    def run() -> Coprocessor:
        cp = _machine(f"ttmvmul 0,0,0,0\n{between}\nttmvmul 0,0,0,8\n")
        cp.run(max_steps=100)
        return cp
    return run


def _between_runs(change: Callable[[Coprocessor], None]) -> Callable[[], Coprocessor]:
    def run() -> Coprocessor:
        cp = _machine("ttmvmul 0,0,0,0\n")
        cp.run(max_steps=100)
        change(cp)
        cp.set_stream(0, assemble("ttmvmul 0,0,0,8", "t"))
        cp.run(max_steps=100)
        return cp
    return run


def _set_words(cp: Coprocessor) -> None:
    cp.config.words[:, 1] = _word_with(TF32)


def _reload(cp: Coprocessor) -> None:
    cp.load_program(f".config ALU_FORMAT_SPEC_REG0_SrcA {TF32}\nttmvmul 0,0,0,8\n")
    cp.run(max_steps=100)


WRITES: dict[str, Callable[[], Coprocessor]] = {
    "WRCFG": _in_program(f".gpr 3 {_word_with(TF32)}\nttwrcfg 3,0,1"),
    # RMWCIB2: byte 2 of word 1 holds SrcA's format in bits 1..4
    "RMWCIB2": _in_program(f"ttrmwcib2 0x1e,{TF32 << 1},1"),
    # SETC16 register 2 = DISABLE_IMPLIED_SRCA_FMT: SrcA's implied format (TF32) wins again
    "SETC16": _in_program("ttsetc16 2,0"),
    "Config.set": _between_runs(lambda cp: cp.config.set("ALU_FORMAT_SPEC_REG0_SrcA", TF32)),
    "ThreadConfig.set": _between_runs(
        lambda cp: cp.thread_config.set(0, "DISABLE_IMPLIED_SRCA_FMT_Base", 0)),
    "Config.words[...] =": _between_runs(_set_words),
    ".config": lambda: _reload_run(),
}


def _reload_run() -> Coprocessor:
    cp = _machine("ttmvmul 0,0,0,0\n")
    cp.run(max_steps=100)
    _reload(cp)
    return cp


@pytest.mark.parametrize("how", sorted(WRITES))
def test_a_format_written_between_two_mvmuls_takes_effect(how: str) -> None:
    want_bits, want_valid = _expected(TF32)
    stale_bits, _ = _expected(BF16)
    assert not np.array_equal(want_bits, stale_bits), "the two formats must differ here"
    cp = WRITES[how]()
    np.testing.assert_array_equal(cp.dst.valid, want_valid)
    np.testing.assert_array_equal(cp.dst.bits, want_bits, err_msg=how)


def test_writing_the_same_values_again_keeps_results() -> None:
    """Rerunning a program (its .config and SETC16s write the same values) reuses the cached
    configuration and the remembered RWC updates: the second run computes what the first
    did."""
    cp = _machine("ttmvmul 0,0,0,0\nttmvmul 0,0,0,8\n")
    cp.run(max_steps=100)
    first = cp.dst.bits.copy()
    cp.dst.invalidate_physical(slice(None))
    cp.load_program(SETUP + "ttmvmul 0,0,0,0\nttmvmul 0,0,0,8\n")
    cp.run(max_steps=100)
    np.testing.assert_array_equal(cp.dst.bits, first)
    want, _ = _expected(BF16)
    np.testing.assert_array_equal(first, want)


def test_addr_mod_rewritten_between_mvmuls_takes_effect() -> None:
    """SETC16 rewriting AddrMod section 0 between MVMULs: the RWCs follow the new section
    (reference: ThreadConfig.addr_mod + rwc.apply_addr_mod), also on a second run through
    the same counter values (where advance's remembered updates are used)."""
    sections = [0x0810, 0x0301]  # (srcb_incr << 8) | srca_incr
    dst_sections = [0x0008, 0x2010]  # dst_incr 8; dst_incr 16 + fidelity_incr 1
    lines = []
    for ab, d in zip(sections, dst_sections, strict=True):
        lines += [f"ttsetc16 12,{ab:#x}", f"ttsetc16 28,{d:#x}", "ttmvmul 0,0,0,0"]
    cp = _machine("\n".join(lines) + "\n")
    ref = RWCs()
    tc = ThreadConfig()
    for run in range(2):
        cp.load_program(SETUP + "\n".join(lines) + "\n")
        cp.run(max_steps=100)
        for ab, d in zip(sections, dst_sections, strict=True):
            tc.regs[0, 12], tc.regs[0, 28] = ab, d
            apply_addr_mod(ref, 0, tc.addr_mod(0, 0))
        np.testing.assert_array_equal(cp.rwc.v[0], ref.v[0], err_msg=f"run {run}")
    assert cp.rwc.get(0, 0) == 2 * (0x10 + 0x01)  # SrcA advanced by both sections, twice


def test_configuration_arrays_count_writes() -> None:
    """Every numpy way of writing Config.words / ThreadConfig.regs changes ``version``;
    reading does not; derived arrays are plain ndarrays."""
    cp = Coprocessor()
    words = cp.config.words
    writes: list[Callable[[], object]] = [
        lambda: words.__setitem__((0, 5), 1),
        lambda: words[1].__setitem__(7, 2),  # through a view
        lambda: cp.config.set("ALU_ACC_CTRL_Fp32_enabled", 1),
        lambda: np.add(words, 0, out=words),
        lambda: words.fill(0),
        lambda: cp.thread_config.regs.__setitem__((2, 3), 9),
        lambda: cp.thread_config.set(1, "FIDELITY_BASE_Phase", 2),
    ]
    for write in writes:
        before = (cp.config.version, cp.thread_config.version)
        write()
        assert (cp.config.version, cp.thread_config.version) != before
    before = (cp.config.version, cp.thread_config.version)
    _ = int(words[0, 5]) + cp.config.get("ALU_ACC_CTRL_Fp32_enabled") + int(words.sum())
    _ = cp.thread_config.get(1, "FIDELITY_BASE_Phase"), cp.thread_config.addr_mod(0, 3)
    assert (cp.config.version, cp.thread_config.version) == before
    words += 1
    assert isinstance(cp.config.words, WriteCountedArray) and cp.config.version != before[0]
    assert type(words + 1) is np.ndarray and int(words[0, 0]) == 1
    # replacing the array is a write too, and versions never repeat
    seen = cp.config.version
    cp.config.words = np.zeros((2, Config.N_WORDS), np.uint32)
    assert isinstance(cp.config.words, WriteCountedArray) and cp.config.version > seen
    with pytest.raises(EmulationError, match="shape"):
        cp.thread_config.regs = np.zeros(4)


def test_rewriting_the_same_value_keeps_the_configuration_cache() -> None:
    """SETC16, RMWCIB and the .config/.threadconfig paths (Config.set, ThreadConfig.set)
    that write the value a register already holds leave ``version`` alone, so a kernel whose
    setup runs again per tile keeps its cached MathRegs and plans; a new value still counts."""
    cp = Coprocessor()
    cp.load_program(".thread 0\nttsetc16 12,0x800\nTTI_RMWCIB1(0xFF, 0x12, 5)\n")
    cp.run(max_steps=10)
    cp.config.set("ALU_ACC_CTRL_Fp32_enabled", 1)
    cp.thread_config.set(1, "FIDELITY_BASE_Phase", 2)
    regs = cp.units.matrix.math_regs(0)
    before = (cp.config.version, cp.thread_config.version)
    cp.load_program(".thread 0\nttsetc16 12,0x800\nTTI_RMWCIB1(0xFF, 0x12, 5)\n")
    cp.run(max_steps=10)
    cp.config.set("ALU_ACC_CTRL_Fp32_enabled", 1)
    cp.thread_config.set(1, "FIDELITY_BASE_Phase", 2)
    assert (cp.config.version, cp.thread_config.version) == before
    assert cp.units.matrix.math_regs(0) is regs
    assert int(cp.config.words[0, 5]) >> 8 & 0xFF == 0x12
    for write in ("ttsetc16 12,0x801", "TTI_RMWCIB1(0xFF, 0x13, 5)"):
        cp.load_program(f".thread 0\n{write}\n")
        cp.run(max_steps=10)
        assert (cp.config.version, cp.thread_config.version) != before
        before = (cp.config.version, cp.thread_config.version)
    assert int(cp.thread_config.regs[0, 12]) == 0x801
    assert int(cp.config.words[0, 5]) >> 8 & 0xFF == 0x13


def test_replacing_the_config_array_takes_effect() -> None:
    """``cp.config.words = saved`` between two MVMULs (a restored state) is seen."""
    def restore(cp: Coprocessor) -> None:
        saved = cp.config.words.copy()
        saved[:, 1] = _word_with(TF32)
        cp.config.words = np.asarray(saved)
    cp = _between_runs(restore)()
    want_bits, _ = _expected(TF32)
    np.testing.assert_array_equal(cp.dst.bits, want_bits)


def test_copies_count_their_own_writes() -> None:
    """A deep copy or an unpickled Config starts from the original's values; writes to the
    copy change only the copy's version, and an unpickled array never repeats a version."""
    cp = Coprocessor()
    cp.config.set("ALU_ACC_CTRL_Fp32_enabled", 1)
    seen = cp.config.version
    dup = copy.deepcopy(cp)
    dup.config.set("ALU_ACC_CTRL_Fp32_enabled", 0)
    assert cp.config.version == seen and dup.config.version != seen
    assert cp.config.get("ALU_ACC_CTRL_Fp32_enabled") == 1
    back = pickle.loads(pickle.dumps(cp.config))
    assert isinstance(back.words, WriteCountedArray) and back.version > seen
    np.testing.assert_array_equal(back.words, cp.config.words)
