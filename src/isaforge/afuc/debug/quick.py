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

from typing import TYPE_CHECKING

from ...core.errors import IsaforgeError
from ..machine.processor import M32
from ..machine.replay import replay_of
from ..machine.stream import packet_words
from .view import describe_packet

if TYPE_CHECKING:
    from .commands import Debugger

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
    """The shortcuts of one debugger (see the module docstring)."""

    def __init__(self, dbg: Debugger) -> None:
        self.dbg = dbg
        # (packet name, payload length) -> header (None: the general path says why not)
        self.headers: dict[tuple[str, int], int | None] = {}
        self.described: dict[int, str] = {}  # header -> describe_packet's text
        self.ints = Dwords()  # number texts met -> their dwords
        self.where: dict[int, str] = {}  # dbg.where() at a waitin delay slot, by pc

    def execute(self, line: str) -> str | None:
        """What :meth:`.commands.Debugger.execute` would return for ``line`` (having done
        what it does), or None (nothing done) when it is not one of the plain cases."""
        if self.dbg._pending is not None:
            return None
        text = line.strip()
        if text in RUN_COMMANDS:
            return self.run()
        # (the general path reads the tokens joined by blanks as a line of a text stream:
        # comments, "#16" and "@ADDR:" are for it to read)
        if ";" in text or "#" in text or "@" in text or "/" in text:
            return None
        toks = text.split()
        if len(toks) < 2:
            return None
        head = toks[0]
        if head == "raw":
            return self.queue(toks, 1, "raw")
        if head in PACKET_COMMANDS and toks[1] != "raw":
            return self.queue(toks, 2, None)
        return None

    def queue(self, toks: list[str], start: int, what: str | None) -> str | None:
        """``raw W...`` (``what`` "raw", words from ``toks[1:]``) or ``p NAME payload...``
        (``toks[1]`` is NAME, the payload from ``toks[2:]``) queued on the ring buffer."""
        ints = self.ints
        if len(ints) > 1 << 16:
            ints.clear()
        try:
            words = [ints[t] for t in toks[start:]]
        except ValueError:
            return None
        dbg = self.dbg
        emu = dbg.emu
        if what is None:
            key = (toks[1], len(words))
            hdr = self.headers.get(key, -1)
            if hdr == -1:
                try:
                    hdr = packet_words(toks[1], [0] * len(words), emu.db)[0]
                except IsaforgeError:
                    hdr = None
                self.headers[key] = hdr
            if hdr is None:
                return None
            words.insert(0, hdr)
            what = self.described.get(hdr)
            if what is None:
                what = self.described[hdr] = describe_packet(emu.db, hdr)
        procs = emu.procs
        p = procs[0] if len(procs) == 1 and procs[0].name == dbg.current else emu.proc(
            dbg.current)
        rb = p.rb
        rb.extend(words)
        where = f"{p.name} " if len(procs) > 1 else ""
        return f"queued {what}: {len(words)} dwords ({where}ring buffer: {len(rb)} dwords waiting)"

    def run(self) -> str | None:
        """``r`` when the packet at the head of the ring buffer runs from its template."""
        dbg = self.dbg
        emu = dbg.emu
        procs = emu.procs
        if (dbg.breakpoints or dbg.auto_view or len(procs) != 1
                or len(emu.packet_hooks) != 1):  # (the runner's own)
            return None
        p = procs[0]
        tw = p.tw
        rb = p.rb
        if (tw is None or not tw.joined or not p.waitin_pending or not rb
                or p.name != dbg.current):
            return None
        rp = replay_of(p)
        if p.pc != rp.slot or rp.memo.get(rb[0]) is None:
            return None
        p.limit = 1 << 62  # (as the runner leaves it)
        buf = dbg._buf
        buf.clear()
        if not rp.run(p, p.steps + dbg.max_steps, True, 1):  # (emu.steps: p's alone)
            return None  # (nothing ran, nothing printed)
        where = self.where.get(p.pc)  # (at a waitin's delay slot, as before the packet)
        if where is None:
            where = self.where[p.pc] = dbg.where()
        else:
            tw.skip = (p.name, p.pc)  # (as dbg.where() does)
        buf.append(where)
        out = "\n".join(buf)
        buf.clear()
        return out
