"""Before the first issue: the CP program's timeline, the MCU's copies and the CCB starts.

``cycle.boot`` runs the control program one instruction per cycle, with STATUS (the MCU's
FIFO-empty bit) from the copy timing derived from the RTL (9 cycles per code block). Every
instruction the RTL's CP dumper printed (cp.log) must appear at the same stamp: the polling
loop after each COPYBLOCK makes those stamps depend on when the copy ends, to 5 cycles; two
runs pin it to the cycle (test1_out_of_order_1 sees STATUS=1 at the first cycle it can,
test1_tmem one poll before it would). The first issue of every VP is then checked against
every vp.N.log.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from isaforge.core.errors import EmulationError
from isaforge.theia.cycle.boot import CODE_BLOCK_CYCLES, boot
from isaforge.theia.image import read_mem
from tests.refdata import refdata

RUNS = [("regressions", n) for n in (
    "test1_IO", "test1_out_of_order_1", "test1_tmem", "test_arrays_1",
    "test_bitwise_operations", "test_branches_1", "test_expressions", "test_multihtread1",
    "test_omem_1")] + [("multicore_smoke",), ("isa_probe", "v_none")]

# what the CP dumper prints for each opcode (NOP lines were removed from the stored logs)
PRINTED = {1: "DELIVER_COMMAND", 2: "ADD", 3: "SUB", 4: "AND", 5: "OR", 6: "BRANCH", 7: "BEQ",
           8: "BNE", 9: "BG", 10: "BL", 11: "BGE", 12: "BLE", 13: "ASSIGN", 14: "COPYBLOCK",
           15: "EXIT", 17: "SHL", 18: "SHR"}


def _load(parts: tuple[str, ...]) -> tuple[Path, list[int], list[int]]:
    d = refdata("theia", *parts, "cp.log").parent
    code = read_mem((d / "code.mem").read_text())
    control = read_mem((d / "control_code.mem").read_text(), cp=True)
    return d, code, control


@pytest.mark.parametrize("parts", RUNS, ids=lambda p: p[-1])
def test_cp_log_stamps(parts: tuple[str, ...]) -> None:
    d, code, control = _load(parts)
    ref = [(int(t), op) for t, op in re.findall(r"(\d+)ns CP:\s+(\w+)",
                                                (d / "cp.log").read_text())]
    b = boot(control, code, run_cycles=(ref[-1][0] - 170) // 20 + 1)
    ours = [(b.ns(c), PRINTED[op]) for c, op in b.cp_ops if op in PRINTED]
    assert ours == ref


@pytest.mark.parametrize("parts", RUNS, ids=lambda p: p[-1])
def test_first_issue_of_every_vp(parts: tuple[str, ...]) -> None:
    d, code, control = _load(parts)
    firsts = {}
    for log in sorted(d.glob("vp.*.log")):
        m = re.search(r"(\d+)ns VP\[\s*\d+\] IP\s+\d+\s+ISSUE", log.read_text())
        assert m is not None
        firsts[int(log.name.split(".")[1])] = int(m.group(1))
    b = boot(control, code)
    assert sorted(b.starts) == sorted(firsts)
    # the VP model's cycle 0 is the FETCH of IP 0; the first issue follows one cycle later
    assert {v: b.start_ns(v) + 20 for v in firsts} == firsts
    for v in firsts:  # the MCU put the program into every started VP
        assert b.code[v][:len(code)] == code


def test_copy_timing_follows_the_block_count() -> None:
    d, code, control = _load(("multicore_smoke",))
    b = boot(control, code)
    for c in b.copies:
        assert c.started == c.issued + 2
        assert c.empty_from - c.started == CODE_BLOCK_CYCLES * c.request.blocks
    assert [c.request.dst_id for c in b.copies] == [1, 2, 3, 4]


def test_control_program_that_starts_nothing() -> None:
    with pytest.raises(EmulationError, match="started no VP"):
        boot([0] * 4, [], max_cycles=1000)
