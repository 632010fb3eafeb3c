"""One table from opcode to what executes it.

Every unit of the machine is a class of this package, constructed with the state it uses and
nothing else (the register files, counters, configuration it reads and writes, and the
machine's ``report_ub``). A unit lists the instructions it executes (:meth:`Unit.handlers`:
name -> ``execute(thread, fields)``) and those that may hold themselves back at the Wait Gate
(:meth:`Unit.waits`: name -> ``wait(thread, fields)``, the reason to wait or None).
:func:`build` joins the units into one list indexed by opcode, which the coprocessor reads
once per instruction. An instruction no unit executes gets an entry that raises
:class:`~.state.NotImplementedInstruction`.

Adding a unit: a new module with a :class:`Unit` subclass, and one line in
:class:`~.coprocessor.Coprocessor` that constructs it and passes it to :func:`build`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from typing import NamedTuple

from ..isa import ops

Fields = Mapping[str, int]
#: executes one instruction of thread ``t`` with its decoded fields
Execute = Callable[[int, Fields], None]
#: why an instruction of thread ``t`` cannot pass the Wait Gate yet (None: it can)
Wait = Callable[[int, Fields], "str | None"]
#: reports undefined behaviour of the instruction being executed (the machine's report_ub)
Report = Callable[[str], None]


class Changes:
    """A count that moves (``changes += 1``) with every change to the state it stands for
    (the Src banks' owners, the semaphores...): a thread held by a wait that reads only that
    state is not asked again while the count stays (see :meth:`Unit.wait_reads`)."""

    __slots__ = ("changes",)

    def __init__(self) -> None:
        self.changes = 0


class Unit:
    """A functional unit: the instructions it executes and the waits it imposes."""

    def handlers(self) -> Mapping[str, Execute]:
        """Instruction name (tt-llk spelling) -> what executes it."""
        raise NotImplementedError

    def waits(self) -> Mapping[str, Wait]:
        """Instruction name -> its own Wait Gate condition (most instructions have none)."""
        return {}

    def wait_reads(self) -> Mapping[str, Changes]:
        """Instruction name -> the :class:`Changes` that moves with every change to what its
        wait (:meth:`waits`) reads (every writer, instruction or not, bumps it); a wait listed
        here reads nothing else (but the instruction's fields) and reports nothing. A wait not
        listed is asked again after any instruction that may change anything."""
        return {}

    def quiet(self) -> Collection[str]:
        """Instructions (without a wait of their own) whose execution changes nothing any
        wait reads: not the SrcA/SrcB banks' owners, semaphores, mutexes, GPRs, L1, the
        Vector Unit's scheduled work, another thread's Wait Gate latch or its queue. A
        thread waiting at the Wait Gate still waits after one (the coprocessor does not try
        it again). An undefined-behaviour report or a hook during one counts as a change
        (the coprocessor sees those)."""
        return ()


class Entry(NamedTuple):
    """What the machine does with one opcode."""

    execute: Execute
    wait: Wait | None
    name: str
    unit: str  # the executing unit's class name ("" when none)


def build(units: Iterable[Unit], missing: Callable[[str], Execute]) -> list[Entry | None]:
    """The dispatch table of ``units``: 256 entries, one per opcode (None where no
    instruction has that opcode). ``missing(name)`` makes the entry of an instruction no unit
    executes. Two units claiming one instruction is a programming error (ValueError)."""
    table: list[Entry | None] = [None] * 256
    owner: dict[str, str] = {}
    for unit in units:
        kind = type(unit).__name__
        waits = unit.waits()
        for name, execute in unit.handlers().items():
            if name in owner:
                raise ValueError(f"{name} is executed by both {owner[name]} and {kind}")
            owner[name] = kind
            table[ops()[name].opcode] = Entry(execute, waits.get(name), name, kind)
        unknown = set(waits) - set(unit.handlers())
        if unknown:
            raise ValueError(f"{kind} waits for instructions it does not execute: {unknown}")
    for name, op in ops().items():
        if table[op.opcode] is None:
            table[op.opcode] = Entry(missing(name), None, name, "")
    return table


__all__ = ["Changes", "Entry", "Execute", "Fields", "Report", "Unit", "Wait", "build"]
