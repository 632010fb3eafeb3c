"""Hooks of the Coprocessor (Unicorn's shape, the kinds of ``isaforge.core.hooks``):
``hook_add(kind, callback, begin, end) -> handle`` and ``hook_del(handle)`` for ``insn``,
``ub`` and ``reg_write``; the dispatch table the units make; pushing words to a thread."""

from __future__ import annotations

from importlib import resources

import numpy as np
import pytest

from isaforge.core.hooks import HookError
from isaforge.tensix import Coprocessor, Executed, assemble, ops
from isaforge.tensix.machine import HOOK_KINDS, RegWrite, UBEvent, fpu_jit
from isaforge.tensix.machine.dispatch import Unit, build
from isaforge.tensix.machine.matrix import MatrixUnit
from isaforge.tensix.machine.state import UndefinedBehaviourError

KERNEL = (resources.files("isaforge.tensix") / "data" / "matmul_kernel.s").read_text("utf-8")


def _insns(cp: Coprocessor, **bounds: int) -> tuple[int, list[tuple[int, int, str]]]:
    seen: list[tuple[int, int, str]] = []

    def hook(machine: Coprocessor, address: int, size: int, ev: Executed) -> None:
        assert machine is cp and size == 4 and ev.address == address
        seen.append((ev.thread, address, ev.insn.name))

    return cp.hook_add("insn", hook, **bounds), seen


def test_insn_hook_address_is_the_stream_index_of_the_word() -> None:
    """A MOP's expansion shares the MOP's index; the other words have their own."""
    nop, setc16 = 0x02000000, assemble("ttsetc16 7,1")[0]
    cp = Coprocessor()
    # MOP template 1, one outer loop of 3: NOP, NOP, then SETC16 as the last instruction
    cp.load_program(f".thread 1\n.mopcfg 0 1\n.mopcfg 1 3\n.mopcfg 2 {nop}\n"
                    f".mopcfg 3 {nop}\n.mopcfg 5 {nop}\n.mopcfg 6 {nop}\n"
                    f".mopcfg 7 {setc16}\n.mopcfg 8 {setc16}\n"
                    "ttsetc16 5,4\nttmop 1,0,0\nttnop\n.thread 0\nttnop\nttnop\n")
    _, seen = _insns(cp)
    cp.run()
    assert [s for s in seen if s[0] == 0] == [(0, 0, "NOP"), (0, 1, "NOP")]
    assert [(a, n) for t, a, n in seen if t == 1] == [
        (0, "SETC16"), (1, "NOP"), (1, "NOP"), (1, "SETC16"), (2, "NOP")]


def test_begin_end_and_hook_del() -> None:
    cp = Coprocessor()
    h_all, every = _insns(cp)
    h_some, some = _insns(cp, begin=1, end=2)
    assert isinstance(h_all, int) and h_all != h_some
    cp.set_stream(0, assemble("ttnop\n" * 5))
    cp.run()
    assert [a for _, a, _ in every] == [0, 1, 2, 3, 4]
    assert [a for _, a, _ in some] == [1, 2]
    cp.hook_del(h_all)
    cp.set_stream(0, assemble("ttnop\n" * 2))
    cp.run()
    assert len(every) == 5 and [a for _, a, _ in some] == [1, 2, 1]
    with pytest.raises(HookError):
        cp.hook_del(h_all)
    with pytest.raises(HookError, match="unknown hook kind 'mem_write'"):
        cp.hook_add("mem_write", print)
    assert set(HOOK_KINDS) == {"insn", "ub", "reg_write"}


def test_an_insn_hook_turns_mvmul_runs_off_until_deleted(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    assert fpu_jit.load() is not None  # runs need the compiled kernels
    runs: list[int] = []
    real = MatrixUnit.mvmul_run

    def counting(*args: object) -> int:
        n = real(*args)  # type: ignore[arg-type]
        runs.append(n)
        return n

    monkeypatch.setattr(MatrixUnit, "mvmul_run", counting)
    ones = np.ones((64, 16), np.float32)

    def kernel(cp: Coprocessor) -> np.ndarray:
        cp.load_program(KERNEL)
        cp.load_src("a", 0, ones, "bf16")
        cp.load_src("b", 0, ones, "bf16")
        cp.dst.invalidate_physical(slice(None))
        cp.run(max_steps=10_000)
        return cp.dst.read("fp32", range(64))

    cp = Coprocessor()
    h, seen = _insns(cp)
    traced = kernel(cp)
    assert runs == [] and sum(1 for s in seen if s[2] == "MVMUL") == 64
    cp.hook_del(h)
    assert (kernel(cp) == traced).all() and 64 in runs


def test_ub_hook_hears_each_report_before_stop_raises() -> None:
    heard: list[tuple[int, str, UBEvent]] = []

    def hook(machine: Coprocessor, address: int, message: str, ev: UBEvent) -> None:
        heard.append((address, message, ev))

    cp = Coprocessor(ub="continue")
    cp.hook_add("ub", hook)
    cp.set_stream(2, assemble("ttnop\nttshiftdmareg 0,5,1,2,3\nttrdcfg 1,300"))
    cp.run()
    assert [(a, ev.thread) for a, _, ev in heard] == [(1, 2), (2, 2)]
    assert "SHIFTDMAREG mode 5" in heard[0][1] and heard[0][2].instruction.startswith("ttshift")
    assert [e.message for e in cp.ub_events] == [m for _, m, _ in heard]

    heard.clear()
    cp = Coprocessor()
    cp.hook_add("ub", hook, begin=1, end=1)
    cp.set_stream(0, assemble("ttnop\nttrdcfg 1,300"))
    with pytest.raises(UndefinedBehaviourError, match="Config word 300"):
        cp.run()
    assert len(heard) == 1 and heard[0][0] == 1


def test_reg_write_reports_what_instructions_write() -> None:
    writes: list[tuple[int, int, RegWrite]] = []
    cp = Coprocessor()
    handle = cp.hook_add("reg_write", lambda m, reg, value, info: writes.append(
        (reg, value, info)))
    cp.load_program(".thread 1\n.gpr 4 0x12345678\n"  # setup, not an instruction: not heard
                    "ttsetc16 5,4\nttwrcfg 4,0,6\nTTI_RMWCIB1(0xFF, 0x12, 6)\n"
                    "ttrdcfg 7,6\nttadddmareg 1,9,1,7\nttsetc16 0,1\nttwrcfg 4,1,8\n")
    cp.run()
    got = [(info.space, info.thread, info.bank, reg, value) for reg, value, info in writes]
    assert got == [
        ("thread_config", 1, None, 5, 4),
        ("config", 1, 0, 6, 0x12345678),
        ("config", 1, 0, 6, 0x12341278),
        ("gpr", 1, None, 7, 0x12341278),
        ("gpr", 1, None, 9, 0x12341279),
        ("thread_config", 1, None, 0, 1),  # CFG_STATE_ID: bank 1 from here
        ("config", 1, 1, 8, 0x12345678),  # 128-bit: GPRs 4..7 to words 8..11
        ("config", 1, 1, 9, 0), ("config", 1, 1, 10, 0), ("config", 1, 1, 11, 0x12341278),
    ]
    assert int(cp.config.words[1, 11]) == 0x12341278
    cp.hook_del(handle)
    writes.clear()
    cp.set_stream(0, assemble("ttsetc16 5,4\nttadddmareg 1,9,7,1"))
    cp.run()
    assert writes == [] and cp.gpr.watch is None


def test_reg_write_bounds_select_register_numbers() -> None:
    seen: list[int] = []
    cp = Coprocessor()
    cp.hook_add("reg_write", lambda m, reg, value, info: seen.append(reg), begin=2, end=3)
    cp.set_stream(0, assemble("ttsetc16 1,0\nttsetc16 2,0\nttadddmareg 1,3,0,0\n"
                              "ttadddmareg 1,4,0,0"))
    cp.run()
    assert seen == [2, 3]


def test_push_appends_to_a_thread_stream() -> None:
    """What a RISC-V core does: words arrive after the thread has run dry; they run next,
    with stream indices that go on from the earlier words."""
    cp = Coprocessor()
    _, seen = _insns(cp)
    cp.push(1, assemble("ttsetc16 5,4"))
    cp.run()
    assert cp.finished
    cp.push(1, assemble("ttsetc16 6,5\nttnop"))
    assert not cp.finished
    res = cp.run()
    assert res.steps == 2 and [a for _, a, _ in seen] == [0, 1, 2]
    assert int(cp.thread_config.regs[1, 6]) == 5


def test_one_dispatch_table_from_the_units() -> None:
    cp = Coprocessor()
    table = cp.dispatch_table
    expected = {"MVMUL": "MatrixUnit", "SETRWC": "MatrixUnit", "SFPLOAD": "Sfpu",
                "SETC16": "ConfigUnit", "STALLWAIT": "SyncUnit", "SETADCXY": "AdcUnit",
                "ADDDMAREG": "ScalarUnit", "NOP": "FrontendUnit", "SFPMAD": "Sfpu", "DOTPV": ""}
    for name, unit in expected.items():
        entry = table[ops()[name].opcode]
        assert entry is not None and entry.name == name and entry.unit == unit
    assert table[ops()["MVMUL"].opcode].wait is not None
    assert table[ops()["NOP"].opcode].wait is None
    assert sum(e is not None for e in table) == len(ops())

    class Twice(Unit):
        def handlers(self):  # noqa: ANN202
            return {"NOP": lambda t, f: None}

    with pytest.raises(ValueError, match="NOP is executed by both"):
        build([Twice(), Twice()], lambda name: lambda t, f: None)
