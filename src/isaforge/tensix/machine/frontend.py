"""A Tensix thread's frontend: its instruction queue, the MOP expander, the replay expander.

What the thread's RISC-V core pushes (:meth:`Thread.push`, or a whole stream at once with
:meth:`Thread.set_stream`) goes through the MOP expander (:mod:`.mop`), then the replay
expander (:mod:`.replay`), into ``pending``, whose head waits at the Wait Gate
(:class:`~.coprocessor.Coprocessor`). Every word of ``pending`` came from the stream word at
index ``pc - 1`` (the queue is refilled only once empty): that index is the instruction's
address for hooks and reports.

:class:`FrontendUnit` executes what reaches the Wait Gate of the frontend's own
instructions: NOP, and MOP/MOP_CFG/REPLAY coming out of an expansion.
"""

from __future__ import annotations

from array import array
from collections import deque
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from .dispatch import Changes, Execute, Fields, Report, Unit
from .mop import OP_MOP, OP_MOP_CFG, MopExpander
from .replay import OP_REPLAY, ReplayExpander

#: The opcodes the MOP and replay expanders act on (MOP, MOP_CFG, REPLAY); every other word
#: passes through both unchanged unless a REPLAY is loading.
EXPANDED = frozenset({OP_MOP, OP_MOP_CFG, OP_REPLAY})

#: array typecode of 32-bit unsigned words (``array(WORD, words)`` refuses anything but ints
#: in 0..2**32-1, in C)
WORD = "I" if array("I").itemsize == 4 else "L"

#: reports undefined behaviour of the expanders: (thread, stream index, word, message)
ExpanderReport = Callable[[int, int, int, str], None]


@dataclass
class Thread:
    """One Tensix thread's frontend state."""

    index: int
    program: list[int] = field(default_factory=list)  # every word pushed so far
    pc: int = 0  # the next word of ``program`` to expand
    pending: deque[int] = field(default_factory=deque)
    mop: MopExpander = field(default_factory=MopExpander)
    replay: ReplayExpander = field(default_factory=ReplayExpander)
    #: why the thread's next instruction waits at the Wait Gate (its ``str``), or None
    blocked: object | None = None
    executed: int = 0
    #: ``held.changes`` when the thread last waited at the Wait Gate (-1: it moved): while
    #: they are equal, it waits still
    blocked_at: int = -1
    #: what moves when the thread's wait may have changed: the coprocessor's epoch, or the
    #: :class:`~.dispatch.Changes` of all its wait reads (see Coprocessor._hold)
    held: Changes = field(default_factory=Changes)

    @property
    def finished(self) -> bool:
        """Nothing left to issue (until more words are pushed)."""
        return self.pc >= len(self.program) and not self.pending

    def set_stream(self, words: Iterable[int]) -> None:
        """Replace the stream: ``words`` from index 0, nothing pending."""
        self.program, self.pc = _words(words), 0
        self.pending.clear()

    def push(self, words: Iterable[int]) -> None:
        """Append Tensix words to the stream, as the thread's RISC-V core does."""
        self.program.extend(_words(words))

    def fill(self, report: ExpanderReport) -> bool:
        """Refill ``pending`` through the MOP and replay expanders (when it is empty); False
        if the thread has nothing left."""
        while not self.pending and self.pc < len(self.program):
            word = self.program[self.pc]
            self.pc += 1
            if word >> 24 in EXPANDED or self.replay.load_left:
                out = self.mop.feed(word)
                if not self.replay.load_left and _replay_free(out):
                    self.pending.extend(out)  # what the replay expander passes through
                    continue

                def ub(message: str, word: int = word, index: int = self.pc - 1) -> None:
                    report(self.index, index, word, message)

                for w in out:
                    self.pending.extend(self.replay.feed(w, ub))
            else:  # what both expanders pass through unchanged
                self.pending.append(word)
        return bool(self.pending)


def _words(words: Iterable[int]) -> list[int]:
    """``words`` as 32-bit Python ints (``int(w) & 0xFFFFFFFF`` each). Words that are already
    ints in range (a RISC-V core's pushes) pass through :class:`array.array` in C."""
    if type(words) is list:
        try:
            return array(WORD, words).tolist()
        except (TypeError, OverflowError):
            pass
    return [int(w) & 0xFFFFFFFF for w in words]


#: MOP expansions _replay_free has looked at: id -> (the expansion, kept alive so that its id
#: stays its own; whether it is free of REPLAY words)
_REPLAY_FREE: dict[int, tuple[Sequence[int], bool]] = {}


def _replay_free(out: Sequence[int]) -> bool:
    """Whether no word of ``out`` (a MOP expander's output: the same object for the same
    expansion while the expander caches it) is a REPLAY, so that the replay expander, not
    loading, passes them all through."""
    if len(out) < 4:
        return all(w >> 24 != OP_REPLAY for w in out)
    hit = _REPLAY_FREE.get(id(out))
    if hit is not None and hit[0] is out:
        return hit[1]
    free = all(w >> 24 != OP_REPLAY for w in out)
    if len(_REPLAY_FREE) >= 256:
        _REPLAY_FREE.clear()
    _REPLAY_FREE[id(out)] = (out, free)
    return free


class FrontendUnit(Unit):
    """NOP, and the frontend's instructions when they reach the Wait Gate."""

    def __init__(self, report_ub: Report) -> None:
        self.report_ub = report_ub

    def handlers(self) -> Mapping[str, Execute]:
        return {"NOP": self.nop, "MOP": self.frontend_only, "MOP_CFG": self.frontend_only,
                "REPLAY": self.frontend_only}

    def quiet(self) -> Collection[str]:
        return ("NOP",)

    def nop(self, t: int, f: Fields) -> None:
        pass

    def frontend_only(self, t: int, f: Fields) -> None:
        """MOP, MOP_CFG and REPLAY are consumed by the expanders; one that reaches the Wait
        Gate came out of a replay or MOP expansion, which the hardware does not support."""
        self.report_ub("a MOP/MOP_CFG/REPLAY instruction inside a replayed or MOP-expanded "
                       "sequence")


__all__ = ["EXPANDED", "FrontendUnit", "Thread"]
