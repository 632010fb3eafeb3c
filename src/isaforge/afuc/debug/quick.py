"""The commands a script repeats, done without the general path's parsing and set-up.

Mesa's way of feeding a stream through its emulator's prompt is two commands a packet: the
packet (``p NAME payload...``, or ``raw W0 W1...``), then ``r``. :class:`Quick` recognizes
these lines in their plain forms (numbers ``int(text, 0)`` reads, no comment, no sub-prompt
pending) and does exactly what :meth:`.commands.Debugger.execute` does for them, with the
same output: the packet queued, or the packet run from its header's template
(:mod:`..machine.replay`) and the next instruction shown. Anything else, or any case it is
not sure of (a header not run yet, breakpoints, hooks, several processors, a view to show),
gives None and the general path runs the line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...core.errors import IsaforgeError
from ..machine.processor import M32, Processor
from ..machine.replay import Type4Replay, replay_of
from ..machine.stream import packet_words
from .view import describe_packet

PROMPT = "(afuc) "  # (the debugger's, as commands.PROMPT: no sub-prompt is pending here)

PACKET_COMMANDS = frozenset(("p", "packet", "pkt"))
RUN_COMMANDS = frozenset(("r", "run"))


class Dwords(dict):
    """Number texts -> the dwords ``int(text, 0)`` reads (ValueError for a text that is not
    one: the general path then says what it is), each read once."""

    def __missing__(self, text: str) -> int:
        value = int(text, 0)
        if not 0 <= value <= M32:
            raise ValueError(text)
        self[text] = value
        return value


class Quick:
    """The shortcuts of one debugger, a :class:`.commands.Debugger` (see the module
    docstring; typed Any here, as commands imports this module)."""

    def __init__(self, dbg: Any) -> None:
        self.dbg = dbg
        # (packet name, payload length) -> header (None: the general path says why not)
        self.headers: dict[tuple[str, int], int | None] = {}
        self.described: dict[int, str] = {}  # header -> describe_packet's text
        self.ints = Dwords()  # number texts met -> their dwords
        self.where: dict[int, str] = {}  # dbg.where() at a waitin delay slot, by pc
        self.rests: dict = {}  # a template's str.format -> that of its lines but the first

    def execute(self, line: str) -> str | None:
        """What :meth:`.commands.Debugger.execute` would return for ``line`` (having done
        what it does), or None (nothing done) when it is not one of the plain cases."""
        if self.dbg._pending is not None:
            return None
        if line.strip() in RUN_COMMANDS:
            return self.run()
        got = self.packet(line)
        return None if got is None else self.queue(*got)

    def packet(self, line: str) -> tuple[list[int], str] | None:
        """The dwords of a plain packet line (``raw W...``, ``p NAME payload...``) and what
        the queue message calls it, or None for any other line."""
        text = line.strip()
        # (the general path reads the tokens joined by blanks as a line of a text stream:
        # comments, "#16" and "@ADDR:" are for it to read)
        if ";" in text or "#" in text or "@" in text or "/" in text:
            return None
        toks = text.split()
        if len(toks) < 2:
            return None
        head = toks[0]
        if head == "raw":
            start = 1
        elif head in PACKET_COMMANDS and toks[1] != "raw":
            start = 2
        else:
            return None
        ints = self.ints
        if len(ints) > 1 << 16:
            ints.clear()
        try:
            words = [ints[t] for t in toks[start:]]
        except ValueError:
            return None
        if start == 1:
            return words, "raw"
        key = (toks[1], len(words))
        hdr = self.headers.get(key, -1)
        db = self.dbg.emu.db
        if hdr == -1:
            try:
                hdr = packet_words(toks[1], [0] * len(words), db)[0]
            except IsaforgeError:
                hdr = None
            self.headers[key] = hdr
        if hdr is None:
            return None
        words.insert(0, hdr)
        what = self.described.get(hdr)
        if what is None:
            what = self.described[hdr] = describe_packet(db, hdr)
        return words, what

    def queue(self, words: list[int], what: str) -> str:
        """Queue a packet's dwords on the current processor's ring buffer; the message."""
        dbg = self.dbg
        emu = dbg.emu
        procs = emu.procs
        p = procs[0] if len(procs) == 1 and procs[0].name == dbg.current else emu.proc(
            dbg.current)
        rb = p.rb
        rb.extend(words)
        where = f"{p.name} " if len(procs) > 1 else ""
        return f"queued {what}: {len(words)} dwords ({where}ring buffer: {len(rb)} dwords waiting)"

    def _ready(self) -> tuple[Processor, Type4Replay] | None:
        """The processor and its templates when ``r`` may run a packet from a template (as
        the runner's quick way does, and nothing else would see it: no breakpoint, hook,
        view; one processor, traced), the header not looked at yet."""
        dbg = self.dbg
        emu = dbg.emu
        procs = emu.procs
        if (dbg.breakpoints or dbg.auto_view or len(procs) != 1
                or len(emu.packet_hooks) != 1):  # (the runner's own)
            return None
        p = procs[0]
        tw = p.tw
        if (tw is None or not tw.joined or not p.waitin_pending or p.name != dbg.current
                or dbg._pending is not None):
            return None
        rp = replay_of(p)
        if p.pc != rp.slot:
            return None
        return p, rp

    def _where(self, p: Processor) -> str:
        """dbg.where() after a packet run from a template (at the waitin's delay slot)."""
        where = self.where.get(p.pc)
        if where is None:
            where = self.where[p.pc] = self.dbg.where()
        else:
            p.tw.skip = (p.name, p.pc)  # (as dbg.where() does)
        return where

    def run(self) -> str | None:
        """``r`` when the packet at the head of the ring buffer runs from its template."""
        ready = self._ready()
        if ready is None:
            return None
        p, rp = ready
        rb = p.rb
        if not rb or rp.memo.get(rb[0]) is None:
            return None
        dbg = self.dbg
        p.limit = 1 << 62  # (as the runner leaves it)
        buf = dbg._buf
        buf.clear()
        if not rp.run(p, p.steps + dbg.max_steps, True, 1):  # (emu.steps: p's alone)
            return None  # (nothing ran, nothing printed)
        buf.append(self._where(p))
        out = "\n".join(buf)
        buf.clear()
        return out

    def pairs(self, line: str, readline: Callable[[], str], echo: Any) -> str | None:
        """Mesa's script, a packet line then ``r``, again and again: from ``line`` (echoed
        already) on, while each packet line is plain and the next line ``r``, and the packet
        that ``r`` runs (the one at the head of the ring buffer) has its header's template,
        the pair is done at once, with what the two commands print put into ``echo``'s
        lines, each line echoed after the prompt. Returns the line read after them (not
        echoed, not done; "" at the end of the input), or None when ``line`` is not a plain
        packet line (nothing done)."""
        got = self.packet(line)
        if got is None or self.dbg._pending is not None:
            return None
        dbg = self.dbg
        lines = echo.lines
        put = lines.append
        batch = echo.batch
        # (checked once: while this call lasts only its pairs run, which change none of it)
        ready = self._ready()
        while True:
            if ready is None:
                put(self.queue(*got))
            else:  # (one processor, the current one)
                words, what = got
                rb = ready[0].rb
                rb.extend(words)
                put(f"queued {what}: {len(words)} dwords (ring buffer: {len(rb)} dwords "
                    "waiting)")
            nxt = readline()
            if nxt.strip() not in RUN_COMMANDS:
                return nxt
            put(PROMPT + nxt.rstrip("\n"))
            if ready is None:
                return self._general(nxt, put, readline)
            p, rp = ready
            rb = p.rb
            tmpl = rp.memo.get(rb[0]) if rb else None
            if tmpl is None:
                return self._general(nxt, put, readline)
            n, its, fmt = tmpl[0], tmpl[2], tmpl[7]
            tw = p.tw
            drop = tw.skip is not None
            if (len(rb) <= n or (drop and tw.skip != (p.name, p.pc))
                    or 3 + its + 2 > dbg.max_steps or p.ib_level or p.bt is not None
                    or not p.fast_regs or p.insn_hooks):
                return self._general(nxt, put, readline)
            # r: the packet run as Type4Replay.run runs one (the same state, effects,
            # counts and text; tests compare sessions with and without this)
            p.limit = 1 << 62  # (as the runner leaves it)
            vs = rp.take(p, tmpl)
            if drop:  # (the first line, the delay slot's, was shown at the prompt)
                tw.skip = None
                rest = self.rests.get(fmt)
                if rest is None:  # (no field in the first line: an instruction line)
                    rest = self.rests[fmt] = fmt.__self__.split("\n", 1)[1].format
                text = rest(*vs)
            else:
                text = fmt(*vs)
            put(text)
            put(self._where(p))
            if len(lines) >= batch:
                echo.flush()
            line = readline()
            got = self.packet(line)
            if got is None:
                return line
            put(PROMPT + line.rstrip("\n"))

    def _general(self, line: str, put: Callable[[str], None], readline: Callable[[], str]) -> str:
        """``line`` (echoed) done by the debugger; the next line read."""
        out = self.dbg.execute(line)
        if out:
            put(out)
        return readline()
