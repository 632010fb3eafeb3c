"""What happens before a VP's first issue: reset, the CP program, the MCU's copies, the start.

The RTL test bench (beta_2.0) releases Reset at 150 ns; from then on the control processor
(CP) executes one instruction per clock cycle (20 ns) with no stall of any kind: a taken
branch's delay slot is a cycle like any other, EXIT and NOT do nothing, and the 8-bit IP
wraps through the zero-filled RAM. The only input the CP waits on is the STATUS register
(R2), the memory controller's (MCU's) request-FIFO-empty bit, which a program polls with a
``BEQ`` loop after each COPYBLOCK.

Timing, derived from the RTL source (Unit_ControlProcessor, Module_MemoryController, the
VP's WishBone slave, the test bench's main memory and ControlUnit) and checked against the
stamps of every ``cp.log`` and the first issue of every ``vp.N.log`` in refdata:

* a COPYBLOCK executed in CP cycle ``c`` enters the MCU FIFO at the end of ``c``; the MCU
  notices it in ``c + 1`` (its WAIT state) and moves a 64-bit code block in 9 cycles (two
  32-bit words, each: read request, data available one cycle later, STB, ACK from the VP,
  plus the address-increment state), a 96-bit data block in 13 (three words); the FIFO is
  empty again, and STATUS reads 1, from cycle ``c + 2 + 9 * BLKLEN`` (code). The MCU is run
  cycle by cycle (:mod:`.mcu`), so its defect is there too: a request made while another is
  being served re-loads the address counters, and the copies land shifted or elsewhere
  (checked on an Icarus run of four back-to-back copies: only VP1 gets code, one word off);
* a DELIVERCOMMAND (CCB message) in cycle ``d`` reaches the VP's ControlUnit FIFO at the end
  of ``d``; its FSM takes WAIT -> HANDLE -> START and the VP is enabled from ``d + 3``.

Two offsets are measured, not derived (see README.md):

* :data:`CP_FIRST_NS`: the CP's instruction at IP 0 executes in the cycle ending at 170 ns
  (every cp.log shows IP 3 at 230 ns). Reset falls at 150 ns on a clock edge; which side of
  that edge the CP sees it is Icarus's event order, not something the source says;
* the VP model's cycle 0 (its issue unit's FETCH of IP 0) is the cycle the VP is enabled,
  ``d + 3``, so the first issue is logged at ``d + 4``: the RTL's issue unit has been out of
  reset since 150 ns, in states computed from the x's of a code memory not yet written, and
  that path was not followed; the 4-cycle distance holds in all 13 RTL runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ...core.errors import EmulationError
from ..machine.ccb import CMD_START, Message, route
from ..machine.cp import ControlProcessor
from ..machine.memory import CopyRequest, MainMemory
from .mcu import Mcu

CLOCK_NS = 20
CP_FIRST_NS = 170  # the cycle in which the CP executes IP 0 ends here (measured, see above)
CODE_BLOCK_CYCLES = 9  # MCU: one 64-bit instruction (derived; checked against the traces)
DATA_BLOCK_CYCLES = 13  # MCU: one 96-bit register row (derived; no trace exercises it)
START_TO_ENABLE = 3  # CCB message cycle -> VP enabled (ControlUnit: WAIT, HANDLE, START)
MAX_CORES = 4  # the beta_2.0 top level instantiates 4 VPs
DEFAULT_CP_CYCLES = 1_000_000


@dataclass
class CopyTiming:
    """One COPYBLOCK as the MCU performs it."""

    request: CopyRequest
    vp: int | None  # destination VP index (None: no VP selected)
    issued: int  # CP cycle of the COPYBLOCK
    started: int  # first cycle of the transfer
    empty_from: int  # first cycle the MCU FIFO is empty again (if nothing else is queued)


@dataclass
class Boot:
    """The CP/MCU/CCB timeline of a run up to the VPs' starts."""

    cores: int
    cp_ops: list[tuple[int, int]] = field(default_factory=list)  # (CP cycle, opcode)
    copies: list[CopyTiming] = field(default_factory=list)
    starts: dict[int, int] = field(default_factory=dict)  # VP -> cycle of its START message
    code: dict[int, list[int]] = field(default_factory=dict)  # VP -> code memory words
    written: dict[int, set[int]] = field(default_factory=dict)  # VP -> addresses written
    cycles: int = 0  # CP cycles run

    @staticmethod
    def ns(cycle: int) -> int:
        """The stamp (end of the cycle, as the RTL dumpers print it) of CP cycle ``cycle``."""
        return CP_FIRST_NS + CLOCK_NS * cycle

    def enable_cycle(self, vp: int) -> int:
        """The CP cycle from which VP ``vp`` is enabled (the VP model's cycle 0)."""
        return self.starts[vp] + START_TO_ENABLE

    def start_ns(self, vp: int) -> int:
        """The stamp of the VP model's cycle 0 for VP ``vp``."""
        return self.ns(self.enable_cycle(vp))


class _Bus:
    """What the CP sees: the MCU's FIFO-empty bit, copy requests, CCB messages. The MCU is
    run cycle by cycle (:class:`.mcu.Mcu`, its defect included): it writes the code."""

    def __init__(self, boot: Boot, memory: MainMemory) -> None:
        self.boot = boot
        self.cycle = 0
        self.mcu = Mcu(memory, self._write, MAX_CORES)
        self.request: CopyRequest | None = None  # presented to the MCU in this cycle
        self.mcu_free = 0  # (the analytic timing of the CopyTiming records)
        self.undrained: list[CopyTiming] = []

    def _write(self, vp: int, address: int, word: int) -> None:
        if vp >= self.boot.cores:
            return
        self.boot.written.setdefault(vp, set()).add(address)
        mem = self.boot.code.setdefault(vp, [])
        if address >= len(mem):
            mem.extend([0] * (address + 1 - len(mem)))
        mem[address] = word

    def cp_status(self) -> int:
        return 1 if self.mcu.empty else 0

    def cp_copy(self, req: CopyRequest) -> None:
        c = self.cycle
        if req.dst_id == 0:  # no VP selected: the MCU does not see a request
            return
        vp = req.dst_id & (MAX_CORES - 1)
        if vp >= self.boot.cores:
            vp = None
        self.request = req
        wait = max(c + 1, self.mcu_free)
        n = req.blocks or 2048
        end = wait + 1 + n * (CODE_BLOCK_CYCLES if req.code else DATA_BLOCK_CYCLES)
        self.mcu_free = end
        t = CopyTiming(req, vp, c, wait + 1, end)
        self.boot.copies.append(t)
        self.undrained.append(t)

    def clock(self) -> None:
        """The end of the cycle: the MCU takes its step (with the request made in it)."""
        self.mcu.step(self.request)
        self.request = None
        if self.undrained and self.mcu.empty:
            for t in self.undrained:  # every copy queued ends when the FIFO drains
                t.empty_from = self.cycle + 1
            self.undrained.clear()

    def cp_message(self, message: Message) -> None:
        if message.command != CMD_START:
            return
        for i in route(message, self.boot.cores):
            self.boot.starts.setdefault(i, self.cycle)


def boot(control: Sequence[int], code: Sequence[int], *, cores: int = MAX_CORES,
         until_started: Sequence[int] | None = None, settle: int = 2000,
         max_cycles: int = DEFAULT_CP_CYCLES, run_cycles: int | None = None) -> Boot:
    """Run the CP program ``control`` (with ``code``, the VP image, in main memory) until
    every VP in ``until_started`` has been sent its START (default: every VP the program
    starts, i.e. until all ``cores`` are started or ``settle`` cycles pass without a new
    START), or for exactly ``run_cycles`` CP cycles. ``max_cycles`` bounds a CP that never
    starts anything."""
    if not 1 <= cores <= MAX_CORES:
        raise EmulationError(f"the RTL's top level has 1 to {MAX_CORES} VPs, not {cores}")
    result = Boot(cores)
    bus = _Bus(result, MainMemory.from_vp_words(code))
    cp = ControlProcessor(control, exit_is_noop=True, not_is_noop=True)
    want = None if until_started is None else set(until_started)
    limit = run_cycles if run_cycles is not None else max_cycles
    ops = result.cp_ops
    starts = result.starts
    last_new = 0
    seen = 0
    for cycle in range(limit):
        if run_cycles is None and starts:
            if len(starts) != seen:
                seen = len(starts)
                last_new = cycle
            if (want <= starts.keys() if want is not None
                    else seen == cores or cycle - last_new >= settle):
                break
        bus.cycle = cycle
        ops.append((cycle, cp.ram[cp.ip] >> 24 & 0x1F))
        cp.step(bus)
        bus.clock()
    else:
        if run_cycles is None:
            raise EmulationError(f"the control program started no VP in {max_cycles} CP "
                                 "cycles")
    result.cycles = len(ops)
    return result


__all__ = ["CLOCK_NS", "CP_FIRST_NS", "Boot", "CopyTiming", "boot"]
