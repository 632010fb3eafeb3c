"""Traced runs of type-4 packets from templates: the trace's lines of a whole packet made by
one ``str.format``.

A firmware's plain type-4 handler (the block :func:`.codegen._type4_batch` accepts:
``waitin`` with ``mov $01, $data`` in its delay slot, an ALU instruction setting ``$addr`` or
``$usraddr`` from ``$01``, and ``(rep)(xmovN)mov $data, $data``) does, for a packet of plain
registers, the same thing whatever the payload: its trace lines (instruction lines, GPR
dumps) depend on the header alone, and each GPU-register dump line on one payload word. So
the first packet of each header runs exactly (one instruction at a time, traced), its lines
are turned into a template (the GPU dump lines of its registers with a field for the value;
checked to give back the same lines), and later packets of that header are done at once:
registers written, effects logged, counts and the trace as the exact path leaves them.

Used by traced runs whose tracer takes joined lines (``TraceState.joined``); anything out of
the ordinary (hooks, breakpoints, IBs, a step limit near, a header not seen yet or whose
registers are not plain) is left to the exact path.
"""

from __future__ import annotations

from array import array
from itertools import islice
from typing import TYPE_CHECKING

from ...core.errors import EmulationError
from ..isa import REG_REM
from .stream import HEADERS

if TYPE_CHECKING:
    from .processor import Processor


class Type4Replay:
    """The templates of one processor's plain type-4 handler (see the module docstring)."""

    def __init__(self, proc: Processor) -> None:
        self.key = self.key_of(proc)
        self.slot = -1  # the pc of the handler's waitin delay slot (-1: no plain handler)
        self.memo: dict[int, tuple | None] = {}  # header -> what a packet does (None: exact)
        from .codegen import _type4_batch, proc_plain

        if not proc_plain(proc):
            return
        try:
            start = proc.jmptbl[proc.emu.pkt4_id]
            insns = [proc.decode(start + k)[:2] for k in range(3)]
        except (EmulationError, IndexError, AttributeError):
            return
        if _type4_batch(proc, start, insns) is None:
            return
        self.dst = insns[0][1]["DST"]
        self.slot = start + 3
        self.start = start
        lpac = proc.lpac_cntl
        self.lpac = lpac if lpac is not None else -1

    @staticmethod
    def key_of(proc: Processor) -> tuple:
        """What the templates depend on besides the firmware image."""
        try:
            return proc.jmptbl[proc.emu.pkt4_id], proc.lpac_cntl, proc.meq is None
        except (IndexError, AttributeError):
            return None, proc.lpac_cntl, proc.meq is None

    def run(self, p: Processor, limit: int, skip_packet_hooks: bool = False,
            most: int = -1) -> bool:
        """Run packets from the ring buffer while they can be (``p`` stands at the delay
        slot with the header not read) and ``steps`` stays below ``limit``; True if any
        ran. ``skip_packet_hooks``: the caller's own packet hook need not see these packets
        (the debugger's, when no breakpoint is set); other hooks keep them exact. ``most``:
        at most so many packets (each ends with the handler's waitin run)."""
        tw = p.tw
        if (tw is None or not tw.joined or p.ib_level or p.bt is not None
                or not p.fast_regs or (p.emu.packet_hooks and not skip_packet_hooks)
                or p.insn_hooks):
            return False
        # the debugger showed the delay slot's line at its prompt: not printed again
        drop = tw.skip is not None
        if drop and tw.skip != (p.name, p.pc):
            return False
        rb = p.rb
        memo = self.memo
        ran = False
        while rb and most:
            most -= 1
            hdr = rb[0]
            got = memo.get(hdr)
            if got is None:
                if hdr in memo or not self._record(p, limit, drop):
                    return ran
                ran, drop = True, False
                if p.pc != self.slot or not p.waitin_pending:
                    return ran
                continue
            n, its, fmt = got[0], got[2], got[7]
            if len(rb) <= n or p.steps + 3 + its + 2 > limit:
                return ran
            vs = self.take(p, got)
            if drop:
                tw.skip = None
                tw.out(fmt(*vs).split("\n", 1)[1])
                drop = False
            else:
                tw.out(fmt(*vs))
            ran = True
            if tw.sink is not None and len(tw.buf) >= 256:
                tw.flush()
        return ran

    def take(self, p: Processor, tmpl: tuple) -> array:
        """Do what the packet at the head of ``p``'s ring buffer does, as its header's
        template ``tmpl`` (from :attr:`memo`) says, all but printing: its dwords taken from
        the ring buffer and written to the GPU registers (an effect), the registers, data
        mode and counts the handler leaves. Returns the dwords (the template's text's
        fields)."""
        n, o, its, g1, dreps, nreads, mode, _ = tmpl
        rb = p.rb
        hdr = rb[0]
        vs = array("I", islice(rb, 1, n + 1))
        for _ in range(n + 1):
            rb.popleft()
        p.gpu[o:o + n] = vs
        p.fast_append((o, vs, p.name))
        g = p.gpr
        g[1] = g1
        g[self.dst] = o + n
        g[REG_REM] = 0
        p.data_mode = mode
        p.nreads = nreads
        p.steps += 3 + its
        p.reps += dreps
        p.packets += 1
        p.header = hdr
        return vs

    def _record(self, p: Processor, limit: int, drop: bool) -> bool:
        """Run the packet at the head of the ring buffer exactly, and make its template when
        it is an ordinary one; False if it cannot be run here (the exact path will)."""
        rb = p.rb
        hdr = rb[0]
        got = HEADERS.get(hdr)
        if got is None:  # (not parsed yet: the exact path's dispatch checks it first)
            return False
        if not got[0] or not got[2]:
            self.memo[hdr] = None
            return False
        n = got[2]
        if len(rb) <= n or p.steps + 3 + n + 2 > limit:
            return False
        vals = list(islice(rb, 1, n + 1))
        tw = p.tw
        lines: list[str] = []
        out, tw.out = tw.out, lines.append
        g = p.gpr
        before = list(g)
        steps, reps = p.steps, p.reps
        if drop:  # (the debugger's prompt showed the first line: made, then left out)
            tw.skip = None
        try:
            for _ in range(4):
                p.step()
        finally:
            tw.out = out
        for line in lines[1:] if drop else lines:
            out(line)
        self.memo[hdr] = self._template(p, hdr, n, vals, lines, before, p.steps - steps,
                                        p.reps - reps)
        return True

    def _template(self, p: Processor, hdr: int, n: int, vals: list[int], lines: list[str],
                  before: list[int], steps: int, dreps: int) -> tuple | None:
        g = p.gpr
        if p.pc != self.slot or not p.waitin_pending or p.bt is not None or p.ib_level:
            return None
        o = g[self.dst] - n
        if o < 0 or o + n > 0x10000 or o <= self.lpac < o + n or g[REG_REM]:
            return None
        if any(a != b for k, (a, b) in enumerate(zip(before, g, strict=True))
               if k not in (1, REG_REM, self.dst)):
            return None
        pre = p.tw._pre["gpu"]
        heads: dict[str, int] = {}
        for k in range(n):
            head = pre.get(o + k)
            if head is None or head in heads:
                return None
            heads[head] = k
        parts = []
        for line in lines:
            piece = line.replace("{", "{{").replace("}", "}}")
            if line.startswith(p.tw.GPU_TAG):
                head = line[:-8]
                k = heads.get(head)
                if k is None:
                    return None
                piece = head.replace("{", "{{").replace("}", "}}") + f"{{{k}:08x}}"
            parts.append(piece)
        fmt = "\n".join(parts).format
        if fmt(*vals) != "\n".join(lines):
            return None
        return (n, o, steps - 3, g[1], dreps, p.nreads, p.data_mode, fmt)


def replay_of(p: Processor) -> Type4Replay:
    """The processor's templates, made again when the jump table has changed."""
    got = p.replay
    if got is None or got.key != got.key_of(p):
        got = p.replay = Type4Replay(p)
    return got
