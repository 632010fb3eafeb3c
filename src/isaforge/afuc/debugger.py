"""The interactive afuc debugger behind ``isaforge afuc debug FW``.

:class:`Debugger` is a command interpreter over an :class:`~isaforge.afuc.emu.Emulator`:
``execute(line)`` runs one command and returns the text to show, so it works the same at a
terminal, from a script on stdin, and in tests. :func:`repl` is the loop around it.

It takes the one-letter commands of Mesa's emulator prompt (``afuc-disasm -e``) with the
same meanings, on one line as Mesa's prompt reads them from a script (``s``, ``r``,
``d r``, ``d c SCRATCH_REG0``, ``w r $02 0x1234``, ``w m 0x20000 0xabc``,
``p CP_NOP 1 2 3``, ``h``, ``q``); a letter given alone asks for the rest on the next line,
as Mesa's sub-prompts do. Longer commands add breakpoints on pc or packet, continue, a view
of the disassembly around pc with the registers and the ROQ, and so on (``help``).

Executed instructions are shown as Mesa's emulator shows them: the instruction, then what it
changed (see :mod:`isaforge.afuc.trace`), but with the real pc instead of Mesa's ``0000``;
``trace off`` silences that. Register dumps use Mesa's line format.
"""

from __future__ import annotations

import functools
import io
import struct
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from ..core.errors import EmulationError, IsaforgeError
from .disasm import jumptable_offset, listing
from .emu import Emulator
from .isa import REG_REM, parse_reg_name
from .machine import STACK_DEPTH, StreamEndError
from .stream import BadPacketError, parse_header, parse_text
from .trace import PAD, SPECIAL_DST, TraceState

M32 = 0xFFFFFFFF
DEFAULT_MAX_STEPS = 1_000_000
MESA_PROMPT = "(s)tep, (r)un, (d)ump, (w)rite, (p)acket, (h)elp, (q)uit: "
PROMPT = "(afuc) "
SUB_PROMPTS = {
    "d": "  dump: GPR (r)egisters, (c)ontrol register, (s)qe registers, (g)pu register, "
         "(p)ipe register, (m)emory: ",
    "w": "  write: GPR (r)egister, (c)ontrol register, (s)qe register, (g)pu register, "
         "(p)ipe register, (m)emory: ",
    "p": "  Enter packet (opc or register name), followed by payload: ",
    "d c": "    Control register (name or offset): ",
    "d g": "    GPU register (name or offset): ",
    "d p": "    Pipe register (name or offset): ",
    "d m": "    GPU memory offset: ",
    "w r": "    GPR register (name or offset) and value: ",
    "w c": "    Control register (name or offset) and value: ",
    "w s": "    SQE register (name or offset) and value: ",
    "w g": "    GPU register (name or offset) and value: ",
    "w p": "    Pipe register (name or offset) and value: ",
    "w m": "    GPU memory offset and value: ",
}
SPACES = {"c": "control", "s": "sqe", "g": "gpu", "p": "pipe"}
SQE_SHOWN = 16  # Mesa's dump shows SQE registers 0..15 (SP and the call stack)

HELP = """\
Mesa's emulator prompt letters (same meanings as afuc-disasm -e):
  s [N]             step N instructions (default 1) on the current processor
  r                 run until the next waitin has executed (the end of a packet)
  d r|s             dump all GPRs | the SQE registers (SP, call stack)
  d c|g|p NAME      dump a control | GPU | pipe register (name or offset; * = all non-zero)
  d m ADDR [N]      dump N dwords of GPU memory (default 1)
  w r|c|s|g|p NAME VALUE   write a GPR ($02, $rem) or a control/SQE/GPU/pipe register
  w m ADDR VALUE... write dwords of GPU memory
  p CP_NAME [payload...]   queue a type-7 packet (name or #opcode) on the ring buffer
                           (of the current processor)
  p REG_NAME [values...]   queue a type-4 write starting at a GPU register (name or 0x offset)
  h, ?              this help
  q                 quit
More:
  step [N], run     as s and r
  c, continue       run every processor until a breakpoint, the step limit, or idle
  n, next           run until the next packet is dispatched (stop at its handler)
  b, break LOC      breakpoint before pc LOC: a number (0x1a4, 420) or a label
                    (CP_MEM_WRITE, fxn123, l45); on the current processor
  b packet PKT      breakpoint when a packet is dispatched: CP_NAME, #opcode, PKT4, or a
                    GPU register name (a type-4 write that covers it)
  b                 list breakpoints;  delete [N|all]  remove them
  regs              registers of the current processor
  mem ADDR [N]      as d m
  roq               the words waiting in the ROQ queues (RB, IB1, IB2, SDS), as packets
  view, v           disassembly around pc, registers and ROQ;  view on|off: after each run
  packet ...        as p;  raw W0 W1...: queue dwords as they are;  feed FILE: a stream file
  p @ADDR: W0 W1... place dwords in GPU memory (for IBs)
  drop [N]          discard N dwords (default 1) from the head of the queue being read
  proc [NAME]       list processors / switch the current one (BR, BV, LPAC; PFP, ME)
  trace on|off      show executed instructions and what they changed (default on)
  limit [N]         step limit of one run/continue, counting each (rep) iteration
                    (default 1000000)
  quit, exit        quit
"""

_COMMANDS: dict[str, str] = {}


def _command(*names: str) -> Callable:
    def deco(fn: Callable) -> Callable:
        for n in names:
            _COMMANDS[n] = fn.__name__
        return fn

    return deco


class CommandError(IsaforgeError):
    """A command the debugger cannot carry out (bad syntax, unknown name)."""


@dataclass
class Breakpoint:
    """A stop before ``pc`` on processor ``proc``, or on dispatch of a matching packet."""

    number: int
    kind: str  # "pc" or "packet"
    what: str  # as the user named it
    proc: str | None = None
    pc: int | None = None
    match: Callable[[int], bool] | None = None
    hits: int = 0

    def describe(self) -> str:
        if self.kind == "pc":
            return f"{self.number}: pc {self.pc:#06x} on {self.proc} ({self.what})"
        return f"{self.number}: packet {self.what}"


def _gpr_name(n: int) -> str:
    """A GPR as Mesa's dumps name it ($rem, $addr, $usraddr, $data for 0x1c..0x1f)."""
    return SPECIAL_DST.get(n, f"${n:02x}")


# -- disassembly with labels ------------------------------------------------------------------
@dataclass
class Section:
    """One processor image as Mesa's listing shows it: text and labels by pc."""

    text: dict[int, str]
    labels: dict[int, list[str]]

    def by_label(self) -> dict[str, int]:
        return {name: pc for pc, names in self.labels.items() for name in names}


@functools.lru_cache(maxsize=8)
def _sections(data: bytes, fwid: int) -> dict[str, Section]:
    """The verbose listing of a firmware split into its sections ("main", "BV", "LPAC")."""
    try:
        text = listing(data, gpu=fwid, verbose=True)
    except IsaforgeError:
        return {}
    out: dict[str, Section] = {}
    cur = out["main"] = Section({}, {})
    for line in text.splitlines():
        if line.startswith(".section "):
            cur = out[line.split()[1]] = Section({}, {})
            continue
        if not line.startswith("\t") or len(line) < 17 or line[5] != ":":
            continue
        try:
            pc = int(line[1:5], 16)
        except ValueError:
            continue
        rest = line[17:]
        if not rest:
            continue
        if rest.endswith(":") and " " not in rest and not rest.startswith("["):
            cur.labels.setdefault(pc, []).append(rest[:-1])
        else:
            cur.text[pc] = rest.replace("\t", "  ")
    return out


def _words_bytes(words: Iterable[int]) -> bytes:
    w = list(words)
    return struct.pack(f"<{len(w)}I", *w)


# -- the debugger -----------------------------------------------------------------------------
class Debugger:
    """A command interpreter over an emulator (see the module docstring)."""

    def __init__(self, emu: Emulator, *, trace: bool = True,
                 max_steps: int = DEFAULT_MAX_STEPS, color: bool = False,
                 width: int = 110) -> None:
        self.emu = emu
        self.max_steps = max_steps
        self.color = color
        self.width = width
        self.done = False
        self.auto_view = False
        self.current = emu.main.name
        self.breakpoints: dict[int, Breakpoint] = {}
        self._next_bp = 1
        self._pending: str | None = None
        self._buf: list[str] = []
        self._dispatched: list[tuple[str, int]] = []
        self._decode_cache: dict[tuple[str, int], str] = {}
        emu.hook_add("packet", self._on_packet)
        self._tw = TraceState(self._buf.append, jumptable_offset(emu.fw))
        self.trace = False
        self.set_trace(trace)

    # -- public interface -------------------------------------------------------------------
    @property
    def prompt(self) -> str:
        """What to show before reading the next line (a sub-prompt while one is pending)."""
        if self._pending is not None:
            return SUB_PROMPTS.get(self._pending, "> ")
        return PROMPT

    def banner(self) -> str:
        fw = self.emu.fw
        procs = ", ".join(p.name for p in self.emu.procs)
        return (f"afuc debugger: {fw.gpu_name} firmware {fw.version:08x} (a{fw.gen}xx), "
                f"processor {procs}; 'h' for help, 'q' to quit\n{self.where()}")

    def execute(self, line: str) -> str:
        """Run one command line; returns what it prints (never raises for a bad command)."""
        self._buf.clear()
        line = line.strip()
        if self._pending is not None:
            line = f"{self._pending} {line}".strip()
            self._pending = None
        if not line or line[0] == ";" or (line[0] == "#" and not line[1:2].isdigit()):
            return ""  # a comment ("#16 1" is a packet by opcode number)
        try:
            self._dispatch(line)
        except IsaforgeError as e:
            self._buf.append(f"error: {e.message}")
        except OSError as e:
            self._buf.append(f"error: {e.strerror or e}: {e.filename or ''}".rstrip(": "))
        except Exception as e:  # noqa: BLE001 - one line, never a traceback, keep the session
            self._buf.append(f"error: internal: {type(e).__name__}: {e}")
        out = "\n".join(self._buf)
        self._buf.clear()
        return out

    def set_trace(self, on: bool) -> None:
        self.trace = on
        tw = self._tw if on else None
        self.emu.tracer = tw
        for p in self.emu.procs:
            p.tw = tw

    def where(self) -> str:
        """The next instruction of the current processor, as a trace line with ``=>``."""
        p = self._proc()
        if not 0 <= p.pc < len(p.image):
            return f"=> {p.name} pc {p.pc:#06x} is outside the firmware"
        note = ""
        if p.waitin_pending:
            note = "   (waitin delay slot: the next packet dispatches after it)"
        elif p.bt is not None:
            note = f"   (delay slot, then to {p.bt:#06x})"
        name = f"{p.name} " if len(self.emu.procs) > 1 else ""
        label = self._label_of(p.name, p.pc)
        label = f"  <{label}>" if label else ""
        return (f"=> {name}{p.pc:04x}: {p.image[p.pc]:08x}  {self._text(p.name, p.pc)}"
                f"{label}{note}")

    # -- plumbing ---------------------------------------------------------------------------
    def _out(self, text: str) -> None:
        self._buf.append(text)

    def _proc(self, name: str | None = None) -> Any:
        return self.emu.proc(name or self.current)

    def _on_packet(self, proc: Any, hdr: int) -> None:
        self._dispatched.append((proc.name, hdr))

    def _dispatch(self, line: str) -> None:
        toks = line.split()
        head = toks[0]
        # Mesa's prompt reads one letter at a time: "dr" is "d r", "wm 0x10 1" is "w m ..."
        if len(head) == 2 and head[0] in "dw" and head[1] in "rcsgmp" and head not in _COMMANDS:
            toks = [head[0], head[1], *toks[1:]]
            head = toks[0]
        method = _COMMANDS.get(head)
        if method is None:
            if self._looks_like_packet(head):
                self._packet(toks)
                return
            method = _COMMANDS.get(head.lower())
        if method is None:
            raise CommandError(f"unknown command {head!r}; 'h' lists the commands")
        getattr(self, method)(toks[1:], line)

    def _looks_like_packet(self, head: str) -> bool:
        db = self.emu.db
        return (db.pm4_packet_id(head) is not None or db.gpu_reg(head) is not None
                or head.startswith(("@", "#")) or head == "raw")

    def _ask(self, key: str) -> None:
        """Ask for the rest of a command on the next line, as Mesa's sub-prompts do."""
        self._pending = key

    # -- names and numbers ------------------------------------------------------------------
    @staticmethod
    def _int(tok: str, what: str = "number") -> int:
        try:
            return int(tok, 0)
        except ValueError:
            raise CommandError(f"expected a {what}, found {tok!r}") from None

    def _value(self, tok: str) -> int:
        v = self._int(tok, "value")
        if not -0x80000000 <= v <= M32:
            raise CommandError(f"value {tok} does not fit in 32 bits")
        return v & M32

    def _addr(self, tok: str) -> int:
        a = self._int(tok, "memory address")
        if a < 0 or a >= 1 << 64:
            raise CommandError(f"memory address {tok} is not a 64-bit address")
        if a % 4:
            raise CommandError(f"memory address {tok} is not 4-byte aligned")
        return a

    @staticmethod
    def _gpr(tok: str) -> int:
        n = parse_reg_name(tok if tok.startswith("$") else "$" + tok)
        if n is None:
            try:
                n = int(tok, 0)
            except ValueError:
                n = -1
        if not 0 <= n < 32:
            raise CommandError(f"unknown GPR {tok!r} (use $00..$1f, $rem, $addr, $usraddr, "
                               "$data, $sp, $lr)")
        return n

    def _reg(self, space: str, tok: str) -> int:
        return self.emu.reg_offset(space, tok.lstrip("@%|"), self.current)

    def _reg_name(self, space: str, n: int) -> str:
        db = self.emu.db
        if space == "gpu":
            return db.gpu_reg_name(n) or f"0x{n:04x}"
        name = {"control": db.control_reg_name, "sqe": db.sqe_reg_name,
                "pipe": db.pipe_reg_name}[space](n)
        sigil = "|" if space == "pipe" else "@"
        return f"{sigil}{name}" if name else f"0x{n:03x}"

    def _label_of(self, proc: str, pc: int) -> str | None:
        """The nearest named label at or before ``pc`` (packet handler or function)."""
        labels = self._section(proc).labels if self._section(proc) else {}
        for at in range(pc, max(pc - 4096, -1), -1):
            names = [n for n in labels.get(at, []) if not (n[0] == "l" and n[1:].isdigit())]
            if len(names) > 4:  # a handler shared by many packets (or no table at all)
                names = [n for n in names if n.startswith("fxn")]
            if names:
                return names[0] if at == pc else f"{names[0]}+{pc - at}"
        return None

    def _section(self, proc: str) -> Section | None:
        emu = self.emu
        p = emu.proc(proc)
        if p is emu.procs[0] or proc in ("BV", "LPAC"):
            secs = _sections(_words_bytes(emu.fw.words), emu.fw.fwid)
            return secs.get("main" if p is emu.procs[0] else proc)
        secs = _sections(_words_bytes([0, *p.image]), emu.fw.fwid)  # a5xx ME
        return secs.get("main")

    def _text(self, proc: str, pc: int) -> str:
        sec = self._section(proc)
        if sec is not None and pc in sec.text:
            return sec.text[pc]
        key = (proc, pc)
        got = self._decode_cache.get(key)
        if got is None:
            from .disasm import disassemble

            word = self._proc(proc).image[pc]
            ins = disassemble([word], gpu=self.emu.fw.fwid)[0]
            got = self._decode_cache[key] = (ins.text + ins.comment).replace("\t", "  ")
        return got

    def _location(self, tok: str) -> tuple[int, str]:
        """A pc breakpoint location: a number or a label of the current processor."""
        p = self._proc()
        try:
            pc = int(tok, 0)
        except ValueError:
            pc = None
        if pc is not None:
            if not 0 <= pc < len(p.image):
                raise CommandError(f"pc {tok} is outside the {p.name} image "
                                   f"({len(p.image)} instructions)")
            label = self._label_of(p.name, pc)
            return pc, label or f"{pc:#06x}"
        sec = self._section(p.name)
        labels = sec.by_label() if sec else {}
        if tok in labels:
            return labels[tok], tok
        packet = self.emu.db.pm4_packet_id(tok)
        if packet is not None and any(p.jmptbl):
            return p.jmptbl[packet], tok
        raise CommandError(f"no label {tok!r} in the {p.name} firmware (give a pc number, a "
                           "packet handler such as CP_MEM_WRITE, or fxnN/lN)")

    def _packet_matcher(self, tok: str) -> tuple[Callable[[int], bool], str]:
        db = self.emu.db
        if tok.upper() in ("PKT4", "TYPE4"):
            return (lambda h: h >> 28 == 4), "PKT4 (any type-4 write)"
        op = db.pm4_packet_id(tok)
        if op is None and tok.startswith("#"):
            op = self._int(tok[1:], "opcode")
            if not 0 <= op <= 0x7F:
                raise CommandError(f"opcode {tok[1:]} is not 0..0x7f")
        if op is not None:
            name = db.pm4_packet_name(op) or f"#{op:#x}"
            return (lambda h: h >> 28 == 7 and (h >> 16) & 0x7F == op), name
        reg = db.gpu_reg(tok)
        if reg is not None:
            def covers(h: int) -> bool:
                if h >> 28 != 4:
                    return False
                start, count = (h >> 8) & 0x3FFFF, h & 0x7F
                return start <= reg < start + count

            return covers, f"type-4 write of {tok}"
        raise CommandError(f"{tok!r} is neither a PM4 packet, #opcode, PKT4 nor a GPU register")

    def _describe_packet(self, hdr: int) -> str:
        try:
            h = parse_header(hdr)
        except BadPacketError:
            return f"bad header {hdr:08x}"
        if h.type == 4:
            name = self.emu.db.gpu_reg_name(h.ident) or f"0x{h.ident:04x}"
            return f"PKT4 {name} ({h.count} dwords)"
        name = self.emu.db.pm4_packet_name(h.ident) or f"#{h.ident:#x}"
        return f"{name} ({h.count} dwords)"

    # -- running ----------------------------------------------------------------------------
    def _pc_break(self, p: Any) -> Breakpoint | None:
        for bp in self.breakpoints.values():
            if bp.kind == "pc" and bp.proc == p.name and bp.pc == p.pc:
                return bp
        return None

    def _packet_break(self) -> tuple[Breakpoint, str, int] | None:
        for proc, hdr in self._dispatched:
            for bp in self.breakpoints.values():
                if bp.kind == "packet" and bp.match is not None and bp.match(hdr):
                    return bp, proc, hdr
        return None

    def _run(self, mode: str, count: int = 1) -> None:
        """Execute: mode "step" (count instructions), "waitin" (until a waitin has run),
        "packet" (until a packet is dispatched) on the current processor, or "continue"
        (every processor, until a breakpoint or idle). Prints the trace, why it stopped,
        and where."""
        emu = self.emu
        start = self._proc()
        steps = 0  # instructions executed (a (rep) instruction is one)
        start_steps = emu.steps  # the emulator's count: each (rep) iteration is one
        limit = count if mode == "step" else self.max_steps
        reason = ""  # why it stopped; " " when it did what was asked (nothing to say)
        self._dispatched.clear()
        procs = [start] if mode != "continue" else None
        running = start
        try:
            progress = True
            while progress and not reason:
                progress = False
                for p in procs or list(emu.procs):
                    running = p
                    first = p is start and steps == 0
                    while True:
                        if not first:
                            bp = self._pc_break(p)
                            if bp is not None:
                                bp.hits += 1
                                self.current = p.name
                                reason = f"breakpoint {bp.number}: {p.name} pc {p.pc:#06x}"
                                break
                        if (steps if mode == "step" else emu.steps - start_steps) >= limit:
                            if mode != "step":
                                self.current = p.name
                                reason = (f"stopped: step limit of {limit} reached "
                                          "('limit N' changes it)")
                            else:
                                reason = " "
                            break
                        bad = self._bad_header(p)
                        if bad:
                            self.current = p.name
                            reason = bad
                            break
                        was_waitin = mode == "waitin" and self._is_waitin(p)
                        if not emu.step(p.name):
                            if mode != "continue":
                                reason = ("idle: waiting for a packet (queue one with "
                                          "'p CP_NAME payload...')")
                            break
                        steps += 1
                        first = False
                        progress = True
                        if self._dispatched:
                            hit = self._packet_break()
                            if hit is not None:
                                bp, proc, hdr = hit
                                bp.hits += 1
                                self.current = proc
                                reason = (f"packet breakpoint {bp.number}: "
                                          f"{self._describe_packet(hdr)} on {proc}")
                                break
                            if mode == "packet":
                                proc, hdr = self._dispatched[-1]
                                self.current = proc
                                reason = f"packet {self._describe_packet(hdr)}"
                                break
                            self._dispatched.clear()
                        if was_waitin:
                            reason = " "
                            break
                    if reason:
                        break
            if not reason:
                reason = "idle: every processor waits for a packet"
        except KeyboardInterrupt:
            self.current = running.name
            reason = "interrupted (in the middle of an instruction if one was running)"
        except StreamEndError as e:  # Mesa: "FIFO empty, input a packet!"
            self.current = running.name
            reason = f"error: {e.message}; queue the rest ('raw W0 W1...') and continue"
        except EmulationError as e:
            self.current = p = running
            reason = (f"error: {e.message}" + ("" if e.message.startswith(p.name) else
                                                f" (at {p.name} pc {p.pc:#06x})"))
        finally:
            self._dispatched.clear()
        if reason.strip():
            self._out(reason)
        self._out(self.where())
        if self.auto_view:
            self._out(self.render_view())

    def _bad_header(self, p: Any) -> str | None:
        """Why the header the next step would dispatch is bad; checked before the step, so
        the firmware state stays as it was (the emulator reports it only after the delay
        slot has run)."""
        if not p.waitin_pending:
            return None
        hdr = p.queue().peek()
        if hdr is None:
            return None
        try:
            parse_header(hdr)
        except BadPacketError as e:
            return (f"error: {p.name}: {e.message}; not executed ('drop' discards it from "
                    "the queue)")
        return None

    def _is_waitin(self, p: Any) -> bool:
        try:
            return p.decode(p.pc)[0] == "waitin"
        except EmulationError:
            return False

    # -- commands: running ------------------------------------------------------------------
    @_command("s", "step", "si", "stepi")
    def cmd_step(self, args: list[str], line: str) -> None:
        n = self._int(args[0], "step count") if args else 1
        if n < 1:
            raise CommandError("the step count must be at least 1")
        self._run("step", n)

    @_command("r", "run")
    def cmd_run(self, args: list[str], line: str) -> None:
        self._run("waitin")

    @_command("c", "continue", "cont")
    def cmd_continue(self, args: list[str], line: str) -> None:
        self._run("continue")

    @_command("n", "next")
    def cmd_next(self, args: list[str], line: str) -> None:
        self._run("packet")

    # -- commands: breakpoints --------------------------------------------------------------
    @_command("b", "break", "breakpoint", "breakpoints")
    def cmd_break(self, args: list[str], line: str) -> None:
        if not args:
            if not self.breakpoints:
                self._out("no breakpoints")
            for bp in self.breakpoints.values():
                self._out(bp.describe() + (f", hit {bp.hits}x" if bp.hits else ""))
            return
        if args[0] in ("packet", "pkt", "p") and len(args) == 2:
            match, what = self._packet_matcher(args[1])
            bp = Breakpoint(self._next_bp, "packet", what, match=match)
        elif len(args) == 1:
            pc, what = self._location(args[0])
            bp = Breakpoint(self._next_bp, "pc", what, proc=self.current, pc=pc)
        else:
            raise CommandError("usage: break PC|LABEL  or  break packet CP_NAME|#OPCODE|PKT4")
        self.breakpoints[bp.number] = bp
        self._next_bp += 1
        self._out(f"breakpoint {bp.describe()}")

    @_command("delete", "del", "unbreak")
    def cmd_delete(self, args: list[str], line: str) -> None:
        if not args or args == ["all"]:
            n = len(self.breakpoints)
            self.breakpoints.clear()
            self._out(f"deleted {n} breakpoint{'s' if n != 1 else ''}")
            return
        for a in args:
            n = self._int(a, "breakpoint number")
            if self.breakpoints.pop(n, None) is None:
                raise CommandError(f"no breakpoint {a}")
            self._out(f"deleted breakpoint {n}")

    # -- commands: dump and write (Mesa's d and w menus) ------------------------------------
    @_command("d", "dump")
    def cmd_dump(self, args: list[str], line: str) -> None:
        if not args:
            self._ask("d")
            return
        sub, rest = args[0], args[1:]
        if sub == "r":
            if rest:
                for tok in rest:
                    self._dump_gpr(self._gpr(tok))
            else:
                for n in range(32):
                    self._dump_gpr(n)
        elif sub == "s":
            if rest:
                for tok in rest:
                    self._dump_reg("sqe", self._reg("sqe", tok))
            else:
                sqe = self._proc().sqe
                extra = [n for n in range(SQE_SHOWN, len(sqe)) if int(sqe[n])]
                for n in [*range(SQE_SHOWN), *extra]:
                    self._dump_reg("sqe", n)
        elif sub in ("c", "g", "p"):
            space = SPACES[sub]
            if not rest:
                self._ask(f"d {sub}")
                return
            for tok in rest:
                if tok in ("*", "all"):
                    arr = self._reg_array(space)
                    for n in range(len(arr)):
                        if int(arr[n]):
                            self._dump_reg(space, n)
                else:
                    self._dump_reg(space, self._reg(space, tok))
        elif sub == "m":
            if not rest:
                self._ask("d m")
                return
            self._dump_mem(rest)
        else:
            raise CommandError(f"invalid option: {sub!r} (dump r, s, c, g, p or m)")

    def _reg_array(self, space: str) -> Any:
        p = self._proc()
        return {"control": p.control, "sqe": p.sqe, "pipe": p.pipe, "gpu": self.emu.gpu}[space]

    def _call_stack(self, proc: str) -> list[int]:
        """Return addresses on the call stack (SQE registers SP and STACK0..), oldest first."""
        read = self.emu.read_reg
        sp = read("sqe", "SP", proc)
        base = self.emu.reg_offset("sqe", "STACK0", proc)
        return [read("sqe", base + i, proc) for i in range(min(sp, STACK_DEPTH))]

    def _dump_gpr(self, n: int) -> None:
        self._out(f"{PAD}GPR:  {_gpr_name(n)}: {self.emu.read_gpr(n, self.current):08x}")

    def _dump_reg(self, space: str, n: int) -> None:
        tag = {"control": "CTRL: ", "sqe": "SQE: ", "gpu": "GPU:  ", "pipe": "PIPE: "}[space]
        value = self.emu.read_reg(space, n, self.current)
        self._out(f"{PAD}{tag}{self._reg_name(space, n)}: {value:08x}")

    def _dump_mem(self, args: list[str]) -> None:
        addr = self._addr(args[0])
        count = self._int(args[1], "dword count") if len(args) > 1 else 1
        if not 1 <= count <= 0x10000:
            raise CommandError("the dword count must be 1..65536")
        for i, v in enumerate(self.emu.read_mem(addr, count)):
            self._out(f"{PAD}MEM:  0x{addr + 4 * i:016x}: 0x{v:08x}")

    @_command("mem", "x")
    def cmd_mem(self, args: list[str], line: str) -> None:
        if not args:
            raise CommandError("usage: mem ADDR [N]")
        self._dump_mem(args)

    @_command("w", "write", "set")
    def cmd_write(self, args: list[str], line: str) -> None:
        if not args:
            self._ask("w")
            return
        sub, rest = args[0], args[1:]
        if sub not in ("r", "c", "s", "g", "p", "m"):
            raise CommandError(f"invalid option: {sub!r} (write r, c, s, g, p or m)")
        if not rest:
            self._ask(f"w {sub}")
            return
        if len(rest) < 2:
            raise CommandError(f"usage: w {sub} {'ADDR' if sub == 'm' else 'NAME'} VALUE")
        if sub == "m":
            addr = self._addr(rest[0])
            values = [self._value(t) for t in rest[1:]]
            self.emu.load_memory(addr, values)
            return
        if len(rest) != 2:
            raise CommandError(f"usage: w {sub} NAME VALUE (one register at a time)")
        value = self._value(rest[1])
        if sub == "r":
            n = self._gpr(rest[0])
            if n == 0:
                raise CommandError("$00 is always zero")
            self.emu.write_gpr(n, value, self.current)
            return
        space = SPACES[sub]
        self.emu.write_reg(space, self._reg(space, rest[0]), value, self.current)
        self._tw.clear()  # what the write changed is not the next instruction's doing

    # -- commands: packets ------------------------------------------------------------------
    @_command("p", "packet", "pkt")
    def cmd_packet(self, args: list[str], line: str) -> None:
        if not args:
            self._ask("p")
            return
        self._packet(args)

    def _packet(self, toks: list[str]) -> None:
        """One line of a text stream: a packet, ``raw`` words or ``@ADDR: words``."""
        stream = parse_text(" ".join(toks), self.emu.db, "<packet>")
        self.emu.feed(stream, self.current)
        for addr, words in stream.memory.items():
            self._out(f"placed {len(words)} dwords in GPU memory at {addr:#x}")
        if stream.rb:
            rb = self.emu.roq(self.current)["RB"]
            head = "raw" if toks[0] == "raw" else self._describe_packet(stream.rb[0])
            where = f"{self.current} " if len(self.emu.procs) > 1 else ""
            self._out(f"queued {head}: {len(stream.rb)} dwords ({where}ring buffer: {len(rb)} "
                      "dwords waiting)")

    @_command("drop")
    def cmd_drop(self, args: list[str], line: str) -> None:
        n = self._int(args[0], "dword count") if args else 1
        q = self._proc().queue()
        if n < 1 or n > len(q):
            raise CommandError(f"the queue {self._proc().name} reads holds {len(q)} dwords; "
                               f"cannot drop {n}")
        words = [q.pop() for _ in range(n)]
        self._out("dropped " + " ".join(f"{w:08x}" for w in words))

    @_command("raw")
    def cmd_raw(self, args: list[str], line: str) -> None:
        self._packet(["raw", *args])

    @_command("feed", "load")
    def cmd_feed(self, args: list[str], line: str) -> None:
        if len(args) != 1:
            raise CommandError("usage: feed STREAM_FILE")
        before = len(self.emu.roq(self.current)["RB"])
        self.emu.feed_file(Path(args[0]).read_bytes(), args[0])
        rb = self.emu.roq(self.current)["RB"]
        self._out(f"queued {len(rb) - before} dwords from {args[0]}")

    # -- commands: state views --------------------------------------------------------------
    @_command("info")
    def cmd_info(self, args: list[str], line: str) -> None:
        if args and args[0] in ("b", "break", "breakpoints"):
            self.cmd_break([], line)
        elif args and args[0] in ("roq", "queue"):
            self.cmd_roq([], line)
        else:
            self.cmd_regs(args[1:], line)

    @_command("regs", "registers")
    def cmd_regs(self, args: list[str], line: str) -> None:
        p = self._proc(args[0].upper() if args else None)
        stack = self._call_stack(p.name)
        self._out(f"{p.name}: pc {p.pc:#06x}  carry {p.carry:#x}  steps {p.steps}  "
                  f"packets {p.packets}  call stack [{', '.join(f'{s:#06x}' for s in stack)}]")
        for row in range(0, 32, 8):
            self._out("  ".join(f"{_gpr_name(n)}={self.emu.read_gpr(n, p.name):08x}"
                                for n in range(row, row + 8)))

    @_command("roq", "queue")
    def cmd_roq(self, args: list[str], line: str) -> None:
        p = self._proc()
        self._out(f"{p.name} reads $data from "
                  f"{['RB', 'IB1', 'IB2', 'SDS'][p.ib_level]} (IB_LEVEL {p.ib_level})")
        for qname, words in self.emu.roq(self.current).items():
            self._out(f"{qname}: {len(words)} dwords")
            for text in self._packets_of(words, 32, self._rem_in(p, qname)):
                self._out(f"  {text}")

    def _rem_in(self, p: Any, qname: str) -> int:
        """How many words at the head of queue ``qname`` belong to the packet being run."""
        active = ["RB", "IB1", "IB2", "SDS"][p.ib_level]
        if qname != active or p.waitin_pending or p.header is None:
            return 0
        return self.emu.read_gpr(REG_REM, p.name)

    def _packets_of(self, words: list[int], limit: int = 16, rem: int = 0) -> list[str]:
        """Words of a queue as packets (header name, payload), first ``limit`` shown; the
        first ``rem`` words are the rest of the packet being run."""
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
            out.append(f"{self._describe_packet(words[i])}: {shown}{more}{short}")
            i += 1 + h.count
        if i < len(words):
            out.append(f"... {len(words) - i} more dwords")
        return out

    @_command("view", "v", "l", "list")
    def cmd_view(self, args: list[str], line: str) -> None:
        if args and args[0] in ("on", "off"):
            self.auto_view = args[0] == "on"
            self._out(f"view after each run: {args[0]}")
            return
        self._out(self.render_view())

    def render_view(self, before: int = 8, after: int = 12) -> str:
        """Disassembly around pc (current instruction highlighted), registers and ROQ, as a
        rich layout rendered to text (with colour when the debugger has it)."""
        from rich.console import Console, Group
        from rich.panel import Panel
        from rich.table import Table
        from rich.text import Text

        p = self._proc()
        sec = self._section(p.name)
        code = Text(no_wrap=True, overflow="ellipsis")
        lo, hi = max(0, p.pc - before), min(len(p.image), p.pc + after + 1)
        bps = {bp.pc for bp in self.breakpoints.values()
               if bp.kind == "pc" and bp.proc == p.name}
        for pc in range(lo, hi):
            names = sec.labels.get(pc, []) if sec else []
            for name in names[:3]:
                code.append(f"      {name}:\n", style="bold cyan")
            if len(names) > 3:
                code.append(f"      ... {len(names) - 3} more labels\n", style="cyan")
            mark = "=>" if pc == p.pc else "  "
            bp = "*" if pc in bps else " "
            text = f"{mark}{bp}{pc:04x}: {p.image[pc]:08x}  {self._text(p.name, pc)}\n"
            if pc == p.pc:
                code.append(text, style="bold reverse")
            else:
                code.append(text, style="red" if bp == "*" else "")
        code.rstrip()
        regs = Table.grid(padding=(0, 1))
        regs.add_column(justify="right", style="cyan")
        regs.add_column()
        regs.add_column(justify="right", style="cyan")
        regs.add_column()
        for n in range(16):
            a, b = n, n + 16
            regs.add_row(_gpr_name(a), f"{self.emu.read_gpr(a, p.name):08x}",
                         _gpr_name(b), f"{self.emu.read_gpr(b, p.name):08x}")
        stack = [f"{a:04x}" for a in self._call_stack(p.name)]
        info = Text(f"pc {p.pc:04x}  carry {p.carry:x}\nsteps {p.steps}  packets {p.packets}\n"
                    f"call stack [{' '.join(stack)}]")
        if p.header is not None:
            info.append(f"\nlast packet {self._describe_packet(p.header)}")
        roq_lines = [f"$data from {['RB', 'IB1', 'IB2', 'SDS'][p.ib_level]}"]
        for qname, words in self.emu.roq(p.name).items():
            pk = self._packets_of(words, 4, self._rem_in(p, qname))
            roq_lines.append(f"{qname} ({len(words)} dwords)" + (": " if pk else ""))
            roq_lines.extend("  " + t for t in pk)
        if self.breakpoints:
            roq_lines.append("breakpoints: " + "; ".join(
                b.describe() for b in self.breakpoints.values()))
        grid = Table.grid(expand=True)
        grid.add_column(ratio=3)
        grid.add_column(ratio=2)
        grid.add_row(Panel(code, title=f"{p.name} disassembly", title_align="left"),
                     Panel(Group(regs, info), title="registers", title_align="left"))
        roq = Panel(Text("\n".join(roq_lines)), title="ROQ", title_align="left")
        buf = io.StringIO()
        console = Console(file=buf, width=self.width, force_terminal=self.color,
                          color_system="standard" if self.color else None,
                          highlight=False, emoji=False)
        console.print(grid)
        console.print(roq)
        return buf.getvalue().rstrip("\n")

    # -- commands: settings -----------------------------------------------------------------
    @_command("proc", "processor", "thread")
    def cmd_proc(self, args: list[str], line: str) -> None:
        if args:
            self.current = self.emu.proc(args[0].upper()).name
        for p in self.emu.procs:
            mark = "*" if p.name == self.current else " "
            self._out(f"{mark} {p.name}: pc {p.pc:#06x}, {p.steps} steps, {p.packets} packets")

    @_command("trace")
    def cmd_trace(self, args: list[str], line: str) -> None:
        if args:
            if args[0] not in ("on", "off"):
                raise CommandError("usage: trace on|off")
            self.set_trace(args[0] == "on")
        self._out(f"trace {'on' if self.trace else 'off'}")

    @_command("limit")
    def cmd_limit(self, args: list[str], line: str) -> None:
        if args:
            n = self._int(args[0], "step limit")
            if n < 1:
                raise CommandError("the step limit must be at least 1")
            self.max_steps = n
        self._out(f"step limit of one run: {self.max_steps}")

    @_command("where", "pc")
    def cmd_where(self, args: list[str], line: str) -> None:
        self._out(self.where())

    @_command("h", "?", "help")
    def cmd_help(self, args: list[str], line: str) -> None:
        self._out(HELP.rstrip("\n"))

    @_command("q", "quit", "exit")
    def cmd_quit(self, args: list[str], line: str) -> None:
        self.done = True


def repl(dbg: Debugger, stdin: TextIO | None = None,
         echo: Callable[[str], None] | None = None, interactive: bool | None = None,
         banner: bool = True) -> None:
    """Read commands until ``q`` or end of input. At a terminal, lines are read with
    ``input()`` (line editing, history); otherwise from ``stdin``, each echoed after its
    prompt as Mesa's transcripts show them."""
    stdin = stdin or sys.stdin
    echo = echo or print
    if interactive is None:
        interactive = stdin.isatty()
    if interactive:
        try:
            import readline  # noqa: F401 - line editing and history for input()
        except ImportError:
            pass
    if banner:
        echo(dbg.banner())
    while not dbg.done:
        prompt = dbg.prompt
        try:
            if interactive:
                line = input(prompt)
            else:
                line = stdin.readline()
                if not line:
                    break
                echo(prompt + line.rstrip("\n"))
        except EOFError:
            break
        except KeyboardInterrupt:
            echo("^C")
            continue
        text = dbg.execute(line)
        if text:
            echo(text)
    if interactive and not dbg.done:
        echo("")
