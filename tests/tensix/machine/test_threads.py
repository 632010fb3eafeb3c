"""Three threads: the half-Dest protocol of spec 001 §5 and deadlock reports.

T0 (unpack) hands SrcA/SrcB to the Matrix Unit with UNPACR_NOP's SETDVALID form. T1 (math)
waits for the banks (STALLWAIT C7/C8), then per round waits for a free half (SEMWAIT C1 on
MATH_PACK), points DEST_TARGET_REG_CFG_MATH_Offset at it, runs the 16-MVMUL tile ``r + 1``
times into it and SEMPOSTs. T2 (pack) waits for a full half (SEMWAIT C0), its RISC-V reads
the half through the Dst debug window, ZEROACCs the half and SEMGETs.
"""

from __future__ import annotations

import numpy as np
import pytest

from isaforge.tensix import Coprocessor, Executed
from isaforge.tensix.machine.state import DeadlockError

from .test_kernel import ADDR_MODS, REPLAY_ORDER, _faces, _tile

MATH_PACK = 1 << 1  # semaphore 1
WINDOW = 0xFFBD8000
ROUNDS = 4


def _addr_mods() -> list[str]:
    out = []
    for sec, (ab_v, dst_v) in ADDR_MODS.items():
        out += [f"ttsetc16 {12 + sec},{ab_v:#x}", f"ttsetc16 {28 + sec},{dst_v:#x}"]
    return out


def half_dest_program(rounds: int = ROUNDS, pack_sem: int = MATH_PACK) -> str:
    t0 = [".thread 0", "TTI_UNPACR_NOP(0, 0, 0, 0, 0, 0, 0, 1, 3)",
          "TTI_UNPACR_NOP(1, 0, 0, 0, 0, 0, 0, 1, 3)"]
    t1 = [".thread 1", *_addr_mods(), "ttreplay 16,16,0,1",
          *[f"ttmvmul 0,0,{m},0" for m in REPLAY_ORDER],
          "TTI_STALLWAIT(64, 0x180)"]  # B6 until C7 and C8: both banks with the Matrix Unit
    t2 = [".thread 2"]
    for r in range(rounds):
        half = r % 2
        t1 += ["TTI_SEMWAIT(64, 2, 2)",  # B6 while MATH_PACK Value >= Max
               f"ttsetc16 1,{256 * half}"]  # Dst32b rows 0..255 / 256..511
        for _ in range(r + 1):
            t1 += ["ttsetrwc 0,0,0,0,0,15", "ttreplay 16,16,0,0"]
        t1 += ["TTI_SEMPOST(2)"]
        t2 += [f"TTI_SEMWAIT(511, {pack_sem}, 1)",  # all, Value==0
               "ttdmanop",  # here the RISC-V reads the half through the debug window
               f"TTI_ZEROACC(2, 0, 0, 0, {half})",
               "TTI_SEMGET(2)"]
    head = [".semaphore 1 0 2", ".config ALU_ACC_CTRL_Fp32_enabled 1",
            ".config THCON_SEC0_REG2_Out_data_format 5",
            ".config THCON_SEC1_REG2_Out_data_format 5"]
    return "\n".join(head + t0 + t1 + t2) + "\n"


def _machine(rounds: int = ROUNDS, pack_sem: int = MATH_PACK
             ) -> tuple[Coprocessor, np.ndarray, tuple[list, list]]:
    cp = Coprocessor()
    cp.load_program(half_dest_program(rounds, pack_sem), "half_dest.s")
    rng = np.random.default_rng(2)
    a = rng.integers(-4, 5, (64, 16)).astype(np.float32)
    b = rng.integers(-4, 5, (64, 16)).astype(np.float32)
    cp.srca.load(0, a, "bf16")  # what unpacker 0 wrote; T0's UNPACR_NOP hands it over
    cp.srcb.load(0, b, "bf16")
    tile = _faces(_tile(b.astype(np.float64)) @ _tile(a.astype(np.float64)))
    reads: list = []
    log: list = []

    def hook(machine: Coprocessor, address: int, size: int, ev: Executed) -> None:
        log.append((ev.thread, ev.insn.name))
        if ev.thread == 2 and ev.insn.name == "DMANOP":
            half = len(reads) % 2
            vals = np.empty((64, 16), np.float32)
            for r in range(64):
                for c in range(16):
                    addr = WINDOW + ((256 * half + r) * 16 + c) * 4
                    vals[r, c] = np.uint32(cp.dst.debug_load(addr, 0)).view(np.float32)
            reads.append(vals)
    cp.hook_add("insn", hook)
    return cp, tile, (reads, log)


def test_half_dest_protocol_rounds() -> None:
    cp, tile, (reads, log) = _machine()
    cp.run(max_steps=100_000)
    assert len(reads) == ROUNDS
    for r, got in enumerate(reads):
        # each half is cleared by ZEROACC after packing, so round r holds (r + 1) tiles only
        np.testing.assert_array_equal(got, ((r + 1) * tile).astype(np.float32),
                                      err_msg=f"round {r}")
    assert cp.sync.sem.value[1] == 0
    assert not cp.dst.valid.any()  # both halves ZEROACC'd at the end
    # the math thread never runs more than two rounds ahead of the pack thread
    posts = [i for i, e in enumerate(log) if e == (1, "SEMPOST")]
    gets = [i for i, e in enumerate(log) if e == (2, "SEMGET")]
    for r in range(2, ROUNDS):
        assert posts[r] > gets[r - 2]


def test_stalled_math_waits_for_the_unpacker() -> None:
    cp, _, (_, log) = _machine(rounds=1)
    cp.run()
    first_mvmul = log.index((1, "MVMUL"))
    handovers = [i for i, e in enumerate(log) if e == (0, "UNPACR_NOP")]
    assert len(handovers) == 2 and first_mvmul > max(handovers)


def test_broken_protocol_reports_a_deadlock() -> None:
    """T2 waits on the wrong semaphore (UNPACK_TO_DEST): nobody posts it, T1 fills both
    halves and then waits for a free one."""
    cp, _, _ = _machine(pack_sem=1 << 2)
    with pytest.raises(DeadlockError) as e:
        cp.run(max_steps=100_000)
    reasons = e.value.reasons
    assert set(reasons) == {1, 2}
    assert "semaphore 1 (MATH_PACK) Value 2 >= Max 2" in reasons[1]
    assert "semaphore 2 (UNPACK_TO_DEST) Value == 0" in reasons[2]
    assert "thread 1:" in str(e.value) and "thread 2:" in str(e.value)


def test_scheduler_is_deterministic() -> None:
    """The same program and data give the same interleaving, instruction for instruction."""
    logs = []
    for _ in range(2):
        cp, _, (_, log) = _machine(rounds=3)
        cp.run(max_steps=100_000)
        logs.append(log)
    assert logs[0] == logs[1]
    # and the threads really interleave: all three appear before the first SEMGET
    first_get = logs[0].index((2, "SEMGET"))
    assert {t for t, _ in logs[0][:first_get]} == {0, 1, 2}
