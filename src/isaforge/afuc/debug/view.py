"""What the debugger shows: code with the listing's labels, packets in a queue, and the
view of disassembly, registers and ROQ (rendered with rich)."""

from __future__ import annotations

import functools
import io
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ...core.errors import IsaforgeError
from ..decode import Decoder, LabelContext
from ..isa import REG_REM
from ..listing import sections
from ..machine.emulator import Emulator
from ..machine.processor import STACK_DEPTH
from ..machine.stream import BadPacketError, parse_header
from ..regdb import RegDB
from . import listcache
from .args import gpr_label

QUEUES = ["RB", "IB1", "IB2", "SDS"]  # what $data reads, by @IB_LEVEL


@dataclass
class _Image:
    """One processor image as the listing shows it: text and labels by pc."""

    text: dict[int, str]
    labels: dict[int, list[str]]


@functools.lru_cache(maxsize=8)
def _images(data: bytes, fwid: int) -> dict[str, _Image]:
    """The listing of a firmware by section ("main", "BV", "LPAC"); empty if it has none
    (kept on disk when the CLI's cache is on: see :mod:`.listcache`)."""
    kept = listcache.load(data, fwid)
    if kept is not None:
        return {name: _Image(text, labels) for name, (text, labels) in kept.items()}
    try:
        secs = sections(data, gpu=fwid)
    except IsaforgeError:
        return {}
    images = {sec.name: _Image({n: sec.line(ins).replace("\t", "  ")
                                for n, ins in enumerate(sec.insns)}, sec.labels())
              for sec in secs}
    listcache.save(data, fwid, {name: (img.text, img.labels) for name, img in images.items()})
    return images


def _words_bytes(words: Iterable[int]) -> bytes:
    w = list(words)
    return struct.pack(f"<{len(w)}I", *w)


class Code:
    """The code of an emulator's processors, with the labels of the firmware's listing
    (packet handlers, ``fxnN``, ``lN``)."""

    def __init__(self, emu: Emulator) -> None:
        self.emu = emu
        self._decoded: dict[tuple[str, int], str] = {}
        self._decoder: Decoder | None = None
        self._label_of: dict[tuple[str, int], str | None] = {}  # label_of's answers
        self._listed: dict[str, _Image | None] = {}

    def _image(self, proc: str) -> _Image | None:
        if proc not in self._listed:  # (the firmware images do not change)
            self._listed[proc] = self._image_of(proc)
        return self._listed[proc]

    def _image_of(self, proc: str) -> _Image | None:
        emu = self.emu
        p = emu.proc(proc)
        if p is emu.procs[0] or proc in ("BV", "LPAC"):
            images = _images(_words_bytes(emu.fw.words), emu.fw.fwid)
            return images.get("main" if p is emu.procs[0] else proc)
        images = _images(_words_bytes([0, *p.image]), emu.fw.fwid)  # a5xx ME
        return images.get("main")

    def labels(self, proc: str) -> dict[int, list[str]]:
        """Labels by pc."""
        img = self._image(proc)
        return img.labels if img else {}

    def by_label(self, proc: str) -> dict[str, int]:
        """pc by label."""
        return {name: pc for pc, names in self.labels(proc).items() for name in names}

    def text(self, proc: str, pc: int) -> str:
        """The instruction at ``pc`` as the listing shows it (tabs as two blanks)."""
        img = self._image(proc)
        if img is not None and pc in img.text:
            return img.text[pc]
        key = (proc, pc)
        got = self._decoded.get(key)
        if got is None:
            # a word the listing does not show (past the packet table): decoded at its own
            # pc, so that a branch names its real target (a one-word decode would name
            # target 0 l0 and print the others raw)
            image = self.emu.proc(proc).image
            if self._decoder is None:
                self._decoder = Decoder(self.emu.gen, self.emu.db)
            ctx = LabelContext(self.emu.db, len(image))
            ctx.pc = pc
            got = self._decoded[key] = self._decoder.text(image[pc], ctx).replace("\t", "  ")
        return got

    def label_of(self, proc: str, pc: int) -> str | None:
        """The nearest named label at or before ``pc`` (packet handler or function)."""
        key = (proc, pc)
        if key not in self._label_of:
            self._label_of[key] = self._find_label(proc, pc)
        return self._label_of[key]

    def _find_label(self, proc: str, pc: int) -> str | None:
        labels = self.labels(proc)
        for at in range(pc, max(pc - 4096, -1), -1):
            names = [n for n in labels.get(at, []) if not (n[0] == "l" and n[1:].isdigit())]
            if len(names) > 4:  # a handler shared by many packets (or no table at all)
                names = [n for n in names if n.startswith("fxn")]
            if names:
                return names[0] if at == pc else f"{names[0]}+{pc - at}"
        return None


def describe_packet(db: RegDB, hdr: int) -> str:
    """A packet header by name: ``CP_MEM_WRITE (4 dwords)``, ``PKT4 RB_RENDER_CNTL (1
    dwords)``."""
    try:
        h = parse_header(hdr)
    except BadPacketError:
        return f"bad header {hdr:08x}"
    if h.type == 4:
        name = db.gpu_reg_name(h.ident) or f"0x{h.ident:04x}"
        return f"PKT4 {name} ({h.count} dwords)"
    name = db.pm4_packet_name(h.ident) or f"#{h.ident:#x}"
    return f"{name} ({h.count} dwords)"


def rem_in(emu: Emulator, p: Any, qname: str) -> int:
    """How many words at the head of queue ``qname`` belong to the packet being run."""
    if qname != QUEUES[p.ib_level] or p.waitin_pending or p.header is None:
        return 0
    return emu.read_gpr(REG_REM, p.name)


def packets_of(db: RegDB, words: list[int], limit: int = 16, rem: int = 0) -> list[str]:
    """Words of a queue as packets (header name, payload), first ``limit`` shown; the first
    ``rem`` words are the rest of the packet being run."""
    out, i = [], 0
    if rem:
        i = min(rem, len(words))
        shown = " ".join(f"{w:08x}" for w in words[:min(i, 6)])
        more = f" ... (+{i - 6})" if i > 6 else ""
        out.append(f"rest of the current packet ($rem {rem}): {shown}{more}")
    while i < len(words) and len(out) < limit:
        try:
            h = parse_header(words[i])
        except BadPacketError:
            out.append(f"{words[i]:08x}  (not a packet header)")
            i += 1
            continue
        payload = words[i + 1: i + 1 + h.count]
        shown = " ".join(f"{w:08x}" for w in payload[:6])
        more = f" ... (+{len(payload) - 6})" if len(payload) > 6 else ""
        short = "" if len(payload) == h.count else f"  (only {len(payload)} of them queued)"
        out.append(f"{describe_packet(db, words[i])}: {shown}{more}{short}")
        i += 1 + h.count
    if i < len(words):
        out.append(f"... {len(words) - i} more dwords")
    return out


def call_stack(emu: Emulator, proc: str) -> list[int]:
    """Return addresses on the call stack (SQE registers SP and STACK0..), oldest first."""
    read = emu.read_reg
    sp = read("sqe", "SP", proc)
    base = emu.reg_offset("sqe", "STACK0", proc)
    return [read("sqe", base + i, proc) for i in range(min(sp, STACK_DEPTH))]


def render_view(emu: Emulator, proc: str, code: Code, breakpoint_pcs: set[int],
                breakpoints: list[str], *, width: int = 110, color: bool = False,
                before: int = 8, after: int = 12) -> str:
    """Disassembly around pc of ``proc`` (current instruction highlighted, ``*`` at the
    ``breakpoint_pcs``), registers and ROQ (and the ``breakpoints`` described), as a rich
    layout rendered to text, with colour if ``color``."""
    from rich.console import Console, Group
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    p = emu.proc(proc)
    db = emu.db
    labels = code.labels(p.name)
    text = Text(no_wrap=True, overflow="ellipsis")
    lo, hi = max(0, p.pc - before), min(len(p.image), p.pc + after + 1)
    for pc in range(lo, hi):
        names = labels.get(pc, [])
        for name in names[:3]:
            text.append(f"      {name}:\n", style="bold cyan")
        if len(names) > 3:
            text.append(f"      ... {len(names) - 3} more labels\n", style="cyan")
        mark = "=>" if pc == p.pc else "  "
        bp = "*" if pc in breakpoint_pcs else " "
        line = f"{mark}{bp}{pc:04x}: {p.image[pc]:08x}  {code.text(p.name, pc)}\n"
        if pc == p.pc:
            text.append(line, style="bold reverse")
        else:
            text.append(line, style="red" if bp == "*" else "")
    text.rstrip()
    regs = Table.grid(padding=(0, 1))
    regs.add_column(justify="right", style="cyan")
    regs.add_column()
    regs.add_column(justify="right", style="cyan")
    regs.add_column()
    for n in range(16):
        a, b = n, n + 16
        regs.add_row(gpr_label(a), f"{emu.read_gpr(a, p.name):08x}",
                     gpr_label(b), f"{emu.read_gpr(b, p.name):08x}")
    stack = [f"{a:04x}" for a in call_stack(emu, p.name)]
    info = Text(f"pc {p.pc:04x}  carry {p.carry:x}\ninsns {p.steps - p.reps}  packets {p.packets}\n"
                f"call stack [{' '.join(stack)}]")
    if p.header is not None:
        info.append(f"\nlast packet {describe_packet(db, p.header)}")
    roq_lines = [f"$data from {QUEUES[p.ib_level]}"]
    for qname, words in emu.roq(p.name).items():
        pk = packets_of(db, words, 4, rem_in(emu, p, qname))
        roq_lines.append(f"{qname} ({len(words)} dwords)" + (": " if pk else ""))
        roq_lines.extend("  " + t for t in pk)
    if breakpoints:
        roq_lines.append("breakpoints: " + "; ".join(breakpoints))
    grid = Table.grid(expand=True)
    grid.add_column(ratio=3)
    grid.add_column(ratio=2)
    grid.add_row(Panel(text, title=f"{p.name} disassembly", title_align="left"),
                 Panel(Group(regs, info), title="registers", title_align="left"))
    roq = Panel(Text("\n".join(roq_lines)), title="ROQ", title_align="left")
    buf = io.StringIO()
    console = Console(file=buf, width=width, force_terminal=color,
                      color_system="standard" if color else None,
                      highlight=False, emoji=False)
    console.print(grid)
    console.print(roq)
    return buf.getvalue().rstrip("\n")
