"""Deferred SFP instructions (``Coprocessor._sfp_defer``): a thread that issues a loop of SFP
instructions while other threads move takes them as issued, one a round, and executes them
later as one pass (at the loop's end, before another thread's instruction that is not
harmless to them, before an undefined-behaviour report, at every return). That must be
invisible: LRegs, Dst, the RWCs, the Config, the counts, the errors and the reports must be
those of one instruction at a time, whatever the other threads do and however the caller
steps the coprocessor (run with a step limit, bursts, single steps)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from isaforge.core.errors import EmulationError
from isaforge.tensix.isa import config_fields
from isaforge.tensix.machine import matrix
from isaforge.tensix.machine.coprocessor import Coprocessor
from isaforge.tensix.machine.l1 import L1Memory
from isaforge.tensix.machine.sfp_defer import SFP_CONFIG_READS
from isaforge.tensix.machine.sfpu.block import SfpBlocks
from isaforge.tensix.machine.sfpu.movement import _SfpuRegs
from isaforge.tensix.machine.state import Config, ThreadConfig
from isaforge.tensix.program import parse_program

from ..switched import add1_on_off, counting, matmul_on_off, setting

SFP_WORD = config_fields()["ALU_ACC_CTRL_SFPU_Fp32_enabled"].index
#: other threads' instructions: harmless ones, harmless in some forms, conflicting ones
OTHERS = [
    "TTI_DMANOP", "TTI_NOP", "TTI_SETDMAREG(0, 5, 0, 2)", "TTI_SETADCXX(1, 10, 0)",
    "TTI_SEMPOST(4)", "TTI_SEMGET(4)", "TTI_STALLWAIT(64, 0x80)",
    "TTI_UNPACR_NOP(0, 0, 0, 0, 0, 0, 0, 1, 1)",
    "TTI_ZEROACC(2, 0, 0, 0, 1)", "TTI_ZEROACC(2, 0, 0, 0, 0)", "TTI_ZEROACC(2, 0, 1, 0, 1)",
    "TTI_ZEROACC(3, 0, 0, 0, 0)", f"TTI_WRCFG(1, 0, {SFP_WORD})", "TTI_WRCFG(1, 0, 69)",
    "TTI_WRCFG(1, 1, 180)", "TTI_SFPLOADI(1, 0, 0x3f80)", "TTI_SFPCONFIG(0, 15, 0)",
    "ttsetrwc 0,0,0,0,0,15", "TTI_STOREREG(3, 0x4800)", "TTI_STOREREG(3, 0x4801)",
    "TTI_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)", "TTI_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1)",
]


class _Registers(L1Memory):
    """L1 and MMIO registers: the one at 0xFFB12000 (STOREREG RegAddr 0x4800) only keeps its
    value (``mmio_write_quiet``), the next one writes the first Dst row (as a window into the
    coprocessor would)."""

    def __init__(self) -> None:
        super().__init__()
        self.regs: dict[int, int] = {}
        self.cp: Coprocessor | None = None

    def mmio_read(self, thread: int, addr: int) -> int:
        return self.regs.get(addr, 0)

    def mmio_write(self, thread: int, addr: int, value: int) -> None:
        self.regs[addr] = value
        if addr != QUIET and self.cp is not None:
            self.cp.dst.bits[0] = value & 0xFFFF

    def mmio_write_quiet(self, thread: int, addr: int) -> bool:
        return addr == QUIET


QUIET = 0xFFB12000


def _program(reps: int, base: int, t0: list[str], t2: list[str], fp32: int = 0) -> str:
    """Thread 1: an SFP loop of ``reps`` repetitions from Dst address ``base`` (add1's body)
    after a SETDMAREG; threads 0 and 2: their instructions."""
    body = []
    for r in range(reps):
        a = (base + 2 * r) & 0x3FF
        body += [f"TTI_SFPLOAD(0, 0, 0, {a})", "TTI_SFPMAD(0, 10, 9, 1, 0)", "TTI_SFPNOP",
                 f"TTI_SFPSTORE(1, 0, 0, {a})"]
    return "\n".join([
        f".config ALU_ACC_CTRL_SFPU_Fp32_enabled {fp32}",
        ".thread 0", *t0, ".thread 1", "TTI_SETDMAREG(0, 7, 0, 3)", *body, "TTI_SEMPOST(2)",
        ".thread 2", *t2]) + "\n"


def _new(program: str, seed: int, defer: bool, ub: str) -> Coprocessor:
    memory = _Registers()
    cp = memory.cp = Coprocessor(ub=ub, memory=memory)
    cp._sfp_defer = defer  # type: ignore[misc]
    cp.load_program(parse_program(program))
    rng = np.random.default_rng(seed)
    cp.dst.bits[:] = rng.integers(0, 1 << 16, cp.dst.bits.shape, dtype=np.uint16)
    cp.gpr.v[:] = rng.integers(0, 1 << 32, cp.gpr.v.shape, dtype=np.uint32)
    if seed % 5 == 0:  # some invalid rows: loads and stores there are undefined behaviour
        cp.dst.valid[rng.integers(0, 64, 2)] = False
    return cp


def _state(cp: Coprocessor) -> tuple[object, ...]:
    return (cp.lreg.tobytes(), cp.dst.bits.tobytes(), cp.dst.valid.tobytes(),
            cp.dst.remap_addrs, cp.dst.swizzle_32b, cp.rwc.v.tobytes(), cp.rwc.sp.tobytes(),
            cp.steps, cp.rounds, tuple(t.executed for t in cp.threads),
            tuple(tuple(t.pending) for t in cp.threads), tuple(t.pc for t in cp.threads),
            tuple(str(t.blocked) for t in cp.threads), cp.config.words.tobytes(),
            cp.thread_config.regs.tobytes(), cp.gpr.v.tobytes(), cp.sync.sem.value.tobytes(),
            cp.lane_config.tobytes(), [(e.thread, e.instruction, e.message) for e in cp.ub_events],
            sorted(cp.memory.regs.items()))  # type: ignore[attr-defined]


def _drive(cp: Coprocessor, how: str, n: int) -> list[object]:
    """Step ``cp`` as ``how`` says; what each call returned or raised, and the state after."""
    seen: list[object] = []
    for _ in range(300):
        try:
            if how == "run":
                out: object = cp.run(max_steps=n)
            elif how == "burst":
                out = cp.burst(n)
            else:
                out = cp.step()
        except EmulationError as e:
            out = f"{type(e).__name__}: {e}"
        seen.append((out, _state(cp)))
        if how == "run" or isinstance(out, str) or cp.finished:
            break
    return seen


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 10), st.sampled_from([0, 1, 2, 60, 1020]),
       st.lists(st.sampled_from(OTHERS), max_size=12),
       st.lists(st.sampled_from(OTHERS), max_size=12),
       st.sampled_from(["run", "burst", "step"]), st.integers(1, 9),
       st.sampled_from(["stop", "continue"]), st.integers(0, 1 << 30), st.integers(0, 1))
def test_deferred_is_one_at_a_time(reps: int, base: int, t0: list[str], t2: list[str],
                                   how: str, n: int, ub: str, seed: int, fp32: int) -> None:
    program = _program(reps, base, t0, t2, fp32)
    if how == "run":
        n = n * 4 + 3  # (a step limit somewhere, or none reached)
    on, off = _new(program, seed, True, ub), _new(program, seed, False, ub)
    assert _drive(on, how, n) == _drive(off, how, n)


def _taken(program: str, how: str = "run", n: int = 1000) -> tuple[int, list[object]]:
    on, off = _new(program, 1, True, "continue"), _new(program, 1, False, "continue")
    seen = _drive(on, how, n)
    assert seen == _drive(off, how, n)
    return on.sfp_deferred, seen


@pytest.mark.parametrize("how", ["run", "burst", "step"])
def test_deferral_taken_with_harmless_neighbours(how: str) -> None:
    """Threads 0 and 2 move (harmless instructions, a ZEROACC of the other Dst half, a WRCFG
    of a word the Vector Unit does not read) while thread 1's loop is deferred."""
    t0 = ["TTI_DMANOP", "TTI_SETADCXX(1, 10, 0)", "TTI_SEMPOST(4)"] * 3
    t2 = ["TTI_NOP", "TTI_ZEROACC(2, 0, 0, 0, 1)", "TTI_WRCFG(1, 0, 69)", "TTI_SEMGET(4)",
          "TTI_STOREREG(3, 0x4800)"] * 2
    deferred, _ = _taken(_program(8, 0, t0, t2), how, 1000 if how == "run" else 3)
    assert deferred >= 1


@pytest.mark.parametrize("conflict", [
    "TTI_ZEROACC(2, 0, 0, 0, 0)", "TTI_ZEROACC(3, 0, 0, 0, 0)", f"TTI_WRCFG(1, 0, {SFP_WORD})",
    "TTI_SFPLOADI(1, 0, 0x3f80)", "TTI_SFPCONFIG(0, 15, 0)", "TTI_ZEROACC(2, 0, 1, 0, 1)",
    "TTI_STOREREG(3, 0x4801)", "TTI_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1)"])
@pytest.mark.parametrize("at", [0, 1, 3, 6, 20])
def test_conflict_at_each_position(conflict: str, at: int) -> None:
    """A conflicting instruction of thread 2 (or one reporting undefined behaviour) after
    ``at`` harmless ones: the deferred instructions execute first."""
    deferred, _ = _taken(_program(8, 0, ["TTI_DMANOP"] * 4, ["TTI_DMANOP"] * at + [conflict]))
    assert deferred >= 1 or at < 2  # (thread 1's first SFP instruction is in round 2)


def test_ub_stop_mid_deferral() -> None:
    """Under ub="stop", a harmless instruction's undefined behaviour raises after the
    deferred instructions ran, as one at a time."""
    t2 = ["TTI_DMANOP"] * 3 + ["TTI_ZEROACC(2, 0, 1, 0, 1)"]
    program = _program(8, 0, ["TTI_DMANOP"] * 3, t2)
    on, off = _new(program, 1, True, "stop"), _new(program, 1, False, "stop")
    seen = _drive(on, "run", 1000)
    assert isinstance(seen[-1][0], str) and "Revert" in seen[-1][0]  # type: ignore[index]
    assert seen == _drive(off, "run", 1000)
    assert on.sfp_deferred == 1


def test_quiet_storeregs_keep_the_deferral() -> None:
    """A STOREREG to a register that only keeps its value leaves the loop deferred to its
    end (one deferral, one pass)."""
    t2 = ["TTI_DMANOP", "TTI_STOREREG(3, 0x4800)"] * 20
    on = _new(_program(8, 0, [], t2), 1, True, "continue")
    blocks = on.units.sfpu.blocks
    assert blocks is not None
    passes: list[object] = []
    execute = blocks.execute
    blocks.execute = lambda ready: (passes.append(ready), execute(ready))  # type: ignore
    off = _new(_program(8, 0, [], t2), 1, False, "continue")
    assert _drive(on, "run", 1000) == _drive(off, "run", 1000)
    assert on.sfp_deferred == 1 and len(passes) == 1


def test_hooks_stop_deferral() -> None:
    program = _program(8, 0, ["TTI_DMANOP"] * 6, [])
    cp = _new(program, 1, True, "continue")
    events: list[object] = []
    cp.hook_add("ub", lambda *a: events.append(a))
    cp.run()
    assert cp.sfp_deferred == 0


def test_sfp_config_reads_listed(monkeypatch: pytest.MonkeyPatch) -> None:
    """_SFP_CONFIG_READS names every Config field _SfpuRegs and MathRegs read."""
    read: set[str] = set()
    original = matrix.thread_cfg

    def spy(config: Config, tc: ThreadConfig, t: int, name: str) -> int:
        read.add(name)
        return original(config, tc, t, name)

    monkeypatch.setattr(matrix, "thread_cfg", spy)
    for override in (0, 1):
        config = Config()
        config.set("ALU_FORMAT_SPEC_REG_SrcA_override", override)
        config.set("ALU_FORMAT_SPEC_REG_SrcB_override", override)
        matrix.MathRegs(config, ThreadConfig(), 0)
    assert read and read <= set(SFP_CONFIG_READS)
    assert set(_SfpuRegs.CONFIG_READS) <= set(SFP_CONFIG_READS)


def test_add1_with_and_without(monkeypatch: pytest.MonkeyPatch) -> None:
    singles = counting(monkeypatch, SfpBlocks, "execute")
    on, off = add1_on_off(monkeypatch, setting(monkeypatch, Coprocessor, "_sfp_defer"), 37,
                          [singles])
    assert on[0] > 0 and off[0] == 0  # deferred loops ran from what was prepared


def test_matmul_with_and_without(monkeypatch: pytest.MonkeyPatch,
                                 made: tuple[list[Coprocessor], list[object]]) -> None:
    matmul_on_off(setting(monkeypatch, Coprocessor, "_sfp_defer"), 5, made)
