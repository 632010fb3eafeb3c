"""Gpu hooks: Unicorn's ``hook_add(kind, callback, begin, end) -> handle`` / ``hook_del``.

A hooked run computes what an unhooked run computes (the hooked blocks are the same code with
calls in them), and the callbacks see every executed instruction, every OMEM and code-memory
write and every register write, each once, with the arguments of ``core.hooks.KINDS``."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from isaforge import theia
from isaforge.core.hooks import HookError
from isaforge.theia.machine.gpu import Gpu
from isaforge.theia.machine.hooks import InsnInfo, RegInfo, imem_address, locate, omem_address
from isaforge.theia.machine.loader import load_program
from tests.refdata import refdata

REGRESSIONS = ["test1_IO", "test_arrays_1", "test_branches_1", "test_multihtread1",
               "test_omem_1"]


def _gpu(directory: Path, quirks: tuple[str, ...] = ()) -> Gpu:
    prog = load_program(directory)
    gpu = Gpu(quirks=quirks)
    gpu.load(prog.code, prog.control, prog.tmem)
    return gpu


def _record(gpu: Gpu, kinds: tuple[str, ...] = ("insn", "mem_write", "reg_write"),
            begin: int | None = None, end: int | None = None) -> list[tuple[Any, ...]]:
    events: list[tuple[Any, ...]] = []
    for kind in kinds:
        gpu.hook_add(kind, lambda g, a, *rest, kind=kind: events.append((kind, g, a, *rest)),
                     begin, end)
    return events


def _state(gpu: Gpu) -> tuple[Any, ...]:
    return tuple((vp.r, bytes(vp.w), vp.omem.tobytes(), vp.omem_written.tobytes(), vp.pc,
                  vp.instructions, vp.stopped) for vp in gpu.vps) + (gpu.cp.regs, gpu.cp.steps)


# (the instruction-level quirks; the hooks of a timed run: test_api_rtl)
@pytest.mark.parametrize("quirks", [(), ("tmem-row0", "first-eof", "cp-not-noop")],
                         ids=["designed", "quirks"])
@pytest.mark.parametrize("test", REGRESSIONS)
def test_a_hooked_run_is_the_same_run(test: str, quirks: tuple[str, ...]) -> None:
    directory = refdata("theia", "regressions", test)
    plain = _gpu(directory, quirks)
    want = plain.run(max_steps=1_000_000)
    hooked = _gpu(directory, quirks)
    events = _record(hooked)
    got = hooked.run(max_steps=1_000_000)
    assert got == want
    assert _state(hooked) == _state(plain)
    assert all(e[1] is hooked for e in events)  # the machine comes first
    # one insn event per instruction each core executed, at its byte address
    insn = [e for e in events if e[0] == "insn"]
    per_core = Counter(e[4].core for e in insn)
    assert per_core["CP"] == hooked.cp.steps
    for vp in hooked.vps:
        assert per_core[f"VP{vp.index}"] == vp.instructions
    for _, _, address, size, info in insn:
        assert isinstance(info, InsnInfo)
        assert size == (4 if info.core == "CP" else 8) and address % size == 0
        code = hooked.cp.ram[address // 4] if info.vp is None else \
            hooked.vps[info.vp].fetch(address // 8)
        assert info.word == code
    # every OMEM word written, with its final value last
    last: dict[int, int] = {}
    for e in events:
        if e[0] == "mem_write" and locate(e[2])[0] == "omem":
            _, vp, word = locate(e[2])
            assert e[3] == 4
            last[omem_address(vp, word)] = e[4]
    for vp in hooked.vps:
        written = {omem_address(vp.index, int(k)): int(vp.omem[k])
                   for k in vp.omem_written.nonzero()[0]}
        assert {a: v for a, v in last.items() if locate(a)[1] == vp.index} == written
    # the VP register writes leave each row as the dump shows it
    rows: dict[tuple[int, int], tuple[int, int, int]] = {}
    for e in events:
        if e[0] == "reg_write" and e[4].vp is not None:
            assert isinstance(e[4], RegInfo) and e[4].source in ("insn", "mcu")
            rows[(e[4].vp, e[2])] = e[3]
    for (vp, row), lanes in rows.items():
        assert hooked.register(vp, row) == lanes


def test_both_threads_are_named() -> None:
    gpu = _gpu(refdata("theia", "regressions", "test_multihtread1"))
    events = _record(gpu, ("insn",))
    gpu.run(max_steps=1_000_000)
    threads = Counter(e[4].thread for e in events if e[4].vp == 2)
    assert threads[0] and threads[1]


def test_ranges_and_handles() -> None:
    directory = refdata("theia", "regressions", "test_omem_1")
    gpu = _gpu(directory)
    everything = _record(gpu, ("mem_write",))
    vp2_omem = _record(gpu, ("mem_write",), *gpu.omem_range(2))
    first_insns = _record(gpu, ("insn",), 0, 8 * 9)  # PCs 0..9 of every core (and CP 0..18)
    rows = _record(gpu, ("reg_write",), 12, 12)
    gpu.run()
    omem = [e for e in everything if locate(e[2])[0] == "omem"]
    assert omem and vp2_omem == [e for e in omem if locate(e[2])[1] == 2]
    code = [e for e in everything if locate(e[2])[0] == "imem"]
    assert code and all(e[3] == 8 for e in code)
    for _, _, address, _, word in code:  # the MCU's COPYBLOCK of code
        _, vp, index = locate(address)
        assert address == imem_address(vp, index) and gpu.vps[vp].fetch(index) == word
    assert first_insns and all(0 <= e[2] <= 72 for e in first_insns)
    assert rows and {e[2] for e in rows} == {12}
    assert [e[3] for e in rows if e[4].vp == 2][-1] == gpu.register(2, 12)


def test_hook_del_and_errors() -> None:
    gpu = Gpu(cores=1)
    calls: list[int] = []
    h = gpu.hook_add("insn", lambda g, a, s, i: calls.append(a))
    gpu.load_vp(0, theia.assemble("ADD R[5].xyz I(7) 0\nADD R6.xyz R5.xyz R5.xyz\n"
                                  "ADD R0.___ R0.xyz R0.xyz {EOF=1}"))
    assert gpu.vps[0].hook is not None
    assert gpu.step() and calls == [0]
    gpu.hook_del(h)
    assert gpu.vps[0].hook is None  # back to the plain blocks
    gpu.run()
    assert calls == [0] and gpu.register(0, 6) == (14, 14, 14)
    with pytest.raises(HookError):
        gpu.hook_del(h)
    with pytest.raises(HookError):
        gpu.hook_add("mem_read", print)  # not a kind a THEIA GPU reports
    with pytest.raises(HookError):
        gpu.hook_add("insn", 42)


def test_register_and_cp_events() -> None:
    gpu = Gpu(cores=1)
    events = _record(gpu, ("insn", "reg_write"))
    gpu.load([], theia.assemble("ASSIGN R11 I(5 )\nADD R12 R11 R11\nEXIT R0 R0 R0", cp=True))
    gpu.load_vp(0, theia.assemble("ADD R[5].x_z I(7) 0\nADD R0.___ R0.xyz R0.xyz {EOF=1}"))
    gpu.run()
    assert ("reg_write", gpu, 5, (7, 0, 7), RegInfo("VP0", 0, 5, "insn")) in events
    assert ("reg_write", gpu, 12, 10, RegInfo("CP", None, 7, "insn")) in events
    cp_insn = [(e[2], e[3], e[4].word) for e in events if e[0] == "insn" and e[4].core == "CP"]
    assert cp_insn == [(0, 4, 0x0D0B0005), (4, 4, 0x020C0B0B), (8, 4, 0x0F000000)]
    assert [e[4] for e in events if e[0] == "insn" and e[4].vp == 0] == [
        InsnInfo("VP0", 0, 0, gpu.vps[0].fetch(0))]
