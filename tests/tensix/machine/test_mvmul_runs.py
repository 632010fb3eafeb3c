"""Runs of MVMULs (``MatrixUnit.mvmul_run``): when a thread has MVMULs queued by REPLAY or a MOP
and no other thread has work left, :meth:`Coprocessor.run` executes them in one compiled call.
That must be invisible: Dst, its valid bits, the RWCs, the Src banks and their owners, the
step and round counts, the errors and where they happen must be those of one instruction at
a time (a run with a hook, which never fuses)."""

from __future__ import annotations

from importlib import resources

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from isaforge.core.errors import EmulationError
from isaforge.tensix import assemble
from isaforge.tensix.machine import fpu_jit
from isaforge.tensix.machine.coprocessor import Coprocessor
from isaforge.tensix.machine.matrix import MatrixUnit

assert fpu_jit.load() is not None  # numba is a dependency: runs need the compiled kernels

KERNEL = str(resources.files("isaforge.tensix") / "data" / "matmul_kernel.s")

mvmuls = st.lists(st.tuples(st.sampled_from([0] * 12 + [1, 2, 3]), st.integers(0, 1),
                            st.integers(0, 7), st.integers(0, 1023)), min_size=2, max_size=24)
setc16 = st.lists(st.tuples(st.sampled_from(list(range(12, 20)) + list(range(28, 36))
                                            + list(range(47, 55)) + [20]),
                            st.integers(0, 0xFFFF)), max_size=12)


def _program(fp32: int, fidelity_base: int, regs: list[tuple[int, int]],
             words: list[tuple[int, int, int, int]], replays: int) -> str:
    lines = [f".config ALU_ACC_CTRL_Fp32_enabled {fp32}",
             f".threadconfig FIDELITY_BASE_Phase {fidelity_base}", ".thread 1"]
    lines += [f"ttsetc16 {r},{v:#x}" for r, v in regs]
    lines.append(f"ttreplay 0,{len(words)},0,1")
    lines += [f"ttmvmul {c},{m},{a},{d}" for c, m, a, d in words]
    lines += [f"ttreplay 0,{len(words)},0,0"] * replays
    return "\n".join(lines) + "\n"


def _fill_src(cp: Coprocessor, fmt: str, seed: int) -> None:
    """Both banks of SrcA and SrcB with random values of many magnitudes, 10% zeros."""
    rng = np.random.default_rng(seed)
    for which in "ab":
        for bank in (0, 1):
            values = rng.standard_normal((64, 16)) * np.exp2(rng.integers(-8, 8, (64, 16)))
            values[rng.random((64, 16)) < 0.1] = 0
            cp.load_src(which, bank, values.astype(np.float32), fmt)


def _run(program: str, fmt: str, seed: int, fuse: bool, max_steps: int
         ) -> tuple[Coprocessor, str | None]:
    cp = Coprocessor()
    cp.load_program(program)
    _fill_src(cp, fmt, seed)
    if not fuse:
        cp.hook_add("insn", lambda m, a, n, ev: None)  # tracing: one instruction at a time
    try:
        cp.run(max_steps=max_steps)
    except EmulationError as e:
        return cp, f"{type(e).__name__}: {e}"
    return cp, None


def _same(a: Coprocessor, b: Coprocessor) -> None:
    assert (a.dst.bits == b.dst.bits).all()
    assert (a.dst.valid == b.dst.valid).all()
    assert (a.rwc.v == b.rwc.v).all()
    for x, y in ((a.srca, b.srca), (a.srcb, b.srcb)):
        assert x.matrix_bank == y.matrix_bank
        assert list(x.allowed_client) == list(y.allowed_client)
    assert (a.steps, a.rounds) == (b.steps, b.rounds)
    assert [t.executed for t in a.threads] == [t.executed for t in b.threads]
    assert [len(t.pending) for t in a.threads] == [len(t.pending) for t in b.threads]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fp32=st.integers(0, 1), fidelity_base=st.integers(0, 3), regs=setc16, words=mvmuls,
       replays=st.integers(1, 3), fmt=st.sampled_from(["bf16", "tf32", "fp16"]),
       seed=st.integers(0, 2**32 - 1), max_steps=st.sampled_from([10, 40, 100_000]))
def test_runs_equal_one_at_a_time(fp32: int, fidelity_base: int, regs: list[tuple[int, int]],
                                  words: list[tuple[int, int, int, int]], replays: int,
                                  fmt: str, seed: int, max_steps: int) -> None:
    """Random AddrMod sections (sometimes with the unmodelled AB2 bits), MVMULs with every
    addr_mode, the row broadcast and bank flips, replayed 1-3 times, in three formats, with
    and without FP32 Dst, and step limits that fall inside a run."""
    program = _program(fp32, fidelity_base, regs, words, replays)
    fused, err_fused = _run(program, fmt, seed, True, max_steps)
    ref, err_ref = _run(program, fmt, seed, False, max_steps)
    assert err_fused == err_ref
    _same(fused, ref)


def test_the_matmul_kernel_runs_its_mvmuls_in_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bundled kernel's 64 MVMULs (the MOP queues 4 replays of 16, one per fidelity
    phase) go through mvmul_run as one run, and the result equals the run one instruction at
    a time."""
    runs: list[int] = []
    real = MatrixUnit.mvmul_run

    def counting(*args: object) -> int:
        n = real(*args)  # type: ignore[arg-type]
        runs.append(n)
        return n

    monkeypatch.setattr(MatrixUnit, "mvmul_run", counting)
    with open(KERNEL, encoding="utf-8") as f:
        program = f.read()
    fused, err = _run(program, "bf16", 3, True, 10_000)
    assert err is None
    assert [n for n in runs if n] == [64]
    ref, err = _run(program, "bf16", 3, False, 10_000)
    assert err is None
    _same(fused, ref)
    assert fused.steps == 76


def test_no_runs_while_another_thread_has_work() -> None:
    """With a second thread still running, MVMULs issue one per round, interleaved."""
    program = _program(1, 0, [(12, 0x0810), (28, 0x0008)], [(0, 0, 0, 0)] * 8, 1)
    program += ".thread 0\n" + "ttnop\n" * 20
    cp, err = _run(program, "bf16", 1, True, 10_000)
    ref, err_ref = _run(program, "bf16", 1, False, 10_000)
    assert err is None and err_ref is None
    _same(cp, ref)
    assert cp.rounds == ref.rounds == 20


def test_a_streamed_tile_reuses_the_plan_and_equals_the_whole_kernel() -> None:
    """The kernel set up once, then per tile only ZEROACC, SETRWC, MOP, SETRWC (what a real
    matmul's core pushes per tile): each tile's Dst equals the whole kernel run for it, and
    from the second tile on the run's plan comes from the cache (no new entries)."""
    with open(KERNEL, encoding="utf-8") as f:
        program = f.read()
    tile = assemble("TTI_ZEROACC(3, 0, 0, 0, 0)\nttsetrwc 0,0,0,0,0,15\nttmop 1,0,0\n"
                    "ttsetrwc 0,0,0,0,0,15")
    cp, err = _run(program, "bf16", 5, True, 10_000)
    assert err is None
    sizes = []
    for seed in (6, 7, 8):
        whole, err = _run(program, "bf16", seed, True, 10_000)
        assert err is None
        _fill_src(cp, "bf16", seed)  # the Src values _run loaded into `whole`
        cp.set_stream(1, tile)
        cp.run(max_steps=10_000)
        assert (cp.dst.read("fp32", range(64)) == whole.dst.read("fp32", range(64))).all()
        assert (cp.rwc.v == whole.rwc.v).all()
        sizes.append(len(cp.units.matrix.math_regs(1).plans))
    assert sizes[0] == sizes[1] == sizes[2] > 0
