"""The interactive afuc debugger behind ``isaforge afuc debug FW``: the command interpreter.

:class:`Debugger` is a command interpreter over an :class:`~isaforge.afuc.machine.Emulator`:
``execute(line)`` runs one command and returns the text to show, so it works the same at a
terminal, from a script on stdin, and in tests. :func:`repl` is the loop around it.

It takes the one-letter commands of Mesa's emulator prompt (``afuc-disasm -e``) with the
same meanings, on one line as Mesa's prompt reads them from a script (``s``, ``r``,
``d r``, ``d c SCRATCH_REG0``, ``w r $02 0x1234``, ``w m 0x20000 0xabc``,
``p CP_NOP 1 2 3``, ``h``, ``q``); a letter given alone asks for the rest on the next line,
as Mesa's sub-prompts do. Longer commands add breakpoints on pc or packet, continue, a view
of the disassembly around pc with the registers and the ROQ, and so on (``help``).

Executed instructions are shown as Mesa's emulator shows them: the instruction, then what it
changed (see :mod:`isaforge.afuc.machine.trace`), but with the real pc instead of Mesa's
``0000``; ``trace off`` silences that. Register dumps use Mesa's line format.

What a command shows is built in :mod:`.view`, breakpoints are kept in :mod:`.breakpoints`,
and runs are carried out by :mod:`.run`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from ...core.errors import IsaforgeError
from ..boot import jumptable_offset
from ..machine.emulator import Emulator
from ..machine.stream import parse_text
from ..machine.trace import PAD, TraceState
from . import args as arg
from .args import CommandError, gpr_label, gpr_name
from .breakpoints import Breakpoints, location, packet_matcher
from .quick import Quick
from .run import Runner
from .view import QUEUES, Code, call_stack, describe_packet, packets_of, rem_in, render_view

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
        self.failed = 0  # commands that gave an error (a scripted session exits non-zero)
        self._error = False  # the command being run gave one
        self.auto_view = False
        self.current = emu.main.name
        self.breakpoints = Breakpoints()
        self.code = Code(emu)
        self.runner = Runner(emu, self.breakpoints)
        self._pending: str | None = None
        self._buf: list[str] = []
        self._tw = TraceState(self._buf.append, jumptable_offset(emu.fw))
        self._tw.joined = True  # (self._buf's lines are joined by newlines)
        self.trace = False
        self.set_trace(trace)
        # a script's packet and r commands done at once (None: every line the general way)
        self.quick: Quick | None = Quick(self)
        self._where: dict[tuple, str] = {}  # where()'s lines (the images do not change)

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
        if self.quick is not None:
            out = self.quick.execute(line)
            if out is not None:
                return out
        self._buf.clear()
        line = line.strip()
        if self._pending is not None:
            line = f"{self._pending} {line}".strip()
            self._pending = None
        if not line or line[0] == ";" or (line[0] == "#" and not line[1:2].isdigit()):
            return ""  # a comment ("#16 1" is a packet by opcode number)
        self._error = False
        try:
            self._dispatch(line)
        except IsaforgeError as e:
            self._out(f"error: {e.message}")
        except OSError as e:
            self._out(f"error: {e.strerror or e}: {e.filename or ''}".rstrip(": "))
        except Exception as e:  # noqa: BLE001 - one line, never a traceback, keep the session
            self._out(f"error: internal: {type(e).__name__}: {e}")
        if self._error:
            self.failed += 1
        out = "\n".join(self._buf)
        self._buf.clear()
        return out

    def set_trace(self, on: bool) -> None:
        self.trace = on
        self.emu.set_tracer(self._tw if on else None)

    def where(self) -> str:
        """The next instruction of the current processor, as a trace line with ``=>``."""
        p = self._proc()
        key = (p.name, p.pc, p.waitin_pending, p.bt, len(self.emu.procs))
        got = self._where.get(key)
        if got is not None:
            self._tw.skip = (p.name, p.pc)  # shown here: the trace does not print it again
            return got
        if not 0 <= p.pc < len(p.image):
            return f"=> {p.name} pc {p.pc:#06x} is outside the firmware"
        note = ""
        if p.waitin_pending:
            note = "   (waitin delay slot: the next packet dispatches after it)"
        elif p.bt is not None:
            note = f"   (delay slot, then to {p.bt:#06x})"
        name = f"{p.name} " if len(self.emu.procs) > 1 else ""
        self._tw.skip = (p.name, p.pc)  # shown here: the trace does not print it again
        label = self.code.label_of(p.name, p.pc)
        label = f"  <{label}>" if label else ""
        got = self._where[key] = (f"=> {name}{p.pc:04x}: {p.image[p.pc]:08x}  "
                                  f"{self.code.text(p.name, p.pc)}{label}{note}")
        return got

    # -- plumbing ---------------------------------------------------------------------------
    def _out(self, text: str) -> None:
        if text.startswith("error: "):
            self._error = True
        self._buf.append(text)

    def _proc(self, name: str | None = None) -> Any:
        return self.emu.proc(name or self.current)

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

    def _run(self, mode: str, count: int = 1) -> None:
        """Run (see :meth:`.run.Runner.run`); print why it stopped, and where."""
        reason, self.current = self.runner.run(self._proc(), mode, count, self.max_steps)
        if reason.strip():
            self._out(reason)
        self._out(self.where())
        if self.auto_view:
            self._out(self.render_view())

    # -- commands: running ------------------------------------------------------------------
    @_command("s", "step", "si", "stepi")
    def cmd_step(self, args: list[str], line: str) -> None:
        n = arg.number(args[0], "step count") if args else 1
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
            for bp in self.breakpoints:
                self._out(bp.describe() + (f", hit {bp.hits}x" if bp.hits else ""))
            return
        if args[0] in ("packet", "pkt", "p") and len(args) == 2:
            match, what = packet_matcher(self.emu.db, args[1])
            bp = self.breakpoints.add_packet(match, what)
        elif len(args) == 1:
            pc, what = location(self.code, self._proc(), args[0])
            bp = self.breakpoints.add_pc(self.current, pc, what)
        else:
            raise CommandError("usage: break PC|LABEL  or  break packet CP_NAME|#OPCODE|PKT4")
        self._out(f"breakpoint {bp.describe()}")

    @_command("delete", "del", "unbreak")
    def cmd_delete(self, args: list[str], line: str) -> None:
        if not args or args == ["all"]:
            n = self.breakpoints.clear()
            self._out(f"deleted {n} breakpoint{'s' if n != 1 else ''}")
            return
        for a in args:
            n = arg.number(a, "breakpoint number")
            if not self.breakpoints.delete(n):
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
                    self._dump_gpr(arg.gpr(tok))
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

    def _dump_gpr(self, n: int) -> None:
        self._out(f"{PAD}GPR:  {gpr_name(n)}: {self.emu.read_gpr(n, self.current):08x}")

    def _dump_reg(self, space: str, n: int) -> None:
        tag = {"control": "CTRL: ", "sqe": "SQE: ", "gpu": "GPU:  ", "pipe": "PIPE: "}[space]
        value = self.emu.read_reg(space, n, self.current)
        self._out(f"{PAD}{tag}{self._reg_name(space, n)}: {value:08x}")

    def _dump_mem(self, args: list[str]) -> None:
        addr = arg.address(args[0])
        count = arg.number(args[1], "dword count") if len(args) > 1 else 1
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
            addr = arg.address(rest[0])
            values = [arg.value(t) for t in rest[1:]]
            self.emu.load_memory(addr, values)
            return
        if len(rest) != 2:
            raise CommandError(f"usage: w {sub} NAME VALUE (one register at a time)")
        value = arg.value(rest[1])
        if sub == "r":
            n = arg.gpr(rest[0])
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
            waiting = len(self.emu.proc(self.current).rb)
            head = "raw" if toks[0] == "raw" else describe_packet(self.emu.db, stream.rb[0])
            where = f"{self.current} " if len(self.emu.procs) > 1 else ""
            self._out(f"queued {head}: {len(stream.rb)} dwords ({where}ring buffer: {waiting} "
                      "dwords waiting)")

    @_command("drop")
    def cmd_drop(self, args: list[str], line: str) -> None:
        n = arg.number(args[0], "dword count") if args else 1
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
        stack = call_stack(self.emu, p.name)
        self._out(f"{p.name}: pc {p.pc:#06x}  carry {p.carry:#x}  "
                  f"instructions {p.steps - p.reps} (+{p.reps} (rep))  "
                  f"packets {p.packets}  call stack [{', '.join(f'{s:#06x}' for s in stack)}]")
        for row in range(0, 32, 8):
            self._out("  ".join(f"{gpr_label(n)}={self.emu.read_gpr(n, p.name):08x}"
                                for n in range(row, row + 8)))

    @_command("roq", "queue")
    def cmd_roq(self, args: list[str], line: str) -> None:
        p = self._proc()
        self._out(f"{p.name} reads $data from "
                  f"{QUEUES[p.ib_level]} (IB_LEVEL {p.ib_level})")
        for qname, words in self.emu.roq(self.current).items():
            self._out(f"{qname}: {len(words)} dwords")
            for text in packets_of(self.emu.db, words, 32, rem_in(self.emu, p, qname)):
                self._out(f"  {text}")

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
        return render_view(self.emu, self.current, self.code,
                           self.breakpoints.pcs(self.current),
                           [b.describe() for b in self.breakpoints],
                           width=self.width, color=self.color, before=before, after=after)

    # -- commands: settings -----------------------------------------------------------------
    @_command("proc", "processor", "thread")
    def cmd_proc(self, args: list[str], line: str) -> None:
        if args:
            self.current = self.emu.proc(args[0].upper()).name
        for p in self.emu.procs:
            mark = "*" if p.name == self.current else " "
            self._out(f"{mark} {p.name}: pc {p.pc:#06x}, {p.steps - p.reps} instructions, "
                      f"{p.packets} packets")

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
            n = arg.number(args[0], "step limit")
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
    _loop(dbg, stdin, echo, interactive, banner)


class Batched:
    """An ``echo`` that passes lines on joined, about ``batch`` at a time (for a script's
    output: a write per line costs more than the line); :meth:`flush` at the end.

    Not many more at a time: a joined text of megabytes is allocated past the top of the C
    heap, which the allocator hands back to the system when it is freed, so each write
    faulted its pages in again (Mesa's script of 40,000 packets: 52,000 page faults in
    writes of 2,048 items, 8,000 in writes of 256, and about a tenth less CPU time)."""

    def __init__(self, echo: Callable[[str], None], batch: int = 256) -> None:
        self.echo, self.batch = echo, batch
        self.lines: list[str] = []

    def __call__(self, text: str) -> None:
        self.lines.append(text)
        if len(self.lines) >= self.batch:
            self.flush()

    def flush(self) -> None:
        if self.lines:
            self.echo("\n".join(self.lines))
            self.lines.clear()


def _loop(dbg: Debugger, stdin: TextIO, echo: Callable[[str], None], interactive: bool,
          banner: bool) -> None:
    if banner:
        echo(dbg.banner())
    if not interactive:
        _script(dbg, stdin, echo)
        return
    while not dbg.done:
        try:
            line = input(dbg.prompt)
        except EOFError:
            break
        except KeyboardInterrupt:
            echo("^C")
            continue
        text = dbg.execute(line)
        if text:
            echo(text)
    if not dbg.done:
        echo("")


def _script(dbg: Debugger, stdin: TextIO, echo: Callable[[str], None]) -> None:
    """Commands read from ``stdin`` until ``q`` or its end, each echoed after its prompt
    (a :class:`Batched` echo gets the lines in its list, a call per line costing more than
    a script's command; and Mesa's packet-then-r pairs are done by :meth:`Quick.pairs`)."""
    lines = echo.lines if isinstance(echo, Batched) else None
    put = lines.append if lines is not None else echo
    batch = echo.batch if isinstance(echo, Batched) else 0
    execute, readline = dbg.execute, stdin.readline
    line = None  # a line read (by Quick.pairs) but not echoed nor done yet
    while not dbg.done:
        try:
            if line is None:
                line = readline()
            if not line:
                break
            put(dbg.prompt + line.rstrip("\n"))
        except KeyboardInterrupt:
            put("^C")
            line = None
            continue
        if dbg.quick is not None and lines is not None:
            rest = dbg.quick.pairs(line, readline, echo)  # type: ignore[arg-type]
            if rest is not None:
                line = rest
                if len(lines) >= batch:
                    echo.flush()  # type: ignore[union-attr]
                continue
        text = execute(line)
        line = None
        if text:
            put(text)
        if lines is not None and len(lines) >= batch:
            echo.flush()  # type: ignore[union-attr]
