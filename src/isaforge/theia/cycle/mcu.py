"""The memory controller (MCU) cycle by cycle, as the beta_2.0 RTL builds it, with the
VPs' WishBone slaves it writes to: what a COPYBLOCK puts where, and when.

The MCU queues the CP's requests in a FIFO and serves the one at its head: per 64-bit code
block it reads two words from main memory (a read request, the data one cycle later, a
strobe the VP acknowledges), then writes the instruction and advances its addresses; a data
block takes three words. Its defect: the read and write address counters are loaded from a
request *when the request arrives* (not when it reaches the head of the FIFO). A request
made while another is being served restarts that transfer's addresses at its own offsets
(and its strobe toggle), so back-to-back copies land shifted, and the queued ones are later
served from wherever the counters are. Sequential copies (each waited for) are unaffected.

:func:`simulate` runs the requests and returns, per VP, the code words written and, per
request, the cycle from which the FIFO is empty again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..machine.memory import CopyRequest, MainMemory

WAIT, XFER_CODE, XFER_DATA, INC = 1, 2, 3, 4


class Mcu:
    """The MCU and the VPs' WishBone slaves, one clock cycle per :meth:`step`.

    ``write_code(vp, address, word)`` is called for each instruction a slave writes."""

    def __init__(self, memory: MainMemory, write_code: Callable[[int, int, int], None],
                 cores: int = 4) -> None:
        self.read = memory.read
        self.write_code = write_code
        self.cores = cores
        self.cycle = 0
        self.state = WAIT
        self.fifo: list[CopyRequest] = []
        self.rd = self.adr = 0
        self.cyc = 1
        self.stbcnt = self.stb = self.p1 = self.p2 = self.mem_avail = self.mem_data = 0
        self.adr_l = [0] * cores
        self.tga_l = [0] * cores
        self.delay = [0] * cores
        self.shl = [1] * cores
        self.vx = [0] * cores
        self.vy = [0] * cores
        self.quiet = 0  # idle cycles in a row (after 2, nothing changes until a request)

    @property
    def empty(self) -> bool:
        """The FIFO-empty bit (the CP's STATUS) in the current cycle."""
        return not self.fifo

    def step(self, req: CopyRequest | None = None) -> None:
        """One cycle, with ``req`` presented by the CP in it (its COPYBLOCK's cycle)."""
        self.cycle += 1
        det = req is not None and req.dst_id != 0
        if not det and not self.fifo and self.state == WAIT:
            if self.quiet >= 2:
                return
            self.quiet += 1
        else:
            self.quiet = 0
        fifo = self.fifo
        cur = fifo[0] if fifo else None
        rd = self.rd
        stb = self.stb
        stbcnt = self.stbcnt
        cyc = self.cyc
        state = self.state
        mem_avail = self.mem_avail
        avail_pulse = mem_avail & (1 - self.p1)
        stb_pulse = stb & (1 - self.p2)
        last = cur is not None and cyc == (cur.blocks & 0x7FF)
        code = cur is not None and cur.code
        pop = inc = cyc_o = mst = memreq = rstcyc = rststb = tag = 0
        if state == WAIT:
            rstcyc = rststb = 1
            nxt = WAIT if cur is None else (XFER_CODE if code else XFER_DATA)
        elif state in (XFER_CODE, XFER_DATA):
            mst = cyc_o = tag = 1
            done = stbcnt == (2 if state == XFER_CODE else 3)
            memreq = 0 if done else 1
            nxt = INC if done else state
        else:  # INC
            pop = int(last)
            inc = 1 - pop
            mst = rststb = 1
            nxt = WAIT if last else (XFER_CODE if code else XFER_DATA)
        sel = None if cur is None else cur.dst_id & 3
        ack_i = 0
        mem_data = self.mem_data
        for v in range(self.cores):
            we_i = int(sel == v)
            ack_o = self.delay[v] & stb
            ack_i |= ack_o
            if mst and not cyc_o and self.tga_l[v] == 1 and we_i:
                self.write_code(v, self.adr_l[v], self.vx[v] << 32 | self.vy[v])
            shl = self.shl[v]
            if shl & 1 and stb:
                self.vx[v] = mem_data
            if shl & 2 and stb:
                self.vy[v] = mem_data
            self.shl[v] = 1 if not cyc_o else ((shl << 1) & 7 if stb and not ack_o else shl)
            self.delay[v] = stb & we_i
            self.adr_l[v] = self.adr & 0xFFFF
            self.tga_l[v] = tag
        if pop and fifo:
            fifo.pop(0)
        if det:
            assert req is not None
            fifo.append(req)
            self.rd, self.adr = req.src_offset, req.dst_offset  # the defect: on arrival
        else:
            self.rd = (self.rd + ack_i) & 0xFFFFFFFF
            self.adr = (self.adr + inc) & 0xFFFFFFFF
        self.cyc = 1 if rstcyc else ((cyc + 1) & 0x7FF if inc else cyc)
        self.stbcnt = 0 if rststb else ((stbcnt + 1) & 7 if stb_pulse else stbcnt)
        self.stb = 0 if det else (stb ^ 1 if (avail_pulse or ack_i) else stb)
        self.p1, self.p2 = mem_avail, stb
        self.mem_data = self.read(rd)
        self.mem_avail = memreq & (1 - mem_avail)
        self.state = nxt


@dataclass
class McuResult:
    """What the MCU wrote (VP -> {address: 64-bit word}) and when its FIFO emptied."""

    code: dict[int, dict[int, int]] = field(default_factory=dict)
    empty_from: list[int] = field(default_factory=list)  # each time the FIFO drained
    last_cycle: int = 0


def simulate(requests: Sequence[tuple[int, CopyRequest]], memory: MainMemory, *,
             cores: int = 4, max_cycles: int = 10_000_000) -> McuResult:
    """Run the MCU on ``requests`` ((cycle the CP issues it, request)) until its FIFO is
    empty after the last one. Cycles are the CP's (``boot``'s) numbering."""
    out = McuResult()

    def write(vp: int, address: int, word: int) -> None:
        out.code.setdefault(vp, {})[address] = word

    mcu = Mcu(memory, write, cores)
    pending = sorted(requests, key=lambda r: r[0])
    i = 0
    was_empty = True
    for k in range(max_cycles):
        if mcu.empty and not was_empty:
            out.empty_from.append(k)
        was_empty = mcu.empty
        if i >= len(pending) and mcu.empty and mcu.state == WAIT:
            out.last_cycle = k
            break
        req = None
        if i < len(pending) and pending[i][0] == k:
            req = pending[i][1]
            i += 1
        mcu.step(req)
    return out


__all__ = ["Mcu", "McuResult", "simulate"]
