"""The VP cycle model: the cycle loop that ties issue unit, stations, SMU and commit bus.

Each simulated cycle: the arbiter grants the commit bus; the issue unit (both, with SMT) takes
one step of its state machine (reading the register file as it was at the start of the
cycle); the granted result is written to the register file and forwarded to the stations
waiting for it. Cycles in which nothing can change (the issue unit waiting for a busy
station, a branch or the last results, with nothing due on the commit bus) are skipped in one
jump, so a 66-cycle DIV costs one step, not 66.

The issue unit's state machine is written once, in :meth:`VPCycleModel.run`: the loop is its
definition (a method call per cycle cost a quarter to a third of the speed). Each word is
decoded once into a plan (``_plan``); without a trace the commit takes inlined fast paths,
and ``tests/theia/test_cycle_rtl.py`` checks that untraced runs equal traced ones.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ...core.errors import EmulationError
from ..machine.alu import (
    MASK32,
    OP_ADD,
    OP_DIV,
    OP_IO,
    ZERO,
    Addressing,
    Lanes,
    addressing,
    branch_taken,
    execute,
    flags,
    modify,
    result_known,
)
from . import events as ev
from . import replay
from .cbus import Arbiter
from .iiu import IssueUnit
from .quirks import DESIGNED, Quirks
from .smu import DepStore, forwarded_src0, forwarded_src1, known_after, tag
from .states import FETCH, FIFO_DEPTH, FIFO_UPDATE, ISSUE, ISSUE_FWD, PC_MASK, RESET, UPDATE_PC
from .stations import FIXED_STATION, NEVER, NUM_STATIONS, RS_ADD0, RS_ADD1, RS_IO, Op, Station

if TYPE_CHECKING:
    import numpy as np

MASK64 = (1 << 64) - 1
TMEM_TOKEN_PHASE = 2  # bank arbiters from reset: the token is at VP (a + 2) % 4 in cycle a
EOF_BIT = 1 << 58  # (the run loop tests it in every cycle: one operation, not two)
ISSUES = (ISSUE, ISSUE_FWD)
OMEM_WORDS = 1 << 16
DEFAULT_MAX_CYCLES = 50_000_000


def _merge(old: Lanes, new: Lanes, we: int) -> Lanes:
    return (new[0] if we & 4 else old[0], new[1] if we & 2 else old[1],
            new[2] if we & 1 else old[2])


def _tag_lanes(t: int) -> Lanes:
    return (0, 0, t)


Modifiers = tuple[int, int, bool] | None
Plan = tuple[int, int, "Addressing | None", bool, int, Modifiers, Modifiers, Lanes, Lanes, int,
             int]


def _plan(w: int, div_latency: int) -> Plan:
    """What issue needs of a word that does not depend on the machine state (decoded once
    per word): opcode, its fixed station (ADD: ADD_0), the addressing when it does not
    depend on the offset / index (else None), branch, IO kind (-1: not IO), what the SMU
    does to SRC1 / SRC0 at issue (``modify``'s sign, swizzle, right scale; None: passed
    through, as ``issue_sources``), the tags shown for pending SRC1 / SRC0, the write
    enables and the latency from start to commit request."""
    opc = w >> 48 & 7
    mode = w >> 45 & 7
    fixed = mode in (0, 4) if w >> 63 else mode == 0
    scale1 = w >> 59 & 9 == 9
    if w >> 63:  # IMM forms: no sign or swizzle
        mod1 = (0, 0, True) if scale1 else None
        mod0 = None
    else:
        mod1 = (w >> 31 & 7, w >> 25 & 0x3F, scale1)
        mod1 = mod1 if mod1 != (0, 0, False) else None
        mod0 = (w >> 14 & 7, w >> 8 & 0x3F, False)
        mod0 = mod0 if mod0 != (0, 0, False) else None
    io = w >> 59 & 7 if opc == OP_IO else -1
    return (opc, RS_ADD0 if opc == OP_ADD else FIXED_STATION[opc],
            addressing(w, 0, 0) if fixed else None, bool(w >> 57 & 1), io, mod1, mod0,
            _tag_lanes(tag(w, 1)), _tag_lanes(tag(w, 0)), w >> 42 & 7,
            div_latency if opc == OP_DIV else 1)


class VPCycleModel:
    """One VP running one program (thread 0), cycle by cycle."""

    def __init__(self, code: Sequence[int], *, quirks: Quirks = DESIGNED,
                 tmem: Sequence[int] | np.ndarray | None = None, omem_words: int = OMEM_WORDS,
                 trace: bool = True, vp: int = 2, clock0: int = 1, fast: bool = False) -> None:
        self.code = [int(w) & MASK64 for w in code]
        self.ncode = len(self.code)
        self.quirks = quirks
        self.trace = trace
        self.vp = vp
        self.rf: list[Lanes] = [ZERO] * 256
        self.known = bytearray(256)  # lanes of each register that hold a defined value
        self.stations = [Station(i) for i in range(NUM_STATIONS + 1)]  # index = station id
        self.arb = Arbiter(self.stations)
        self.smu = DepStore()
        # the instruction memory as the PC addresses it (16 bits; unwritten words read 0)
        self.imem = self.code[:PC_MASK + 1] + [0] * (PC_MASK + 1 - min(self.ncode, PC_MASK + 1))
        self.iius = [IssueUnit(self, 0), IssueUnit(self, 1)]
        self.iius[1].reset(0)
        # SMT: the thread owning the issue bus alternates every 2 cycles (the RTL's shift
        # register ``pre`` and its delayed copy ``pre2``); it shifts on cycles whose parity
        # is ``mt_phase``: the parity of the RTL's counter, free-running since reset, at the
        # model's cycle 0 (``clock0``, the test bench's cycle number then; test_multihtread1
        # starts on an odd one, test_multithread2 on an even one)
        self.pre = 0
        self.pre2 = 0
        self.mt_phase = clock0 & 1
        self.clock0 = clock0
        # the TMEM banks' round-robin arbiters (quirk tmem_tokens): bank b's token is at VP
        # (a + tmem_phase[b]) % 4 in the test bench's cycle a while nobody holds it
        self.tmem_phase = [TMEM_TOKEN_PHASE] * 4
        self.prev_enabled = [True, False]
        self.mt_on = False
        # designed: the youngest issued writer of each register lane (RF write guard) and
        # the op still computing it (renaming)
        self.lane_owner = [0] * (256 * 3)
        self.lane_prod: list[Op | None] = [None] * (256 * 3)
        self.events: list[ev.Event] = []
        # (station, first busy cycle, last busy cycle) for the waveforms
        self.busy_log: list[tuple[int, int, int]] = []
        # 32-bit words in stdlib arrays: a run needs no numpy (it costs more to import than
        # the RTL loop takes to run)
        self.tmem = array("I", () if tmem is None else tmem)
        self.omem = array("I", bytes(4 * omem_words))
        self.omem_written = array("B", bytes(omem_words))  # 1: written
        self.cycle = 0  # the next cycle to simulate
        self.steps = 0  # cycles actually stepped (the rest were skipped)
        self.done = False
        self.finished_at: int | None = None
        self.deadlock = False
        self.seq = 0  # ops issued so far (each has its number)
        self.commits = 0
        self.fifo_overflows = 0
        self.dropped = 0
        self.n_waiting = 0  # stations holding an op that waits for an operand
        self.idle_hint = False  # set by an issue unit that waits (stall, branch, end)
        self._stalled = False  # _quiet_until: the cycles skipped are a structural stall
        self._addr_cache: dict[tuple[int, int, int], Addressing] = {}
        self._rtl_sb = quirks.rtl_scoreboard
        self._plans: dict[int, Plan] = {}
        self._div_latency = quirks.timing.div
        # loop replay (:mod:`.replay`; RTL scoreboard only): when to look for loop heads
        # next, how long to wait after a search that found none, the iterations recorded
        # (with the RTL's branch decision only: the designed one reads the flags elsewhere)
        self.fast = fast and quirks.rtl_scoreboard and quirks.branch_next_cycle
        self.replay_next = 0
        self.replay_backoff = replay.SEARCH
        self.replay_templates: dict[tuple, replay.Template] = {}
        self.blocks = False  # traced: replayed iterations recorded as ev.Replayed blocks
        # while recording an iteration: the cycles whose commit decided a branch (its flags)
        self.flag_probes: set[int] | None = None

    # ---------------------------------------------------------------------------------------
    # State the issue unit reads
    # ---------------------------------------------------------------------------------------

    @property
    def issues(self) -> int:
        """Instructions issued to a station (NOPs excluded)."""
        return self.seq

    @property
    def offset(self) -> int:
        """The frame offset (R3.x, 8 bits)."""
        return self.rf[3][0] & 0xFF

    @property
    def index(self) -> int:
        """The index register (R3.z, 8 bits)."""
        return self.rf[3][2] & 0xFF

    def addressing(self, w: int) -> Addressing:
        """``alu.addressing`` of ``w`` with the current offset and index (cached)."""
        r3 = self.rf[3]
        key = (w, r3[0] & 0xFF, r3[2] & 0xFF)
        a = self._addr_cache.get(key)
        if a is None:
            if len(self._addr_cache) > 65536:
                self._addr_cache.clear()
            a = self._addr_cache[key] = addressing(w, key[1], key[2])
        return a

    def operand_rows(self, w: int) -> Addressing:
        """The rows ``w`` reads and writes: its plan's, or (when they depend on the offset or
        index) with the current R3."""
        plan = self._plans.get(w)
        a = plan[2] if plan is not None else None
        return a if a is not None else self.addressing(w)

    def registers(self) -> np.ndarray:
        """The register file as a (256, 3) uint32 array."""
        import numpy as np

        return np.array(self.rf, dtype=np.uint32)

    def finish(self, t: int) -> None:
        self.done = True
        self.finished_at = t
        if self.trace:  # stations still busy (waiting forever, or cut by the run's end)
            for st in self.stations:
                if st.busy_from <= t and st.busy_end > t:
                    self.busy_log.append((st.id, st.busy_from, t))

    def branch_taken(self, t: int, thread: int) -> None:
        self.events.append(ev.BranchTaken(t, thread))

    # ---------------------------------------------------------------------------------------
    # Issue, execute, commit
    # ---------------------------------------------------------------------------------------

    def issue(self, iiu: IssueUnit, w: int, t: int, fwd: Op | None, c: Op | None) -> Op | None:
        """Put ``w`` on the issue bus in cycle ``t``; returns the op (None for a NOP)."""
        plan = self._plans.get(w)
        if plan is None:
            plan = self._plans[w] = _plan(w, self._div_latency)
        opc, sid, a, branch, io, smu1, smu0, tag1, tag0, we, latency = plan
        # the station (IssueUnit.station_for, inlined)
        stations = self.stations
        if opc == OP_ADD:
            s = stations[RS_ADD0]
            if s.busy_from <= t <= s.busy_end:
                s = stations[RS_ADD1]
                sid = 0 if s.busy_from <= t <= s.busy_end else RS_ADD1
        elif sid:
            s = stations[sid]
            if s.busy_from <= t <= s.busy_end:
                sid = 0
        rf = self.rf
        if a is None:  # the addressing depends on the offset / index (R3)
            r3 = rf[3]
            a = self._addr_cache.get((w, r3[0] & 0xFF, r3[2] & 0xFF))
            if a is None:
                a = self.addressing(w)
        src1_addr, src0_addr, src1_value, dst, dix = a
        raw1_reg = rf[src1_addr] if src1_addr is not None else ZERO
        raw1 = src1_value if src1_value is not None else raw1_reg
        raw0 = rf[src0_addr] if src0_addr is not None else ZERO
        p1 = p0 = None
        rtl_sb = self._rtl_sb
        if rtl_sb:  # the dependency table (IssueUnit.deps, inlined)
            sb = iiu.sb
            if w >> 63:
                d1 = 0
                d0 = 0 if w >> 47 & 1 or src0_addr is None else sb[src0_addr]
            else:
                d1 = 0 if src1_addr is None else sb[src1_addr]
                d0 = 0 if src0_addr is None else sb[src0_addr]
            if fwd is not None:
                if d1 and fwd.dst == src1_addr:
                    d1 = 0
                if d0 and fwd.dst == src0_addr:
                    d0 = 0
        else:  # designed: per-lane renaming, this cycle's commit forwarded
            # (pending / _forward are called only for a register with a producer in flight)
            lp = self.lane_prod
            d1 = d0 = 0
            if src1_value is None and src1_addr is not None:
                b = src1_addr * 3
                if lp[b] is not None or lp[b + 1] is not None or lp[b + 2] is not None:
                    p1 = self.pending(src1_addr, c)
                    if c is not None:
                        raw1 = self._forward(raw1, src1_addr, c)
                    if p1:
                        d1 = next(iter(p1.values())).rs
            if src0_addr is not None:
                b = src0_addr * 3
                if lp[b] is not None or lp[b + 1] is not None or lp[b + 2] is not None:
                    p0 = self.pending(src0_addr, c)
                    if c is not None:
                        raw0 = self._forward(raw0, src0_addr, c)
                    if p0:
                        d0 = next(iter(p0.values())).rs
        if dix:  # IMM mode 011: the raw SRC1.x indexes the destination
            dst = (dst + raw1_reg[0]) & 0xFF
            if self.flag_probes is not None:  # (a value decides a row: no loop replay)
                self.flag_probes.add(-1)
        if not sid:
            if rtl_sb and not branch:
                iiu.sb[dst] = 0
            return None
        self.seq = seq = self.seq + 1
        op = Op(w, iiu.thread, sid, dst, we, t, seq, branch, io)
        known = self.known
        k1 = 7 if src1_value is not None or src1_addr is None else known[src1_addr]
        k0 = 7 if src0_addr is None else known[src0_addr]
        if k1 & k0 != 7:  # an x operand lane makes its result lane x
            op.known = result_known(w, 7 if d1 else known_after(w, 1, k1),
                                    7 if d0 else known_after(w, 0, k0))
        # the SMU at issue (alu.issue_sources, by operand): sign, scale, swizzle
        mod1 = raw1 if smu1 is None else modify(raw1, *smu1)
        mod0 = raw0 if smu0 is None else modify(raw0, *smu0)
        if d1:
            op.dep1 = d1
            mod1 = tag1
        else:
            op.src1 = mod1
        if d0:
            op.dep0 = d0
            mod0 = tag0
        else:
            op.src0 = mod0
        if self.trace:
            r3 = rf[3]
            off = r3[0] & 0xFF
            idx = r3[2] & 0xFF
            self.events.append(ev.Issue(
                t, iiu.thread, (iiu.pc - 1) & 0xFFFFFFFF, iiu.prev_pc, w, sid, dst, we, off,
                idx, d1, d0, raw1, raw0, k1, k0, mod1, mod0, raw1_reg[0],
                src1_addr if src1_addr is not None else 0,
                src0_addr if src0_addr is not None else 0))
        iiu.issued += 1
        if rtl_sb and not branch and io != 0:  # an OMWRITE has no register result
            iiu.sb[dst] = sid  # (the dependency table is read only with the RTL scoreboard)
        if we and not rtl_sb and io != 0:  # a branch writes its WE lanes too
            base = dst * 3
            own = self.lane_owner
            lp = self.lane_prod
            if we & 4:
                own[base] = seq
                lp[base] = op
            if we & 2:
                own[base + 1] = seq
                lp[base + 1] = op
            if we & 1:
                own[base + 2] = seq
                lp[base + 2] = op
        if d1 or d0:  # (p1 / p0, the designed pending lanes, imply d1 / d0)
            if p1:
                op.pend1 = p1
                op.raw1 = list(raw1)
            if p0:
                op.pend0 = p0
                op.raw0 = list(raw0)
            if d1 < 0 or d0 < 0:
                # RTL: a dependency read from a never-written table entry is x; the station
                # ignores the issue (it never executes, never commits, is not busy)
                self.dropped += 1
                return op
            st = stations[sid]
            st.busy_from = t + 1
            op.waits = True
            st.waiting = op
            self.n_waiting += 1
            st.busy_end = NEVER
            self.smu.claim((d1 > 0) + (d0 > 0))
        elif opc != OP_IO:  # _start, inlined for the operations that compute
            st = stations[sid]
            st.busy_from = t + 1
            st.executed += 1
            op.start = t
            if opc == OP_ADD:  # alu.add, inlined
                op.result = ((mod1[0] + mod0[0]) & MASK32, (mod1[1] + mod0[1]) & MASK32,
                             (mod1[2] + mod0[2]) & MASK32)
            else:
                op.result = execute(w, mod1, mod0) or ZERO
            st.out.append((t + latency, op))
            arb = self.arb
            n = arb.pending + 1
            arb.pending = n
            arb.only = st if n == 1 else None
            st.busy_end = NEVER
        else:
            stations[sid].busy_from = t + 1
            self._start(op, t)
        return op

    def pending(self, addr: int | None, c: Op | None) -> dict[int, Op] | None:
        """Designed: the in-flight producers of the lanes of register ``addr`` (``c``, this
        cycle's commit, excluded: it is forwarded)."""
        if addr is None:
            return None
        lp = self.lane_prod
        base = addr * 3
        if lp[base] is None and lp[base + 1] is None and lp[base + 2] is None:
            return None
        out = None
        for lane in range(3):
            o = lp[base + lane]
            if o is not None and o is not c:
                if out is None:
                    out = {}
                out[lane] = o
        return out

    def _forward(self, raw: Lanes, addr: int | None, c: Op) -> Lanes:
        if addr is None:
            return raw
        lp = self.lane_prod
        base = addr * 3
        if lp[base] is not c and lp[base + 1] is not c and lp[base + 2] is not c:
            return raw
        return tuple(c.result[i] if lp[base + i] is c else raw[i]  # type: ignore[return-value]
                     for i in range(3))

    def _start(self, op: Op, s: int) -> None:
        """The execution unit of ``op``'s station starts in cycle ``s``."""
        w = op.word
        opc = w >> 48 & 7
        st = self.stations[op.rs]
        st.executed += 1
        op.start = s
        tm = self.quirks.timing
        if opc == OP_IO:
            src1 = op.src1 or ZERO
            if op.io == 1:  # TMREAD: SRC1 holds three TMEM addresses
                op.result = self._tmread(src1)
                wait = 0
                if self.quirks.tmem_tokens:  # (with tmem_row0 the RTL reads words 0, 1, 2)
                    wait = self._tmem_wait(s, (0, 1, 2) if self.quirks.tmem_row0 else src1)
                self.arb.post(st, s + tm.tmread_commit + wait, op)
                st.busy_end = s + tm.tmread_busy + wait
                if self.trace:
                    self.busy_log.append((op.rs, st.busy_from, st.busy_end))
            else:  # OMWRITE: SRC1 holds three OMEM addresses, SRC0 the data
                src0 = op.src0 or ZERO
                n = len(self.omem)
                for lane, bit in ((0, 4), (1, 2), (2, 1)):
                    if op.we & bit:
                        a = src1[lane] % n
                        self.omem[a] = src0[lane]
                        self.omem_written[a] = True
                st.busy_end = s + tm.omwrite_busy
                if self.trace:
                    self.busy_log.append((op.rs, st.busy_from, st.busy_end))
            return
        op.result = execute(w, op.src1 or ZERO, op.src0 or ZERO) or ZERO
        self.arb.post(st, s + (tm.div if opc == OP_DIV else 1), op)
        st.busy_end = NEVER

    def _tmem_wait(self, s: int, addr: Lanes) -> int:
        """Cycles a TMREAD started in cycle ``s`` waits beyond the fastest case
        (``Timing.tmread_busy``) for the TMEM banks' arbiters, which are shared by the VPs.

        The RTL's TMEM interface reads the three words one after the other, word k from
        bank ``addr[k] % 4``; a bank's round-robin arbiter passes its token to the next VP
        every cycle its holder does not request it, and grants the holder (seen by the
        interface one cycle later); a grant moves the interface to the next word. After the
        third word the interface, still enabled for a cycle, requests bank 0. The tokens'
        positions stay in :attr:`tmem_phase` from one TMREAD to the next. (The other VPs'
        requests are not modelled: each VP has the banks to itself.)"""
        me = self.vp & 3
        a = self.clock0 + s  # the test bench's cycle in which the request goes up
        ph = self.tmem_phase
        pos = [(a + ph[b]) & 3 for b in range(4)]
        banks = (addr[0] & 3, addr[1] & 3, addr[2] & 3, 0)
        granted = [False] * 4  # the registered grants (what the interface sees)
        word = 0
        while True:
            a += 1
            b = banks[word]
            gnt = granted[b]
            granted = [False] * 4
            if pos[b] == me:
                granted[b] = True  # the holder requests: the token stays
            else:
                pos[b] = (pos[b] + 1) & 3
            for o in range(4):
                if o != b:
                    pos[o] = (pos[o] + 1) & 3
            if word == 3:  # the interface's done flag rises in this cycle
                break
            if gnt:
                word += 1
        for o in range(4):
            ph[o] = (pos[o] - a) & 3
        return a - (self.clock0 + s) - self.quirks.timing.tmread_busy

    def _tmread(self, addr: Lanes) -> Lanes:
        tm = self.tmem
        n = len(tm)
        if self.quirks.tmem_row0:
            return tuple(int(tm[i]) if i < n else 0 for i in range(3))  # type: ignore[return-value]
        return tuple(int(tm[a]) if a < n else 0 for a in addr)  # type: ignore[return-value]

    def _commit(self, op: Op, t: int) -> None:
        """Write ``op``'s result (cycle ``t``) and forward it to the stations waiting."""
        self.commits += 1
        we = op.we
        rtl_sb = self._rtl_sb
        if we:
            d = op.dst
            if not rtl_sb:  # a younger writer's lanes stay
                base = d * 3
                own = self.lane_owner
                seq = op.seq
                we = ((4 if own[base] == seq else 0) | (2 if own[base + 1] == seq else 0)
                      | (1 if own[base + 2] == seq else 0)) & we
            rf = self.rf
            rf[d] = op.result if we == 7 else _merge(rf[d], op.result, we)
            self.known[d] = self.known[d] & ~we | op.known & we
            we = op.we
        if self.trace:
            self.events.append(ev.Commit(t, op.thread, op.rs, op.word, op.dst, we, op.result,
                                         op.known))
        i0, i1 = self.iius
        if i0.branch_op is op:
            i0.commit_seen(op)
        if i1.branch_op is op:
            i1.commit_seen(op)
        if not rtl_sb:
            lp = self.lane_prod
            base = op.dst * 3
            if lp[base] is op:
                lp[base] = None
            if lp[base + 1] is op:
                lp[base + 1] = None
            if lp[base + 2] is op:
                lp[base + 2] = None
            if self.n_waiting:
                self._wake_designed(op, t)
            return
        if not self.n_waiting:
            return
        q = self.quirks
        k = 0
        for st in self.stations:
            wo = st.waiting
            if wo is None or wo.issue >= t:
                continue
            n = 0
            if wo.dep1 == op.rs:
                wo.src1 = forwarded_src1(wo.word, op.result)
                wo.dep1 = 0
                n += 1
                if op.known != 7:
                    wo.known &= result_known(wo.word, known_after(wo.word, 1, op.known), 7)
            if wo.dep0 == op.rs:
                wo.src0 = forwarded_src0(wo.word, op.result)
                wo.dep0 = 0
                n += 1
                if op.known != 7:
                    wo.known &= result_known(wo.word, 7, known_after(wo.word, 0, op.known))
            if not n:
                continue
            self.smu.release(n)
            if not wo.dep1 and not wo.dep0:
                st.waiting = None
                self.n_waiting -= 1
                delay = q.forward_delay
                if not q.rtl_scoreboard:
                    delay += k  # the SMU presents one modified operand per cycle
                    k += n
                self._start(wo, t + delay)

    def _wake_designed(self, op: Op, t: int) -> None:
        """Designed: the result fills the lanes waiting for it; the SMU presents each
        completed operand, one per cycle, and a station with all operands starts."""
        k = 0
        res = op.result
        for st in self.stations:
            wo = st.waiting
            if wo is None:
                continue
            n = 0
            p = wo.pend1
            if p is not None and wo.raw1 is not None:
                for lane in [ln for ln, o in p.items() if o is op]:
                    wo.raw1[lane] = res[lane]
                    del p[lane]
                if not p:
                    wo.src1 = forwarded_src1(wo.word, tuple(wo.raw1))  # type: ignore[arg-type]
                    wo.pend1 = None
                    wo.dep1 = 0
                    n += 1
            p = wo.pend0
            if p is not None and wo.raw0 is not None:
                for lane in [ln for ln, o in p.items() if o is op]:
                    wo.raw0[lane] = res[lane]
                    del p[lane]
                if not p:
                    wo.src0 = forwarded_src0(wo.word, tuple(wo.raw0))  # type: ignore[arg-type]
                    wo.pend0 = None
                    wo.dep0 = 0
                    n += 1
            if not n:
                continue
            self.smu.release(n)
            if wo.pend1 is None and wo.pend0 is None:
                st.waiting = None
                self.n_waiting -= 1
                self._start(wo, t + self.quirks.timing.forward_designed + k)
                k += n

    # ---------------------------------------------------------------------------------------
    # The loop
    # ---------------------------------------------------------------------------------------

    def _quiet_until(self, t: int) -> int:
        """The first cycle >= t in which something can happen (t itself if unsure)."""
        self._stalled = False
        iiu = self.iius[0]
        if iiu.fifo or iiu.bubble or self.rf[2][2] & 1:
            return t
        nr = self.arb.next_ready()
        nxt = NEVER if nr is None else nr
        if nxt <= t:
            return t
        st = iiu.state
        if iiu.ended:
            return nxt
        if st == FETCH:
            w = self.imem[iiu.prev_pc]
            if self.quirks.stop_at_eof and w >> 58 & 1:
                return t
            sid, busy = iiu.station_for(w, t)
            if not busy:
                return t
            free = self._free_at(w)
            target = min(nxt, free, iiu.resume_at)
            self._stalled = target > t  # (the loop counts the cycles it skips)
            return target
        if st == UPDATE_PC:
            bop = iiu.branch_op
            if self.quirks.branch_next_cycle:
                if bop is not None and bop.waits and self.quirks.branch_dep_reissue:
                    return min(nxt, iiu.resume_at)
                return t
            if iiu.branch_target is None:
                return nxt
        return t

    def _free_at(self, w: int) -> int:
        opc = w >> 48 & 7
        st = self.stations
        if opc == OP_ADD:
            return min(st[RS_ADD0].busy_end, st[RS_ADD1].busy_end) + 1
        sid = FIXED_STATION[opc]
        return st[sid].busy_end + 1 if sid else 0

    def run(self, max_cycles: int = DEFAULT_MAX_CYCLES,
            until: int | None = None) -> VPCycleModel:
        """Run until the program ends (EOF and, as designed, everything committed).

        ``max_cycles`` guards against runaway programs (an error when reached); ``until``
        pauses the run quietly before that cycle (``run`` again to continue). With ``fast``
        (the RTL's scoreboard only) the iterations of loops are replayed (:mod:`.replay`):
        same records, state and cycle count, fewer cycles stepped.
        """
        if self.fast and not self.done:
            replay.run(self, max_cycles, until, self.step_cycles)
            return self
        return self.step_cycles(max_cycles, until)

    def step_cycles(self, max_cycles: int = DEFAULT_MAX_CYCLES,
                    until: int | None = None) -> VPCycleModel:
        """The cycle loop itself (``run`` without loop replay).

        Each cycle: the arbiter grants the commit bus; the issue unit (both, with SMT) takes
        one step of its state machine, written here once (see :mod:`.states`); the granted
        result commits. When the unit waits and nothing is due, the idle cycles are skipped.
        """
        if self.done:
            return self
        t = self.cycle
        arb = self.arb
        stations = self.stations
        st_add0 = stations[RS_ADD0]
        st_add1 = stations[RS_ADD1]
        rf = self.rf
        known = self.known
        imem = self.imem
        trace = self.trace
        busy_log = self.busy_log
        commit = self._commit
        issue = self.issue
        q = self.quirks
        rtl_sb = self._rtl_sb
        fast_commit = rtl_sb
        fast_designed = not rtl_sb
        events = self.events
        Commit = ev.Commit
        bdr = q.branch_dep_reissue
        bnc = q.branch_next_cycle
        refetch = q.refetch_after_fifo
        stop_at_eof = q.stop_at_eof
        smu_check = not q.no_smu_stall
        smu = self.smu
        own = self.lane_owner
        lp = self.lane_prod
        i0, i1 = self.iius
        checked = i0.checked
        limit = t + max_cycles
        stop = NEVER if until is None else until
        bound = min(stop, limit)
        steps = self.steps
        mt_on = self.mt_on
        ended = i0.ended
        iiu = i0  # the unit stepping (thread 1's after thread 0's in an SMT cycle)
        resume = i0.resume_at  # RTL: the cycle thread 0 fetches a waiting branch again
        smt = rf[2][2] & 1  # R2.z bit 0 (changes only when a result commits)
        if mt_on and not smt:
            self._smt_off()
            mt_on = False
        watch = trace or smt  # a commit may be traced under a branch, or filtered (SMT)
        probes = self.flag_probes
        while True:
            if t >= bound:
                if t >= stop:
                    break
                self.cycle = t
                self.steps = steps
                raise self.limit_error(max_cycles)
            # -- the commit bus ------------------------------------------------------------
            c = None
            if arb.pending:
                s = arb.only
                if s is not None:  # a single result pending (Arbiter.grant, inlined)
                    out = s.out
                    if out[0][0] <= t:
                        arb.last = s.id
                        arb.grants += 1
                        arb.pending = 0
                        arb.only = None
                        c = out.popleft()[1]
                else:
                    c = arb.grant(t)
                if c is not None and c.rs != RS_IO:
                    st = stations[c.rs]
                    st.busy_end = t if (c.waits or c.word >> 48 & 7 == OP_DIV) else t - 1
                    if trace and st.busy_end >= st.busy_from:
                        busy_log.append((c.rs, st.busy_from, st.busy_end))
            steps += 1
            # -- the issue units -----------------------------------------------------------
            if smt:
                if not mt_on:  # the second unit leaves reset at its code offset
                    self.mt_on = mt_on = True
                    i1.reset((rf[2][2] >> 1) & 0xFFFF)
                # the thread owning the issue bus alternates every 2 cycles (the RTL's shift
                # register ``pre`` and its delayed copy ``pre2``); ``one_more``: the first
                # of the thread's two cycles
                active = self.pre2
                en = self.prev_enabled
                i0.enabled = active == 0
                i0.one_more = not en[0]
                i1.enabled = active == 1
                i1.one_more = not en[1]
            look = False  # the unit waits or ended, or the run finished: look around
            while True:  # the issue units of this cycle: thread 0, then (SMT) thread 1
                # ---- one cycle of the issue unit's state machine (its one definition) ----
                w = imem[iiu.prev_pc]
                st = iiu.state
                fifo = iiu.fifo
                if t == resume:  # (thread 0's unit: only it waits for a re-fetch)
                    resume = NEVER
                    if st != RESET:  # RTL: the branch with a dependency is fetched again
                        iiu.resume_at = NEVER
                        fifo.clear()
                        st = FETCH
                if w & EOF_BIT and iiu.eof_stops:
                    # RTL: the first EOF ends the run (thread 0's unit: never in RESET then)
                    self.finish(t)
                    look = True
                    break
                cu = c  # the commit this unit sees
                if watch and c is not None and st != RESET:
                    if trace and w >> 57 & 1 and c.rs == iiu.station_for(w, t)[0]:
                        if probes is not None:
                            probes.add(t)
                        zero, sign = flags(c.result)
                        if branch_taken(w >> 54 & 7, zero, sign):
                            self.branch_taken(t, iiu.thread)
                    if smt and (c.dst >> 7) != iiu.thread:
                        cu = None  # SMT: each thread listens to the commits of its RF half
                if st in ISSUES:
                    inc = False
                    if iiu.enabled and not w & EOF_BIT:
                        op = issue(iiu, w, t, iiu.latched if st == ISSUE_FWD else None, cu)
                        if w >> 57 & 1:
                            nxt = UPDATE_PC
                            iiu.branch_op = op
                            iiu.branch_target = None
                            inc = not (bdr and op is not None and op.waits)
                        else:
                            nxt = FETCH
                    elif not iiu.enabled:
                        nxt = FIFO_UPDATE if fifo else st
                    elif stop_at_eof:  # EOF: the RTL just never issues it
                        nxt = st
                    else:  # EOF: the thread ends
                        iiu.ended = True
                        self.idle_hint = look = True
                        nxt = RESET
                    # end of the cycle: the FIFO, the PC (the instruction memory's address)
                    if st == ISSUE_FWD and fifo:
                        fifo.popleft()
                    if cu is not None:
                        if len(fifo) < FIFO_DEPTH:
                            fifo.append(cu)
                        else:
                            self.fifo_overflows += 1
                    iiu.latched = cu
                    pc = iiu.pc
                    iiu.prev_pc = pc
                    if inc:
                        iiu.pc = (pc + 1) & PC_MASK
                    iiu.state = nxt
                elif st == FETCH and not iiu.bubble:
                    if iiu.enabled:  # the station, a structural hazard? (station_for, inlined)
                        opc = w >> 48 & 7
                        busy = False
                        if opc == OP_ADD:
                            sid = RS_ADD0
                            if st_add0.busy_from <= t <= st_add0.busy_end:
                                sid = RS_ADD1
                                if st_add1.busy_from <= t <= st_add1.busy_end:
                                    sid = 0
                                    busy = True
                        else:
                            sid = FIXED_STATION[opc]
                            if sid:
                                s = stations[sid]
                                if s.busy_from <= t <= s.busy_end:
                                    sid = 0
                                    busy = checked[opc]
                        if not busy and sid and smu_check and smu.used > 2:
                            d1, d0 = iiu.deps(w, None)
                            n = (d1 > 0) + (d0 > 0)
                            if n and not smu.has_room(n):
                                busy = True
                                smu.stalls += 1
                    else:
                        busy = True
                    if cu is not None:
                        if rtl_sb:
                            iiu.sb[cu.dst] = 0
                        inc = not busy and not w >> 57 & 1
                        if not busy and (not smt or iiu.one_more):
                            nxt = ISSUE_FWD
                        elif fifo:
                            nxt = FIFO_UPDATE
                        else:  # busy, or the second cycle of an SMT slot
                            # (the commit is queued below, so nothing is skipped)
                            nxt = FETCH
                            iiu.stall_cycles += 1
                            if smt:
                                self.idle_hint = look = True
                        if len(fifo) < FIFO_DEPTH:
                            fifo.append(cu)
                        else:
                            self.fifo_overflows += 1
                    else:
                        inc = not busy and not w >> 57 & 1 and not fifo
                        if fifo:
                            nxt = FIFO_UPDATE
                        elif busy or (smt and not iiu.one_more):
                            nxt = FETCH
                            iiu.stall_cycles += 1
                            self.idle_hint = look = True
                        else:
                            nxt = ISSUE
                    if not refetch and nxt != ISSUE and nxt != ISSUE_FWD:
                        inc = False  # RTL: a FETCH late in an SMT slot advances the PC
                    # end of the cycle (the commit was queued above)
                    iiu.latched = cu
                    pc = iiu.pc
                    iiu.prev_pc = pc
                    if inc and not w & EOF_BIT:
                        iiu.pc = (pc + 1) & PC_MASK
                    iiu.state = nxt
                elif st == FETCH:  # designed: the bubble after a branch; the word at the new
                    iiu.bubble = False  # PC arrives next cycle
                    if fifo:
                        fifo.popleft()
                    if cu is not None:
                        if len(fifo) < FIFO_DEPTH:
                            fifo.append(cu)
                        else:
                            self.fifo_overflows += 1
                    iiu.latched = cu
                    iiu.prev_pc = iiu.pc
                elif st == UPDATE_PC and not bnc:  # designed: wait for the branch's result
                    nxt = UPDATE_PC
                    target = iiu.branch_target
                    if target is not None:  # its own result came: load the target
                        iiu.branch_op = None
                        iiu.branch_target = None
                        nxt = FETCH
                        iiu.bubble = True
                    elif fifo:
                        nxt = FIFO_UPDATE
                    elif cu is None or smt:  # (a commit is queued below: no skipping)
                        self.idle_hint = look = True
                    if cu is not None:
                        if len(fifo) < FIFO_DEPTH:
                            fifo.append(cu)
                        else:
                            self.fifo_overflows += 1
                    iiu.latched = cu
                    iiu.prev_pc = iiu.pc
                    if target is not None and target >= 0:
                        iiu.pc = target
                    iiu.state = nxt
                elif st == RESET:  # out of reset: one cycle, then FETCH
                    iiu.state = FETCH
                    iiu.prev_pc = iiu.pc
                elif st == FIFO_UPDATE:  # a queued commit is taken
                    inc = False
                    if fifo:
                        if rtl_sb:
                            iiu.sb[fifo[0].dst] = 0
                        fifo.popleft()
                    if iiu.branch_op is not None and not bnc:
                        nxt = UPDATE_PC
                    elif (iiu.enabled and not w >> 57 & 1 and (not smt or iiu.one_more)
                            and not iiu.station_for(w, t)[1]):
                        nxt = ISSUE
                        inc = smt or not refetch
                    else:
                        nxt = FETCH
                    if cu is not None:
                        if len(fifo) < FIFO_DEPTH:
                            fifo.append(cu)
                        else:
                            self.fifo_overflows += 1
                    iiu.latched = cu
                    pc = iiu.pc
                    iiu.prev_pc = pc
                    if inc and not w & EOF_BIT:
                        iiu.pc = (pc + 1) & PC_MASK
                    iiu.state = nxt
                else:  # the RTL's UPDATE_PC
                    setpc = -1  # load the PC
                    nxt = st
                    # RTL: the FIFO is popped (the entry is lost); the PC is loaded whenever
                    # the commit bus shows a result of the station this instruction would use
                    # that meets its branch condition (any thread's result, any cycle here)
                    bop = iiu.branch_op
                    if (c is not None and w >> 57 & 1
                            and c.rs == iiu.station_for(w, t)[0]):
                        if probes is not None:
                            probes.add(t)
                        zero, sign = flags(c.result)
                        if branch_taken(w >> 54 & 7, zero, sign):
                            setpc = iiu.target(w)
                    if not smt and bop is not None and bop.waits and bdr:
                        # measured, not derived: the branch is fetched again a fixed time
                        # after its producer commits (test_branches_1)
                        if cu is not None and (cu.rs == bop.dep1 or cu.rs == bop.dep0):
                            # the PC still holds the branch's address (not advanced)
                            iiu.resume_at = resume = t + q.timing.branch_dep_reissue - 1
                            sb = iiu.sb
                            for i in range(256):
                                if sb[i] == cu.rs:
                                    sb[i] = 0
                        setpc = -1
                        self.idle_hint = look = True
                    else:
                        d1, d0 = iiu.deps(w, None) if w >> 57 & 1 else (0, 0)
                        if not (d1 or d0):
                            iiu.branch_op = None
                            nxt = FETCH
                        elif fifo:
                            nxt = FIFO_UPDATE
                    # end of the cycle: the FIFO, the PC (the instruction memory's address)
                    if fifo:
                        fifo.popleft()
                    if cu is not None:
                        if len(fifo) < FIFO_DEPTH:
                            fifo.append(cu)
                        else:
                            self.fifo_overflows += 1
                    iiu.latched = cu
                    iiu.prev_pc = iiu.pc
                    if setpc >= 0:
                        iiu.pc = setpc
                    iiu.state = nxt
                if smt:
                    if iiu is i0:
                        iiu = i1
                        continue
                    self.prev_enabled = [active == 0, active == 1]
                    self.pre2 = self.pre
                    if t & 1 == self.mt_phase:
                        self.pre ^= 1
                    look = True
                    iiu = i0
                break
            if look and self.done:
                break
            # -- the commit ----------------------------------------------------------------
            if c is not None:
                if fast_commit and not self.n_waiting:
                    # _commit, inlined for the RTL scoreboard with nothing waiting: write
                    # the RF, tell a branch waiting for it
                    self.commits += 1
                    we = c.we
                    if we:
                        d = c.dst
                        rf[d] = c.result if we == 7 else _merge(rf[d], c.result, we)
                        known[d] = known[d] & ~we | c.known & we
                    if trace:
                        events.append(Commit(t, c.thread, c.rs, c.word, c.dst, we, c.result,
                                             c.known))
                    if i0.branch_op is c:
                        i0.commit_seen(c)
                    if i1.branch_op is c:
                        i1.commit_seen(c)
                elif fast_designed and not self.n_waiting:
                    # _commit, inlined for the designed machine with nothing waiting: a
                    # younger writer's lanes stay, the lanes' producer is gone
                    self.commits += 1
                    we = c.we
                    d = c.dst
                    base = d * 3
                    if we:
                        seq = c.seq
                        we = ((4 if own[base] == seq else 0) | (2 if own[base + 1] == seq else 0)
                              | (1 if own[base + 2] == seq else 0)) & we
                        rf[d] = c.result if we == 7 else _merge(rf[d], c.result, we)
                        known[d] = known[d] & ~we | c.known & we
                    if trace:
                        events.append(Commit(t, c.thread, c.rs, c.word, d, c.we, c.result,
                                             c.known))
                    if i0.branch_op is c:
                        i0.commit_seen(c)
                    if i1.branch_op is c:
                        i1.commit_seen(c)
                    if lp[base] is c:
                        lp[base] = None
                    if lp[base + 1] is c:
                        lp[base + 1] = None
                    if lp[base + 2] is c:
                        lp[base + 2] = None
                else:
                    commit(c, t)
                smt = rf[2][2] & 1
                watch = trace or smt
                if mt_on and not smt:  # multithreading switched off
                    self._smt_off()
                    mt_on = False
            t += 1
            # -- the end, and idle cycles ----------------------------------------------------
            if look:
                ended = i0.ended  # (set only in a cycle that looks)
            if look or ended:  # an ended unit may step on without a hint (EOF refetched)
                if i0.ended and self._all_ended() and not self._in_flight():
                    self.finish(t)
                    break
                if self.idle_hint:  # the unit is waiting: maybe nothing happens for a while
                    self.idle_hint = False
                    nt = self._quiet_until(t)
                    if nt >= NEVER:
                        self.deadlock = True
                        self.finish(t)
                        break
                    if nt > t:
                        nt = min(nt, stop)
                        if self._stalled:  # (a paused run counts the same stalls)
                            self._stalled = False
                            i0.stall_cycles += nt - t
                        t = nt
        self.steps = steps
        self.cycle = t
        return self

    def limit_error(self, max_cycles: int) -> EmulationError:
        """The error of a run that reached its cycle limit."""
        return EmulationError(f"cycle limit reached ({max_cycles} cycles) at PC "
                              f"{self.iius[0].pc}; use a larger limit or check for a livelock")

    def _smt_off(self) -> None:
        """Multithreading off: thread 0 owns the issue bus, the second unit is held in
        reset at its code offset."""
        self.mt_on = False
        i0 = self.iius[0]
        i0.enabled = i0.one_more = True
        self.prev_enabled = [True, False]
        self.pre = self.pre2 = 0
        self.iius[1].reset((self.rf[2][2] >> 1) & 0xFFFF)

    def _all_ended(self) -> bool:
        i0, i1 = self.iius
        return i0.ended and (i1.ended or not self.rf[2][2] & 1)

    def _in_flight(self) -> bool:
        return any(s.out or s.waiting is not None for s in self.stations)


def run_cycles(code: Sequence[int], *, quirks: Quirks = DESIGNED,
               tmem: Sequence[int] | np.ndarray | None = None,
               max_cycles: int = DEFAULT_MAX_CYCLES, until: int | None = None,
               trace: bool = True, vp: int = 2, clock0: int = 1,
               fast: bool = False) -> VPCycleModel:
    """Run a VP program (64-bit words) on the cycle model; returns the finished model.

    ``model.events`` is the issue/commit trace (see :mod:`.events`), ``model.finished_at``
    the last cycle, ``model.rf`` / ``model.omem`` the final state. ``quirks=Quirks.rtl()``
    reproduces the beta_2.0 RTL (its vp.N.log) instead of the designed machine. ``clock0``:
    the test bench's cycle number at the model's cycle 0 (``Boot.enable_cycle``; only its
    parity matters, for the SMT slots). ``fast``: replay loop iterations (:mod:`.replay`).
    """
    model = VPCycleModel(code, quirks=quirks, tmem=tmem, trace=trace, vp=vp, clock0=clock0,
                         fast=fast)
    return model.run(max_cycles, until)
