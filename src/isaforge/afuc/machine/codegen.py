"""The code generator of the afuc emulator: Python source for afuc instructions.

Each instruction is decoded once and turned into Python source by :class:`CodeGen`. The same
source runs in two ways (see :mod:`.processor`), so both give the same effects:

* the exact path: one compiled function per instruction (:meth:`CodeGen.compile_one`), with
  optional Mesa-style trace bookkeeping (``tw``) and hooks;
* the fast path: straight-line runs of instructions (basic blocks, up to and including the
  delay slot of a branch) compiled into one function each (:meth:`CodeGen.compile_block`).
  A block that ends in ``waitin`` runs the delay slot and dispatches the next packet itself,
  and loops when that packet's handler is the block again (a stream of type-4 writes stays
  in one call). Step count, limit, packet count and the ring buffer live in locals (written
  back however the block ends; hooks called meanwhile see the counts of the block's start).
  ``(rep)(xmovN)mov $data, $data`` copies a whole packet of registers at once when its
  words are in the ring buffer and the registers plain. Compiled code is shared by the
  emulators of one firmware image in a process (and kept on disk when :mod:`.codecache` is
  on, as the CLI has it).
"""

from __future__ import annotations

import re
from array import array
from collections import deque
from collections.abc import Callable
from itertools import islice, repeat, starmap
from types import CodeType
from typing import Any

from ...core.errors import EmulationError
from ...core.isa import sign_extend
from ..isa import REG_ADDR, REG_DATA, REG_LR, REG_MEMDATA, REG_REGDATA, REG_REM, REG_USRADDR
from . import codecache
from .processor import DATA_ADDR, DATA_PIPE, DATA_USRADDR, M32, Processor
from .queues import ListQueue, RegionQueue
from .stream import HEADERS

BRANCHES = {"brnei", "breqi", "brneb", "breqb", "call", "ret", "iret", "bl", "jumpa", "jumpr",
            "sret", "waitin"}
BLOCK_MAX = 24  # longer blocks compile slower than they run faster (firmware paths branch)


NEXT = "return F.get(m.pc) if m.bt is None and not m.waitin_pending else None"
LOOP = "@LOOP@"  # the end of a fast dispatch (next pc in p_): the block may loop
WAIT_DONE = "m.waitin_pending = False"
BATCH = "# @BATCH@"  # in a waitin tail: where a run of type-4 packets may be taken at once


class CodeGen:
    """Python source for afuc instructions of one generation (see the module docstring)."""

    def __init__(self, gen: int) -> None:
        self.gen = gen

    # register access ---------------------------------------------------------------------
    @staticmethod
    def rd(n: int, peek: bool = False) -> str:
        if n == 0:
            return "0"
        if n == REG_MEMDATA:
            return f"m.rd_memdata({peek})"
        if n == REG_REGDATA:
            return f"m.rd_regdata({peek})"
        if n == REG_DATA:
            return "m.peek_data()" if peek else "m.rd_data()"
        return f"g[{n}]"

    @staticmethod
    def wr(n: int, expr: str, traced: bool) -> list[str]:
        if n in (REG_ADDR, REG_USRADDR):
            return [f"m.set_addr({n}, {expr})"]
        if n == REG_DATA:
            return [f"m.wr_data({expr})"]
        out = [f"g[{n}] = {expr}"]
        if traced:
            out.append(f"tw.gpr.add({n})")
        return out

    proc: Processor | None = None
    nr = ""  # in a fast (rep) body: "nr_ = 1; ", the local count of $data reads
    rb_ready = False  # the next inlined $data read takes the header waitin found (pop_)

    def _wr_gpu_reg(self, expr: str) -> list[str]:
        """The start both inlined $data writes share: the value, the address register
        ($addr or $usraddr), and the branch that writes a GPU register (not LPAC_CNTL) and
        moves the address on."""
        lpac = self.proc.lpac_cntl if self.proc is not None else None
        return [
            f"v_ = {expr}",
            f"r_ = {REG_USRADDR} if m.data_mode == {DATA_USRADDR} else {REG_ADDR}",
            "o_ = g[r_]",
            f"if o_ <= 0xffff and o_ != {lpac if lpac is not None else -1} and fr:",
            "    g[r_] = o_ + 1; gpu[o_] = v_; app(('reg', o_, v_, nm))",
        ]

    def wr_data_inline(self, expr: str) -> list[str]:
        """A $data write of a GPU or pipe register in the fast path, inlined (a write of
        NRT_DATA also writes its memory dword and moves NRT_ADDR on, as
        :meth:`Processor.wr_pipe` does); anything else (side effects, hooks) goes through
        :meth:`Processor.wr_data`."""
        return [
            *self._wr_gpu_reg(expr),
            "elif o_ > 0xffff and fr:",  # a pipe register (NRT_DATA: also a memory dword)
            "    n_ = o_ >> 24; pp_ = m.pipe",
            "    if not o_ & 0x40000: g[r_] = (o_ + 0x01000000) & M",
            "    pp_[n_] = v_; app(('pipe', n_, v_, nm))",
            "    if n_ == m.nrt_data:",
            "        lo_ = m.nrt_addr; a_ = int(pp_[lo_]) | int(pp_[lo_ + 1]) << 32",
            "        m.emu.mem[a_ & ~3] = v_ & M; app(('mem', a_ & ~3, v_ & M, nm))",
            "        if not a_ & 3: a_ += 4; pp_[lo_] = a_ & M; pp_[lo_ + 1] = (a_ >> 32) & M",
            "else:",
            "    m.wr_data(v_)",
        ]

    def wr_data_traced(self, expr: str) -> list[str]:
        """A $data write of a GPU register in the exact path, inlined with the trace's
        bookkeeping (as :meth:`Processor.wr_data` and :meth:`Processor.wr_gpu` do it when
        effects are only recorded); anything else goes through :meth:`Processor.wr_data`."""
        return [
            *self._wr_gpu_reg(expr),
            "    tw.gpr.add(r_)",
            "    tw.gpu.add(o_)",
            "else:",
            "    m.wr_data(v_)",
        ]

    def body(self, name: str, f: dict, pc: int, traced: bool, branch_var: str) -> list[str]:
        """Lines executing the instruction once (a (rep) iteration); branches assign
        ``branch_var``; waitin sets ``m.waitin_pending``."""
        out: list[str] = []
        inline = not traced and proc_plain(self.proc)
        # traced (the exact path): ring-buffer reads and GPU register writes of $data are
        # inlined too, with the trace's bookkeeping (tw) on lines of their own
        tin = traced and proc_plain(self.proc)
        temps = iter(range(1 << 30))
        nested = [False]  # inside an (xmovN) move, whose reads are conditional
        self.top_read = False

        def rd(n: int, peek: bool = False) -> str:
            """A read; in the fast path a $data read from the ring buffer is inlined as
            statements before the line that uses it (only where it runs unconditionally)."""
            if n != REG_DATA or peek or not (inline or tin):
                return self.rd(n, peek)
            t = f"d{next(temps)}"
            if tin:
                out.append("if rb and not m.ib_level:")
                out.append(f"    {t} = rb.popleft(); m.nreads += 1; "
                           f"g[{REG_REM}] = (g[{REG_REM}] - 1) & M")
                out.append(f"    tw.gpr.add({REG_REM})")
                out.append("else:")
                out.append(f"    {t} = m.rd_data()")
                return t
            if not nested[0]:
                self.top_read = True
            if self.rb_ready:  # the header waitin found (hdr) is the word this read takes
                self.rb_ready = False
                out.append("pop_()")
                out.append(f"{self.nr}g[{REG_REM}] = (g[{REG_REM}] - 1) & M")
                return "hdr"
            out.append("if rb and not m.ib_level:")
            out.append(f"    {t} = rb.popleft(); {self.nr}g[{REG_REM}] = (g[{REG_REM}] - 1) & M")
            out.append("else:")
            out.append(f"    {t} = m.rd_data(){'; nr_ = 1' if self.nr else ''}")
            return t

        def move(d: int, src_reg: int, src: str) -> list[str]:
            """An (xmovN) extra move; in the fast path its $data read and write are inlined
            (as statements of their own, under the move's condition)."""
            if not (inline or tin):
                return self.wr(d, src, traced)
            saved = len(out)
            nested[0] = True
            wr(d, rd(src_reg))
            nested[0] = False
            lines = out[saved:]
            del out[saved:]
            return lines

        def wr(n: int, expr: str) -> None:
            if n == REG_DATA and inline:
                out.extend(self.wr_data_inline(expr))
            elif n == REG_DATA and tin:
                out.extend(self.wr_data_traced(expr))
            elif (n in (REG_ADDR, REG_USRADDR) and inline and FEATURES["const_addr"]
                  and _CONST.fullmatch(expr)):  # (which branch below is known here)
                v = int(expr.strip("()"), 0)
                if v <= 0xFFFF:
                    mode = DATA_ADDR if n == REG_ADDR else DATA_USRADDR
                    out.append(f"m.data_mode = {mode}; g[{n}] = {v:#x}")
                elif not self.proc.pipe_void[v >> 24]:
                    out.append(f"m.data_mode = {DATA_PIPE}; g[{n}] = {v:#x}")
                else:
                    out.append(f"m.set_addr({n}, {v:#x})")
            elif n in (REG_ADDR, REG_USRADDR) and inline:
                mode = DATA_ADDR if n == REG_ADDR else DATA_USRADDR
                out.append(f"v_ = {expr}")
                out.append(f"if v_ <= 0xffff: m.data_mode = {mode}; g[{n}] = v_")
                # a pipe register that is not triggered by $addr alone (see set_addr)
                out.append(f"elif not m.pipe_void[v_ >> 24]: m.data_mode = {DATA_PIPE}; "
                           f"g[{n}] = v_")
                out.append(f"else: m.set_addr({n}, v_)")
            else:
                out.extend(self.wr(n, expr, traced))

        op = name[:-1] if name[-1] == "i" and name[:-1] in ALU_SRC and name != "setbiti" else name
        alu = ALU_SRC.get(op)
        if alu is not None:
            # operands that are pure (constants, temporaries, registers no read changes)
            # go into the expression itself; others are evaluated first, in order
            ops: dict[str, str] = {}

            def operand(var: str, expr: str) -> None:
                if _PURE.fullmatch(expr):
                    ops[var] = f"({expr})" if expr[0].isdigit() else expr
                else:
                    out.append(f"{var} = {expr}")
                    ops[var] = var

            if op in ("not", "msb"):
                operand("a", rd(f["SRC1"]) if "SRC1" in f else f"{f['IMMED']:#x}")
            else:
                operand("a", rd(f["SRC1"]))
                if "RIMMED" in f:
                    operand("b", f"{f['RIMMED']:#x}")
                elif "IMMED" in f:
                    operand("b", f"{f['IMMED']:#x}")
                else:
                    operand("b", rd(f["SRC2"], bool(f.get("PEEK"))))
            if op in ("or", "xor") and ops["a"] == "(0)":
                alu = ["r = b"]
            elif op == "or" and ops.get("b") == "(0)":
                alu = ["r = a"]
            alu = [_OPERAND.sub(lambda mo: ops.get(mo.group(0), mo.group(0)), s) for s in alu]
            if len(alu) == 1 and alu[0].startswith("r = "):
                wr(f["DST"], alu[0][4:])
            else:
                out.extend(alu)
                wr(f["DST"], "r")
            xmov = f.get("XMOV", 0)
            if xmov:
                dst = f["DST"]
                dd = REG_DATA if dst in (REG_DATA, REG_ADDR, REG_USRADDR) else 0
                src = self.rd(f.get("SRC2", 0))
                dump = ["tw.dump(m)"] if traced else []
                out.append(f"x = g[{REG_REM}]")
                seqs = {1: [dd], 2: [dd, dd], 3: [dd, dst, dd]}
                for k in range(1, xmov + 1):
                    kw = "if" if k == 1 else "elif"
                    cond = f"x == {k}" if k < xmov else f"x >= {k}"
                    out.append(f"{kw} {cond}:")
                    for d in seqs[k]:
                        out.extend("    " + s for s in dump)
                        out.extend("    " + s for s in move(d, f.get("SRC2", 0), src))
            return out
        if name == "movi":
            wr(f["DST"], f"{(f['RIMMED'] << f['SHIFT']) & M32:#x}")
        elif name in ("setbiti", "clrbit"):
            bit = 1 << f["BIT"]
            expr = (f"{rd(f['SRC'])} | {bit:#x}" if name == "setbiti"
                    else f"{rd(f['SRC'])} & {~bit & M32:#x}")
            out.append(f"r = {expr}")
            wr(f["DST"], "r")
        elif name == "ubfx":
            width = max(f["HI"] - f["LO"] + 1, 0)
            out.append(f"r = ({rd(f['SRC'])} >> {f['LO']}) & {(1 << width) - 1:#x}")
            wr(f["DST"], "r")
        elif name == "bfi":
            width = max(f["HI"] - f["LO"] + 1, 0)
            out.append(f"r = (({rd(f['SRC'])} & {(1 << width) - 1:#x}) << {f['LO']}) & M")
            old = rd(f["DST"]) if f["DST"] < REG_REM else f"g[{f['DST']}]"
            out.append(f"r = {old} | r")
            wr(f["DST"], "r")
        elif name in ("cwrite", "swrite"):
            off = f.get("BASE", f.get("IMMED", 0))
            out.append(f"v = {rd(f['SRC'])}")
            out.append(f"a = ({rd(f['OFFSET'])} + {off:#x}) & M")
            if f["PREINCREMENT"]:
                wr(f["OFFSET"], "a")
            if name == "cwrite" and inline and FEATURES["ctrl_inline"]:
                # a control register without side effects, effects only recorded: in place
                base = rd(f["OFFSET"]) if f["OFFSET"] == 0 else None
                n = (off & 0xFFF) if base == "0" else None
                if n is not None and n in self.proc.ctl_special:
                    out.append("m.wr_ctrl(a, v)")
                else:
                    if n is None:
                        out.append("n_ = a & 0xfff")
                    c = "n_" if n is None else f"{n:#x}"
                    special = "" if n is not None else " and n_ not in m.ctl_special"
                    out.append(f"if fr{special}: m.control[{c}] = v; app(('ctrl', {c}, v, nm))")
                    out.append("else: m.wr_ctrl(a, v)")
            elif name == "cwrite":
                out.append("m.wr_ctrl(a, v)")
            if name == "cwrite":
                for i in range(f.get("SDS", 0)):
                    out.append(f"v = {rd(f['SRC'])}")
                    out.append(f"if (a & 0xfff) == m.c['DRAW_STATE_SET_HDR']: m.ds_base({i}, v)")
            else:
                out.append("m.wr_sqe(a, v)")
        elif name in ("cread", "sread"):
            off = f.get("BASE", f.get("IMMED", 0))
            base = rd(f["OFFSET"])
            # (control and SQE registers are arrays of dwords: a read is an index)
            if base == "0":  # (an address known here: [$00 + N])
                a = off & M32
                if f["PREINCREMENT"]:
                    out.append(f"a = {a:#x}")
                reg = (f"m.control[{a & 0xFFF:#x}]" if name == "cread"
                       else f"m.sqe[{a & 0xFF:#x}]")
            else:
                out.append(f"a = ({base} + {off:#x}) & M")
                reg = "m.control[a & 0xfff]" if name == "cread" else "m.sqe[a & 0xff]"
            if f["PREINCREMENT"]:
                wr(f["OFFSET"], "a")
            wr(f["DST"], reg)  # (a read without side effects: written in place)
        elif name == "load":
            out.append(f"o = {rd(f['OFFSET'])}")
            out.append(f"r = m.load(m.ls_addr(o) + {f['IMMED']:#x})")
            if f["PREINCREMENT"]:
                wr(f["OFFSET"], f"(o + {f['IMMED']:#x}) & M")
            wr(f["DST"], "r")
        elif name == "store":
            out.append(f"o = {rd(f['OFFSET'])}")
            out.append(f"a = m.ls_addr(o) + {f['IMMED']:#x}")
            if f["PREINCREMENT"]:
                wr(f["OFFSET"], f"(o + {f['IMMED']:#x}) & M")
            out.append(f"m.store(a, {rd(f['SRC'])})")
        elif name in ("brnei", "breqi", "brneb", "breqb"):
            target = pc + sign_extend(f["OFFSET"], 16)
            src = rd(f["SRC"])
            cond = {"brnei": f"{src} != {f.get('IMMED', 0)}",
                    "breqi": f"{src} == {f.get('IMMED', 0)}",
                    "brneb": f"not {src} & {1 << f.get('BIT', 0):#x}",
                    "breqb": f"{src} & {1 << f.get('BIT', 0):#x}"}[name]
            out.append(f"if {cond}: {branch_var} = {target}")
        elif name == "call":
            out.append(f"m.call({pc + 2})")
            out.append(f"{branch_var} = {f['TARGET']}")
        elif name in ("ret", "iret"):
            out.append(f"{branch_var} = m.ret()")
        elif name == "bl":
            wr(REG_LR, f"{pc + 2}")
            out.append(f"{branch_var} = {f['TARGET']}")
        elif name == "jumpa":
            out.append(f"{branch_var} = {f['TARGET']}")
        elif name == "jumpr":
            out.append(f"{branch_var} = {rd(f['SRC1'])}")
        elif name == "sret":
            out.append(f"{branch_var} = g[{REG_LR}]")
        elif name == "waitin":
            out.append("m.waitin_pending = True")
        elif name in ("nop", "setsecure"):
            out.append("pass")
        else:
            raise EmulationError(f"cannot execute {name} at pc {pc:#06x}")
        return out

    def instr(self, name: str, f: dict, pc: int, traced: bool, branch_var: str,
              fast: bool) -> list[str]:
        """One instruction with its (rep) loop and step accounting."""
        local_nr = fast and f.get("REP") and not traced and proc_plain(self.proc)
        self.nr = "nr_ = 1; " if local_nr else ""
        try:
            body = self.body(name, f, pc, traced, branch_var)
        finally:
            self.nr = ""
        if local_nr and self.top_read:  # every iteration reads $data: $rem is never extra
            body = [s.replace("nr_ = 1; ", "").replace("; nr_ = 1", "") for s in body]
            local_nr = None
        if not f.get("REP"):
            if fast:
                return body
            pre = ["if m.steps >= m.limit: m.limit_hit()", "m.steps += 1"]
            if traced:
                pre.append("tw.clear()")
            return pre + body
        # a step per iteration; m.reps counts the iterations past the first, so that
        # steps - reps is Mesa's count (one per instruction issued, even with $rem 0)
        out = ["m.reps -= 1", f"while g[{REG_REM}]:"]
        if fast:  # steps of the rest of the block are counted already: K of them
            inner = [f"if m.steps - @K@ >= m.limit: m.steps -= @K@; m.pc = {pc}; m.limit_hit()",
                     "m.steps += 1; m.reps += 1"]
        else:
            inner = ["if m.steps >= m.limit: m.limit_hit()", "m.steps += 1; m.reps += 1"]
        if traced:
            inner.append("tw.clear()")
        if local_nr is None:
            inner.extend(body)
        else:
            nreads = "nr_" if local_nr else "m.nreads"
            inner.append(f"{nreads} = 0")
            inner.extend(body)
            inner.append(f"if not {nreads}: g[{REG_REM}] = (g[{REG_REM}] - 1) & M")
        if traced:
            inner.append(f"if not m.nreads: tw.gpr.add({REG_REM})")
            inner.append(f"if g[{REG_REM}]: tw.dump(m)")
        out.extend("    " + s for s in inner)
        if fast:  # the block pre-counted one step for this instruction
            out.insert(0, "m.steps -= 1")
        if fast and local_nr is None and _is_data_copy(name, f):
            out = (self.data_copy(f["XMOV"] or 0)
                   + ["else:", *("    " + s for s in out)]
                   + ["# @COPY@"])
        return out

    def data_copy(self, xmov: int) -> list[str]:
        """``(rep)(xmovN)mov $data, $data`` in the fast path: when the whole packet rest
        ($rem words) is in the ring buffer and goes to GPU registers without side effects
        (below 0x10000, not CP_LPAC_SQE_CNTL, no hooks) and the step budget holds all
        ceil($rem / (N + 1)) iterations, the words are copied at once; otherwise (followed
        by ``else:``) the loop runs as usual. Same effects, registers and steps."""
        lpac = self.proc.lpac_cntl if self.proc is not None else None
        its = f"(R_ + {xmov}) // {xmov + 1}"
        # (the block counted one step for the instruction: each iteration after it counts)
        cond = ["R_", "fr", "len(rb) >= R_", "not m.ib_level", "o_ + R_ <= 0x10000",
                f"m.steps + {its} - 2 - @K@ < m.limit"]
        if lpac is not None:
            cond.append(f"not o_ <= {lpac} < o_ + R_")
        one = ["R_ == 1", "fr", "rb", "not m.ib_level", "o_ <= 0xffff",
               "m.steps - 1 - @K@ < m.limit"]
        if lpac is not None:
            one.insert(-1, f"o_ != {lpac}")
        return [
            f"R_ = g[{REG_REM}]",
            f"r_ = {REG_USRADDR} if m.data_mode == {DATA_USRADDR} else {REG_ADDR}",
            "o_ = g[r_]",
            f"if {' and '.join(one)}:",
            "    v_ = rb.popleft(); gpu[o_] = v_; app(('reg', o_, v_, nm))",
            f"    g[r_] = o_ + 1; g[{REG_REM}] = 0",
            f"elif {' and '.join(cond)}:",
            "    vs_ = array('I', starmap(rb.popleft, repeat((), R_)))",
            "    gpu[o_:o_ + R_] = vs_; app((o_, vs_, nm))",  # one run of registers
            f"    g[r_] = o_ + R_; g[{REG_REM}] = 0; m.steps += {its} - 1; m.reps += {its} - 1",
            *(self.nrt_copy(its) if FEATURES["nrt_copy"] else []),
            *(self.ib_copy(its, cond[4:]) if FEATURES["ib_copy"] else []),
        ]

    @staticmethod
    def ib_copy(its: str, cond: list[str]) -> list[str]:
        """The bulk register copy of :meth:`data_copy` from an IB (or SDS region) that holds
        the packet's rest, read in place from GPU memory (an elif of :meth:`data_copy`'s;
        ``cond``: its conditions on the registers and the step budget)."""
        return [
            f"elif (R_ and fr and m.ib_level and {' and '.join(cond)}"
            " and (q_ := m.ib.get(m.ib_level)).__class__ is RQ and q_.left >= R_):",
            "    a_ = q_.addr; q_.addr = a_ + 4 * R_; q_.left -= R_",
            "    vs_ = array('I', map(q_.mem.get, range(a_, a_ + 4 * R_, 4), repeat(0, R_)))",
            "    gpu[o_:o_ + R_] = vs_; app((o_, vs_, nm))",
            f"    g[r_] = o_ + R_; g[{REG_REM}] = 0; m.steps += {its} - 1; m.reps += {its} - 1",
        ]

    def nrt_copy(self, its: str) -> list[str]:
        """The rest of a packet copied to the pipe's NRT_DATA (a memory dword each, NRT_ADDR
        moving on unless its low bits are set) through a ``$addr`` that does not move on
        (bit 0x40000: CP_MEM_WRITE's payload), when the words are in the ring buffer and the
        step budget holds the iterations: a loop of the writes alone (an elif of
        :meth:`data_copy`'s)."""
        p = self.proc
        if p is None or p.nrt_data is None or p.nrt_addr is None or (
                p.nrt_data in (p.nrt_addr, p.nrt_addr + 1)):  # (the address read once)
            return []
        return [
            "elif (R_ and fr and o_ & 0x40000 and o_ >> 24 == m.nrt_data and len(rb) >= R_"
            f" and not m.ib_level and m.steps + {its} - 2 - @K@ < m.limit):",
            "    n_ = o_ >> 24; pp_ = m.pipe; lo_ = m.nrt_addr; mem_ = m.emu.mem",
            "    a_ = pp_[lo_] | pp_[lo_ + 1] << 32",
            "    for v_ in starmap(rb.popleft, repeat((), R_)):",
            "        b_ = a_ & ~3; pp_[n_] = v_; app(('pipe', n_, v_, nm))",
            "        mem_[b_] = v_; app(('mem', b_, v_, nm))",
            "        if not a_ & 3: a_ += 4",
            "    pp_[lo_] = a_ & M; pp_[lo_ + 1] = (a_ >> 32) & M",
            f"    g[{REG_REM}] = 0; m.steps += {its} - 1; m.reps += {its} - 1",
        ]

    @staticmethod
    def _make(code: CodeType, name: str, **extra: Any) -> Callable:
        ns: dict[str, Any] = {"M": M32, "HEADERS": HEADERS, "array": array, "repeat": repeat,
                              "starmap": starmap, "islice": islice, "consume": deque,
                              "RQ": RegionQueue, "LQ": ListQueue,
                              **extra}
        exec(code, ns)  # noqa: S102 - our own generated code
        return ns[name]

    def _compile(self, src: str, name: str, **extra: Any) -> Callable:
        return self._make(compile(src, f"<afuc {name}>", "exec"), name, **extra)

    def compile_one(self, proc: Processor, pc: int) -> Callable:
        """The exact-path function of one instruction; trace bookkeeping runs when the
        ``tw`` argument is not None. Compiled once per firmware image (see _CODE)."""
        key = _code_key(proc, "step", pc)
        got = _CODE.get(key) or _from_disk(key, proc.image_key)
        if got is None:
            src = self._step_source(proc, pc)
            got = _remember(key, compile(src, "<afuc step>", "exec"), 1)
        return self._make(got[0], "step")

    def _step_source(self, proc: Processor, pc: int) -> str:
        name, f, _ = proc.decode(pc)
        self.proc = proc
        lines = self.instr(name, f, pc, True, "m.bt", fast=False)
        guarded = []
        for s in lines:
            stripped = s.lstrip()
            indent = s[: len(s) - len(stripped)]
            if "tw." not in stripped:
                guarded.append(s)
            elif stripped.startswith("if "):
                cond, _, act = stripped.partition(": ")
                guarded.append(f"{indent}{cond} and tw is not None: {act}")
            else:
                guarded.append(f"{indent}if tw is not None: {stripped}")
        if _LOCALS.search("\n".join(guarded)):  # (inlined reads and writes use them)
            guarded.insert(0, "rb = m.rb; gpu = m.gpu; app = m.fast_append; "
                              "fr = m.fast_regs; nm = m.name")
        return "def step(m, g, tw):\n" + "".join(f"    {s}\n" for s in guarded)

    def _waitin_tail(self, proc: Processor, pc: int) -> list[str]:
        return _waitin_tail_lines(self, proc, pc)

    def compile_block(self, proc: Processor, start: int) -> tuple[Callable, int]:
        """A function running the instructions from ``start`` up to a block end, and the
        number of steps it counts up front (one per instruction; (rep) adjusts itself).

        A block ends after a ``waitin``, after the delay slot of a taken branch, after
        BLOCK_MAX instructions, or before an undecodable word. Compiled once per firmware
        image (see _CODE)."""
        key = _code_key(proc, "block", start)
        got = _CODE.get(key) or _from_disk(key, proc.image_key)
        if got is None:
            src, n = self._block_source(proc, start)
            got = _remember(key, compile(src, "<afuc block>", "exec"), n)
        return self._make(got[0], "block", F=proc._fast_fn), got[1]

    def _block_source(self, proc: Processor, start: int) -> tuple[str, int]:
        self.proc = proc
        lines: list[str] = ["bt = None"]
        pc = start
        maybe_bt = False
        # a conditional branch with a constant target, outside a delay slot, keeps its
        # condition in a local (cond form: "cN_", the target) instead of bt
        cond: tuple[str, int] | None = None
        uses_bt = False
        loops = False
        n = 0
        insns: list[tuple[str, dict]] = []
        while True:
            name, f, _ = proc.decode(pc)
            insns.append((name, f))
            n += 1
            k_mark = f"@K{n}@"
            body = [s.replace("@K@", k_mark) for s in self.instr(name, f, pc, False, "nb", True)]
            lines.append(f"# {pc:#06x} {name}")
            if name == "waitin":
                lines.extend(body)
                if maybe_bt:
                    lines.append(f"m.pc = {cond[1]} if {cond[0]} else {pc + 1}" if cond
                                 else f"m.pc = bt if bt is not None else {pc + 1}")
                    lines.append("m.bt = None")
                    lines.append("return")
                    break
                tail = self._waitin_tail(proc, pc)
                loops = tail[-1] == LOOP
                if loops and body == ["m.waitin_pending = True"]:  # the tail sets it
                    del lines[-1]
                    tail.remove(WAIT_DONE)  # (so it is still False)
                lines.extend(tail[:-1] if loops else tail)
                break
            cm = _COND_BRANCH.fullmatch(body[-1]) if (
                name in BRANCHES and not maybe_bt and FEATURES["cond_branches"]) else None
            if cm is not None:  # (cond form)
                cond = (f"c{n}_", int(cm.group(2)))
                lines.extend(body[:-1])
                lines.append(f"{cond[0]} = {cm.group(1)}")
                maybe_bt = True
            elif name in BRANCHES:
                uses_bt = True
                lines.append("nb = None")
                lines.extend(body)
                if maybe_bt:
                    taken, to = (cond[0], cond[1]) if cond else ("bt is not None", "bt")
                    lines.append(f"if {taken}: m.steps -= {k_mark}; m.pc = {to}; m.bt = nb; "
                                 f"{NEXT}")
                lines.append("bt = nb")
                maybe_bt = True
                cond = None
            else:
                if maybe_bt and cond and body == ["pass"] and lines[-2].startswith(cond[0]):
                    # a nop in the delay slot: the branch is taken before it (same state)
                    k = lines[-1]
                    lines[-2:] = [f"if {lines[-2][len(cond[0]) + 3:]}: m.steps -= {k_mark}; "
                                  f"m.pc = {cond[1]}; return F.get({cond[1]})", k]
                    maybe_bt = False
                    cond = None
                    body = []
                lines.extend(body)
                if maybe_bt and cond:
                    # (inside a block m.bt is None, and only waitin sets m.waitin_pending)
                    lines.append(f"if {cond[0]}: m.steps -= {k_mark}; m.pc = {cond[1]}; "
                                 f"return F.get({cond[1]})")
                    maybe_bt = False
                    cond = None
                elif maybe_bt:
                    lines.append(f"if bt is not None: m.steps -= {k_mark}; m.pc = bt; m.bt = None; "
                                 f"{NEXT}")
                    maybe_bt = False
                if f.get("REP"):
                    # (rep) iterations may have used up the step budget for the instructions
                    # after it (a bulk copy checks only that its own iterations fit)
                    lines.append(rep_limit(k_mark, pc))
            pc += 1
            if n >= BLOCK_MAX or _ends_block(proc, pc):
                lines.append(f"m.pc = {pc}")
                if maybe_bt and cond:
                    lines.append(f"m.bt = {cond[1]} if {cond[0]} else None")
                else:
                    lines.append("m.bt = bt" if maybe_bt else "m.bt = None")
                lines.append(NEXT)
                break
        batch = _type4_batch(proc, start, insns) if loops else None
        if batch is not None:
            lines[lines.index(BATCH)] = (
                f"if not ph and fr and len(rb) > 1 and not m.ib_level and jt[p4] == {start}: "
                "S, P, H = batch_(m, g, rb, S, L, P, H)")
        lines[:0] = [f"m.steps += {n}", f"if m.steps > m.limit: m.steps -= {n}; return None"]
        if not uses_bt:
            lines.remove("bt = None")
        if FEATURES["addr_data"]:
            lines = _addr_then_data(lines)
        if FEATURES["grouped_reads"]:
            lines[2:] = _grouped_reads(lines[2:])  # (after the step count)
        if loops:  # the packet dispatched at the end may start this block again: loop here
            # (m.pc stays {start} meanwhile: every other way out sets it)
            lines = ["while True:", *("    " + s for s in lines),
                     f"    if p_ != {start}: m.pc = p_; return F.get(p_)"]
        # the step count and limit live in locals (written back however the block ends);
        # so do the ring buffer, GPU registers and effect list the inlined code uses
        body = "".join(f"        {s}\n" for s in lines)
        body = body.replace("  @DS@", "")  # the inlined delay slot counts its own step
        for i in range(1, n + 1):
            body = body.replace(f"@K{i}@", str(n - i))
        body = re.sub(r"\bm\.limit\b", "L", re.sub(r"\bm\.steps\b", "S", body))
        body = _FOLD.sub(lambda mo: f"- {int(mo.group(1)) + int(mo.group(2))} ", body)
        body = body.replace("m.STEPS = S", "m.steps = S")  # packet hooks see the counts
        # (m.dispatch counted the packet itself: the finally clause must not undo it)
        body = body.replace("m.dispatch(hdr); return", "m.dispatch(hdr); P = m.packets; "
                            "H = m.header; return")
        # (only the locals the body uses: a block that does not dispatch has no P and H)
        used = [f"{v} = {e}" for v, e in _PROLOGUE if re.search(rf"\b{v}\b", body)]
        ph = re.search(r"\b[PH]\b", body) is not None
        src = ((batch or "") + "def block(m, g):\n"
               f"    {'; '.join(used + ['S = m.steps', 'L = m.limit'])}\n"
               + ("    P = m.packets; H = m.header\n" if ph else "")
               + "    try:\n" + body + "    finally:\n"
               + ("        m.steps = S; m.packets = P; m.header = H\n" if ph
                  else "        m.steps = S\n"))
        return src, n


def _waitin_tail_lines(gen: CodeGen, proc: Processor, pc: int) -> list[str]:
    """After ``waitin`` at ``pc``: when the next header is already in the ring buffer, run
    the delay slot and dispatch here; otherwise leave it to the exact path (idle, IB end)."""
    out = [f"m.pc = {pc + 1}", "m.waitin_pending = True", "m.bt = None"]
    try:
        name, f, _ = proc.decode(pc + 1)
    except EmulationError:
        return [*out, "return"]
    if name in BRANCHES or f.get("REP") or proc.meq is not None:
        return [*out, "return"]
    pend = "; ".join(out)
    # the header: from the ring buffer, or from the IB that @IB_LEVEL reads (an IB with
    # words left; its end, the SDS queue and idling are the exact path's)
    ib = ["if m.ib_level:",
          "    q_ = m.ib.get(m.ib_level)",
          f"    if q_.__class__ is not RQ or not q_.left or m.steps >= m.limit: {pend}; return",
          "    hdr = q_.mem.get(q_.addr, 0); pop_ = q_.pop"]
    if FEATURES["ib_end"]:  # (an ended IB's IN_IB_END too, as next_header makes it)
        ib = ["if m.ib_level:",
              "    q_ = m.ib.get(m.ib_level)",
              "    if (q_.__class__ is RQ and not q_.left and m.emu.ib_end_id is not None"
              " and m.steps < m.limit): m.ib_end(); q_ = m.ib.get(m.ib_level)",
              "    if q_.__class__ is RQ and q_.left and m.steps < m.limit:",
              "        hdr = q_.mem.get(q_.addr, 0); pop_ = q_.pop",
              "    elif q_.__class__ is LQ and q_ and m.steps < m.limit:",
              "        hdr = q_[0]; pop_ = q_.popleft",
              f"    else: {pend}; return"]
    out = [BATCH, *ib,
           f"elif not rb or m.steps >= m.limit: {pend}; return",
           "else:",
           "    hdr = rb[0]; pop_ = rb.popleft",
           WAIT_DONE, "m.steps += 1  @DS@"]
    gen.rb_ready = True
    try:
        slot = gen.body(name, f, pc + 1, False, "nb")
    finally:
        gen.rb_ready = False
    dec = f"g[{REG_REM}] = (g[{REG_REM}] - 1) & M"
    if sum(f"g[{REG_REM}]" in line for line in slot) == 1 and dec in slot:
        slot.remove(dec)  # $rem is set by the dispatch below before anything reads it
    if slot[:1] == ["pop_()"] and FEATURES["tail_pop"]:  # the slot reads the header first
        del slot[0]
        for i, line in enumerate(out):
            if line.endswith("hdr = q_.mem.get(q_.addr, 0); pop_ = q_.pop"):
                out[i] = line.replace("q_.mem.get(q_.addr, 0); pop_ = q_.pop", "q_.pop()")
            elif line.endswith("hdr = q_[0]; pop_ = q_.popleft"):
                out[i] = line.replace("q_[0]; pop_ = q_.popleft", "q_.popleft()")
        out[out.index("    hdr = rb[0]; pop_ = rb.popleft")] = "    hdr = rb.popleft()"
    out.extend(slot)
    slow = "m.STEPS = S; m.packets = P; m.header = H; m.dispatch(hdr); return F.get(m.pc)"
    out.append("try:")
    out.append("    ty_, id_, cnt_ = HD[hdr]")
    out.append("except KeyError:")  # a header not seen yet: dispatch checks and records it
    out.append(f"    {slow}")
    out.append(f"if ph: {slow}")
    out.append("if ty_:")
    out.append("    p_ = jt[p4]")
    if slot and slot[-1] == "g[1] = hdr":  # the usual 'mov $01, $data': $01 is the header
        out.append("    g[1] = hdr & 0x07ffffff")
    else:
        out.append("    if g[1] == hdr: g[1] = hdr & 0x07ffffff")
    out.append("else:")
    out.append("    p_ = jt[id_]")
    out.append(f"g[{REG_REM}] = cnt_; P += 1; H = hdr")
    out.append(LOOP)
    return out


def _type4_batch(proc: Processor, start: int, insns: list[tuple[str, dict]]) -> str | None:
    """The source of ``batch_``, which runs a whole run of type-4 packets at once, for the
    block at ``start`` if it is a plain type-4 handler: ``waitin`` with ``mov $01, $data`` in
    its delay slot, then (the handler) one ALU instruction setting ``$addr`` or ``$usraddr``
    from ``$01`` and an immediate, and ``(rep)(xmovN)mov $data, $data`` (as a630's
    ``ushr $usraddr, $01, 0x8`` and ``(rep)(xmov1)mov $data, $data``); else None.

    ``batch_(m, g, rb, S, L, P, H)`` is called where the block's ``waitin`` has run and the
    next header is not read yet, with the block's step count, limit, packet count and
    header; it takes packets from the ring buffer as long as each is a type-4 packet seen
    before (in HEADERS) whose registers lie below 0x10000, miss CP_LPAC_SQE_CNTL, and whose
    steps stay below the limit with one to spare, and leaves everything (registers, steps,
    (rep) iterations, effects) as the packet-by-packet blocks would at the same point; it
    returns the new S, P and H. The packets it does not take are left to the block."""
    if not proc_plain(proc) or [n for n, _ in insns][-1:] != ["waitin"] or len(insns) != 3:
        return None
    (alu_name, fa), (copy_name, fc) = insns[0], insns[1]
    try:
        slot_name, fs, _ = proc.decode(start + 3)
    except EmulationError:
        return None
    if not (slot_name in ("or", "xor") and fs.get("SRC1") == 0 and fs.get("SRC2") == REG_DATA
            and fs.get("DST") == 1 and not fs.get("REP") and not fs.get("XMOV")
            and not fs.get("PEEK")):
        return None  # the delay slot must be mov $01, $data
    if not _is_data_copy(copy_name, fc):
        return None
    op = (alu_name[:-1] if alu_name[-1] == "i" and alu_name[:-1] in ALU_SRC
          and alu_name != "setbiti" else alu_name)
    src = ALU_SRC.get(op)
    dst = fa.get("DST")
    if (src is None or len(src) != 1 or "m." in src[0] or op in ("not", "msb")
            or dst not in (REG_ADDR, REG_USRADDR) or fa.get("SRC1") != 1
            or fa.get("REP") or fa.get("XMOV")):
        return None
    imm = fa.get("RIMMED", fa.get("IMMED"))
    if imm is None:
        return None
    expr = _OPERAND.sub(lambda mo: {"a": "g1", "b": f"({imm:#x})"}[mo.group(0)], src[0][4:])
    xm = fc.get("XMOV") or 0
    mode = DATA_ADDR if dst == REG_ADDR else DATA_USRADDR
    lpac = proc.lpac_cntl if proc.lpac_cntl is not None else -1
    return f"""MEMO_ = {{}}  # header -> (count + 1, first register, steps, register after,
#                     (rep) iterations, $01, header)


def batch_(m, g, rb, S, L, P, H):
    app = m.fast_append; gpu = m.gpu; nm = m.name; get = MEMO_.get
    t = None; w = 64; Lm = L - 1; base = 0; S0 = S; log = app.__self__; k0 = len(log)
    while True:
        buf = array('I', islice(rb, base, base + w)); nb = len(buf); i = 0; cut = False
        while i < nb:
            got = get(buf[i])
            if got is None:
                hdr = buf[i]
                h_ = HEADERS.get(hdr)
                if h_ is None or not h_[0] or not h_[2]:
                    break
                n = h_[2]; g1 = hdr & 0x07ffffff; o = {expr}
                if o + n > 0x10000 or o <= {lpac} < o + n:
                    break
                its = (n + {xm}) // {xm + 1}
                got = MEMO_[hdr] = (n + 1, o, 3 + its, o + n, its, g1, hdr)
            n1, o, st, e, _, _, _ = got
            j = i + n1
            if j > nb:
                cut = nb == w  # (the window ends inside the packet: a larger one)
                break
            if S + st > Lm:  # (one step to spare, as the block checks)
                break
            vs = buf[i + 1:j]
            gpu[o:e] = vs; app((o, vs, nm))
            S += st; t = got; i = j
        base += i
        if not (cut or i == nb == w):
            break
        w *= 4
    if base == len(rb):
        rb.clear()
    else:
        consume(starmap(rb.popleft, repeat((), base)), 0)
    if t is not None:
        k = len(log) - k0  # (one entry per packet)
        g[1] = t[5]; g[{dst}] = t[3]; g[{REG_REM}] = 0; m.data_mode = {mode}
        m.reps += S - S0 - 4 * k; P += k; H = t[6]
    return S, P, H
"""


# Compiled code by (kind, firmware image digest, what the code depends on, pc): emulators of
# the same firmware in one process share it (tests, debugger sessions, repeated runs)
_CODE: dict[tuple, tuple[CodeType, int]] = {}
_CODE_MAX = 100_000


def _code_key(proc: Processor, kind: str, pc: int) -> tuple:
    return (kind, proc.image_key, proc.gen, proc.meq is None, proc.is_me5, proc.lpac_cntl, pc,
            *sorted(k for k, on in FEATURES.items() if on))


def _remember(key: tuple, code: CodeType, n: int) -> tuple[CodeType, int]:
    if len(_CODE) >= _CODE_MAX:
        _CODE.clear()
    _CODE[key] = (code, n)
    codecache.note(key[1], key, _CODE[key])
    return _CODE[key]


def _from_disk(key: tuple, image_key: bytes) -> tuple[CodeType, int] | None:
    """The code of ``key`` from the disk cache (read once per image), when it is on."""
    if not codecache.enabled():
        return None
    _CODE.update(codecache.load(image_key))
    return _CODE.get(key)


# the fast path's optional parts (tests turn each off to compare; compiled code is keyed by
# them): cond_branches: a conditional branch keeps its condition in a local, its target a
# constant (else the general bt/nb bookkeeping); grouped_reads: see _grouped_reads;
# tail_pop: a waitin's delay slot that reads the header first pops it where it is found;
# nrt_copy, ib_copy: see CodeGen.nrt_copy, CodeGen.ib_copy; ctrl_inline: a cwrite of a
# control register without side effects writes it in place; ib_end: a waitin at the end of
# an IB takes its IN_IB_END in the compiled block (Processor.ib_end); addr_data: see
# _addr_then_data; const_addr: a constant written to $addr/$usraddr takes its branch only
FEATURES: dict[str, bool] = {"cond_branches": True, "grouped_reads": True, "tail_pop": True,
                             "nrt_copy": True, "ib_copy": True, "ctrl_inline": True,
                             "ib_end": True, "addr_data": True, "const_addr": True}
# a conditional branch's body (see CodeGen.body): "if COND: nb = TARGET"
_COND_BRANCH = re.compile(r"if (.+): nb = (-?\d+)")

_CONST = re.compile(r"\(?(?:0x[0-9a-f]+|[0-9]+)\)?")
_SET_ADDR = re.compile(r"if v_ <= 0xffff: m\.data_mode = ([01]); g\[(\d+)\] = v_")
_PURE_VALUE = re.compile(r"v_ = [^()]*")  # (no call: no register changes)


def _addr_then_data(lines: list[str]) -> list[str]:
    """An inlined write of $addr/$usraddr (CodeGen.body's) followed by an inlined $data
    write: the address register and offset the write uses are known in each of the first's
    branches (``r_``, ``o_``), instead of being looked up again."""
    out = list(lines)
    i = 0
    while i + 7 < len(out):
        mo = _SET_ADDR.fullmatch(out[i + 1])
        if (mo and _PURE_VALUE.fullmatch(out[i]) and out[i + 4].startswith("# ")
                and "m." not in out[i + 5] and _PURE_VALUE.fullmatch(out[i + 5])
                and out[i + 6] == f"r_ = {REG_USRADDR} if m.data_mode == {DATA_USRADDR} "
                                  f"else {REG_ADDR}"
                and out[i + 7] == "o_ = g[r_]"):
            mode, n = int(mo.group(1)), mo.group(2)
            pipe = f"elif not m.pipe_void[v_ >> 24]: m.data_mode = {DATA_PIPE}; g[{n}] = v_"
            if out[i + 2] == pipe and out[i + 3] == f"else: m.set_addr({n}, v_)":
                r = REG_USRADDR if mode == DATA_USRADDR else REG_ADDR
                out[i + 1] = f"{out[i + 1]}; o_ = v_; r_ = {r}"
                out[i + 2] = f"{pipe}; r_ = {REG_ADDR}; o_ = g[{REG_ADDR}]"
                out[i + 3] = (f"else: m.set_addr({n}, v_); r_ = {REG_USRADDR} if m.data_mode "
                              f"== {DATA_USRADDR} else {REG_ADDR}; o_ = g[r_]")
                del out[i + 6:i + 8]
        i += 1
    return out


_READ = [  # an inlined top-level $data read of the fast path (see CodeGen.body), temp {t}
    "if rb and not m.ib_level:",
    f"    {{t}} = rb.popleft(); g[{REG_REM}] = (g[{REG_REM}] - 1) & M",
    "else:",
    "    {t} = m.rd_data()",
]
# (set_addr and wr_data change neither @IB_LEVEL, the ring buffer nor $rem; with effects only
# recorded (fr) nothing else sees $rem meanwhile)
_UNSAFE = re.compile(rf"\breturn\b|\braise\b|\bm\.(?!set_addr\(|wr_data\()\w+\(|F\.get"
                     rf"|g\[{REG_REM}\]|\bpop_\b|\bhdr\b|\bwhile\b|\bfor\b")


def _grouped_reads(lines: list[str]) -> list[str]:
    """The block's first $data reads at once: where a block starts with K >= 2 top-level
    reads among statements that call nothing (but set_addr, wr_data), read no $rem and leave
    no way out, the statements up to the first other one run, when the ring buffer holds K
    words, @IB_LEVEL is 0 and effects are only recorded, with plain pops and one $rem
    update at their end (else as they are)."""
    groups: list[list[str]] = []
    for s in lines:
        if groups and (s[:1] == " " or s.startswith(("else:", "elif "))):
            groups[-1].append(s)
        else:
            groups.append([s])
    fast: list[str] = []
    k = cut = 0
    while cut < len(groups):
        grp = groups[cut]
        t = grp[1].split(" = ", 1)[0].strip() if len(grp) == 4 else ""
        if t and grp == [r.format(t=t) for r in _READ]:
            fast.append(f"{t} = rb.popleft()")
            k += 1
        elif not any(_UNSAFE.search(s) for s in grp):
            fast.extend(grp)
        else:
            break
        cut += 1
    if k < 2 or cut == len(groups):
        return lines
    rest = [s for grp in groups[cut:] for s in grp]
    slow = [s for grp in groups[:cut] for s in grp]
    return [f"if len(rb) >= {k} and not m.ib_level and fr:",
            *("    " + s for s in fast),
            f"    g[{REG_REM}] = (g[{REG_REM}] - {k}) & M",
            "else:",
            *("    " + s for s in slow),
            *rest]


# "S - 1 - 1 < L" (Python does not fold it): only before a comparison, where it is safe
_FOLD = re.compile(r"- (\d+) - (\d+) (?=[<>])")


def rep_limit(k: str, pc: int) -> str:
    """After a (rep) instruction at ``pc`` in a block: stop if its iterations used up the step
    budget (``k``: the steps the block counted for the instructions after it)."""
    return f"if m.steps > m.limit: m.steps -= {k}; m.pc = {pc + 1}; m.bt = None; return"


def _is_data_copy(name: str, f: dict) -> bool:
    """``(rep)[(xmovN)]mov $data, $data`` (an or/xor of $00 and $data into $data)."""
    return (name in ("or", "xor") and bool(f.get("REP")) and f.get("SRC1") == 0
            and f.get("SRC2") == REG_DATA and f.get("DST") == REG_DATA and not f.get("PEEK"))


def proc_plain(proc: Processor | None) -> bool:
    """Whether the fast path may inline ring-buffer reads and register writes (a6xx/a7xx)."""
    return proc is not None and proc.meq is None and not proc.is_me5


def _ends_block(proc: Processor, pc: int) -> bool:
    """Blocks stop where the image ends or at undecodable words (executed only if reached)."""
    if pc >= len(proc.image):
        return True
    try:
        proc.decode(pc)
    except EmulationError:
        return True
    return False


# the locals a block may use, as its first line sets them
_PROLOGUE = (("rb", "m.rb"), ("gpu", "m.gpu"), ("app", "m.fast_append"), ("fr", "m.fast_regs"),
             ("nm", "m.name"), ("jt", "m.jmptbl"), ("p4", "m.emu.pkt4_id"),
             ("ph", "m.emu.packet_hooks"), ("HD", "HEADERS"))
_LOCALS = re.compile(r"\b(rb|gpu|app|fr|nm)\b")
_CHANGED_BY_READS = f"{REG_REM}|{REG_ADDR}|{REG_USRADDR}"  # $data, $regdata reads change them
_PURE = re.compile(rf"0x[0-9a-f]+|[0-9]+|d[0-9]+|hdr|g\[(?!(?:{_CHANGED_BY_READS})\])[0-9]+\]")
_OPERAND = re.compile(r"\b[ab]\b")

# ALU semantics as source: inputs a, b, carry m.carry; output r
ALU_SRC: dict[str, list[str]] = {
    "add": ["t = a + b", "m.carry = t >> 32", "r = t & M"],
    "addhi": ["r = (a + b + m.carry) & M"],
    "sub": ["t = a - b", "m.carry = M if t < 0 else 0", "r = t & M"],
    "subhi": ["r = (a - b + m.carry) & M"],
    "and": ["r = a & b"],
    "or": ["r = a | b"],
    "xor": ["r = a ^ b"],
    "not": ["r = ~a & M"],
    "shl": ["r = (a << (b & 31)) & M"],
    "ushr": ["r = a >> (b & 31)"],
    "ishr": ["r = ((a - ((a & 0x80000000) << 1)) >> (b & 31)) & M"],
    "rot": ["s = b & 31", "r = ((a << s) | (a >> (32 - s))) & M if s else a"],
    "mul8": ["r = (a & 0xff) * (b & 0xff)"],
    "min": ["r = a if a < b else b"],
    "max": ["r = a if a > b else b"],
    "cmp": ["r = 0x00 if a > b else (0x2b if a == b else 0x1e)"],
    "bic": ["r = a & ~b & M"],
    "msb": ["r = a.bit_length() - 1 if a else 0"],
    "setbit": ["s = (b >> 1) & 31", "r = (a & ~(1 << s) & M) | ((b & 1) << s)"],
}
