"""Runs of SFP instructions (``Coprocessor._sfp_run``): while the other threads have finished or
wait for something SFP instructions do not change, a thread's queued SFP instructions execute
in one loop, one round each. That must be invisible: the LRegs, Dst, the RWCs, the step and
round counts (also of bursts of a few rounds), the errors and where they happen must be those
of one instruction at a time (a run with a hook, which never fuses)."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from isaforge.core.errors import EmulationError
from isaforge.tensix.machine.coprocessor import Coprocessor
from isaforge.tensix.program import parse_program

sfp = st.one_of(
    st.builds(lambda vd, mod, a: f"TTI_SFPLOAD({vd}, {mod}, {a % 4}, {a})",
              st.integers(0, 7), st.sampled_from([0, 1, 2, 3, 4, 6]), st.integers(0, 1023)),
    st.builds(lambda vd, mod, a: f"TTI_SFPSTORE({vd}, {mod}, {a % 4}, {a})",
              st.integers(0, 7), st.sampled_from([0, 1, 2, 3, 4, 6]), st.integers(0, 1023)),
    st.builds(lambda a, b, c, d, m: f"TTI_SFPMAD({a}, {b}, {c}, {d}, {m})",
              st.integers(0, 11), st.integers(0, 11), st.integers(0, 11), st.integers(0, 7),
              st.integers(0, 1)),
    st.builds(lambda vd, imm: f"TTI_SFPLOADI({vd}, 0, {imm:#x})",
              st.integers(0, 7), st.integers(0, 0xFFFF)),
    st.builds(lambda c, d, m: f"TTI_SFPIADD(0, {c}, {d}, {m})",
              st.integers(0, 7), st.integers(0, 7), st.sampled_from([4, 5, 6])),
    st.builds(lambda c: f"TTI_SFPSETCC(0, {c}, 0, 4)", st.integers(0, 7)),
    st.just("TTI_SFPENCC(0, 0, 0, 0)"),
    st.just("ttincrwc 0,1,0,0"),
)


def _program(body: list[str], before: int, fp32: int) -> str:
    """Thread 1: the SFP ``body``, then SEMPOST; threads 0 and 2 wait for it (thread 2 after
    ``before`` instructions of its own)."""
    wait = "TTI_SEMWAIT(511, 2, 1)"  # everything, while semaphore 1's Value is 0
    return "\n".join([
        f".config ALU_ACC_CTRL_SFPU_Fp32_enabled {fp32}",
        ".thread 0", wait, "ttsetrwc 0,0,0,0,0,15",
        ".thread 1", "TTI_SFPENCC(3, 0, 0, 10)", *body, "TTI_SEMPOST(2)", "ttincrwc 0,2,0,0",
        ".thread 2", *["ttincrwc 0,0,1,0"] * before, wait, "ttsetrwc 0,0,0,0,0,15"]) + "\n"


def _new(program: str, seed: int, trace: bool) -> Coprocessor:
    cp = Coprocessor()
    cp.load_program(parse_program(program))
    rng = np.random.default_rng(seed)
    cp.dst.bits[:] = rng.integers(0, 1 << 16, cp.dst.bits.shape, dtype=np.uint16)
    if seed % 4 == 0:  # some ZEROACC'd rows: loads and stores there are undefined behaviour
        cp.dst.valid[rng.integers(0, len(cp.dst.valid), 16)] = False
    if trace:
        cp.hook_add("insn", lambda m, a, n, ev: None)  # tracing: one instruction at a time
    return cp


def _state(cp: Coprocessor) -> tuple[object, ...]:
    return (cp.lreg.tobytes(), cp.dst.bits.tobytes(), cp.dst.valid.tobytes(), cp.rwc.v.tobytes(),
            cp.steps, cp.rounds, tuple(t.executed for t in cp.threads),
            tuple(len(t.pending) for t in cp.threads), tuple(t.pc for t in cp.threads))


def _run(cp: Coprocessor) -> str | None:
    try:
        cp.run(max_steps=10_000)
    except EmulationError as e:
        return f"{type(e).__name__}: {e}"
    return None


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(sfp, min_size=2, max_size=40), st.integers(0, 5), st.integers(0, 1),
       st.integers(0, 1 << 30))
def test_runs_are_one_at_a_time(body: list[str], before: int, fp32: int, seed: int) -> None:
    program = _program(body, before, fp32)
    fused, one, plain = _new(program, seed, False), _new(program, seed, True), \
        _new(program, seed, False)
    plain.units.sfpu.blocks = None  # no loops, and no short way for single instructions
    assert _run(fused) == _run(one) == _run(plain)
    assert _state(fused) == _state(one) == _state(plain)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(sfp, min_size=2, max_size=40), st.integers(0, 5), st.integers(1, 9),
       st.integers(0, 1 << 30))
def test_bursts_keep_their_rounds(body: list[str], before: int, rounds: int, seed: int) -> None:
    """A burst of ``rounds`` rounds ends where it ends without runs of SFP instructions
    (and where as many step() calls end: test_a_burst_is_its_steps)."""
    program = _program(body, before, 0)
    fused, one = _new(program, seed, False), _new(program, seed, False)
    one._sfp_opcodes = frozenset()  # no runs
    for _ in range(200):
        try:
            fused.burst(rounds)
        except EmulationError as e:
            err = str(e)
        else:
            err = None
        try:
            one.burst(rounds)
        except EmulationError as e:
            assert err == str(e)
        else:
            assert err is None
        assert _state(fused) == _state(one)
        if err is not None or fused.finished:
            break
    assert fused.finished or err is not None


def test_a_run_happens() -> None:
    """The fused path is taken (else the tests above compare the slow path with itself)."""
    cp = _new(_program(["TTI_SFPLOAD(0, 0, 0, 0)", "TTI_SFPMAD(0, 10, 9, 1, 0)",
                        "TTI_SFPSTORE(1, 0, 0, 0)"] * 8, 0, 0), 1, False)
    calls = []
    run = cp._sfp_run

    def spy(*args: object) -> None:
        calls.append(args)
        run(*args)  # type: ignore[arg-type]

    cp._sfp_run = spy  # type: ignore[method-assign]
    cp.run()
    assert calls


# -- loops (SfpBlocks): a body repeated over Dst runs as one pass --------------------------

def _loop_op(kind: int, vd: int, a: int, b: int, c: int, mod: int, am: int, addr: int,
             stride: int) -> tuple[str, int, int]:
    """A body instruction as (template, base address, stride): ``{addr}`` is filled per
    iteration."""
    if kind == 0:
        return f"TTI_SFPLOAD({vd}, {mod}, {am}, {{addr}})", addr, stride
    if kind == 1:
        return f"TTI_SFPSTORE({vd}, {mod}, {am}, {{addr}})", addr, stride
    if kind == 2:
        return f"TTI_SFPMAD({a}, {b}, {c}, {vd}, {mod & 3})", 0, 0
    if kind == 3:
        return f"TTI_SFPLOADI({vd}, {(0, 2, 8, 10)[mod & 3]}, {addr * 61:#x})", 0, 0
    return "TTI_SFPNOP", 0, 0


reg = st.one_of(st.sampled_from([0, 1, 2, 9, 10]), st.integers(0, 11))
loop_op = st.builds(_loop_op, st.integers(0, 4), reg, reg, reg, reg,
                    st.sampled_from([0, 1, 2, 3, 4, 6]), st.integers(0, 3),
                    st.one_of(st.sampled_from([0, 2, 64, 256]), st.integers(0, 1023)),
                    st.sampled_from([0, 1, 2, 2, 4, 4, 8, 16, 64]))


def _unroll(body: list[tuple[str, int, int]], reps: int) -> list[str]:
    return [tpl.format(addr=(base + k * stride) & 0x3FF) for k in range(reps)
            for tpl, base, stride in body]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(loop_op, min_size=1, max_size=6), st.integers(1, 12), st.integers(0, 3),
       st.integers(0, 1), st.integers(0, 1 << 30))
def test_loops_are_one_at_a_time(body: list[tuple[str, int, int]], reps: int, before: int,
                                 fp32: int, seed: int) -> None:
    """A repeated body (with Dst addresses moving, or not: hazards) gives what one
    instruction at a time gives, with the loop path on and off."""
    program = _program(["TTI_SFPLOADI(1, 0, 0x3f80)", *_unroll(body, reps)], before, fp32)
    fused, one, plain = _new(program, seed, False), _new(program, seed, True), \
        _new(program, seed, False)
    plain.units.sfpu.blocks = None  # runs, without loops or the short way of one
    assert _run(fused) == _run(one) == _run(plain)
    assert _state(fused) == _state(one) == _state(plain)


def test_a_loop_runs_at_once() -> None:
    """add1's SFP code (load, add 1.0, nop, store over a tile's 32 Dst row groups) takes the
    loop path, and gives what one at a time gives (random Dst, FP32 and BF16 Dst)."""
    body = [("TTI_SFPLOAD(0, 0, 3, {addr})", 0, 2), ("TTI_SFPADD(0, 10, 1, 0, 0)", 0, 0),
            ("TTI_SFPNOP", 0, 0), ("TTI_SFPSTORE(0, 0, 3, {addr})", 0, 2)]
    for fp32 in (0, 1):
        program = _program(["TTI_SFPLOADI(1, 0, 0x3f80)", *_unroll(body, 32)], 0, fp32)
        fused, one = _new(program, 5, False), _new(program, 5, True)
        passes: list[bool] = []
        blocks = fused.units.sfpu.blocks

        def spy(*args: object, run=blocks.run, passes=passes) -> bool:  # type: ignore[no-untyped-def]
            passes.append(run(*args))
            return passes[-1]

        blocks.run = spy  # type: ignore[method-assign]
        assert _run(fused) is None and _run(one) is None
        assert passes == [True]
        assert _state(fused) == _state(one)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(sfp, min_size=2, max_size=12), st.integers(0, 5), st.integers(1, 6),
       st.integers(0, 1 << 30))
def test_a_burst_is_its_steps(body: list[str], before: int, rounds: int, seed: int) -> None:
    """burst(k) ends where k step() calls end: a waiting thread that a lower thread's
    instruction releases moves in the same round in both (it once waited a round longer in
    a burst, which compared with the epoch at the round's start)."""
    program = _program(body, before, 0)
    burst, steps = _new(program, seed, False), _new(program, seed, False)
    for _ in range(100):
        err = None
        try:
            burst.burst(rounds)
        except EmulationError as e:
            err = str(e)
        step_err = None
        for _ in range(rounds):
            if steps.finished:
                break
            try:
                if not steps.step():
                    break
            except EmulationError as e:
                step_err = str(e)
                break
        assert (err is None) == (step_err is None)
        assert _state(burst) == _state(steps)
        if err is not None or burst.finished:
            break
