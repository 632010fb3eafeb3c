"""One afuc processor of the emulator (SQE, BR, BV, LPAC, a5xx PFP/ME): registers, the ROQ
it reads ``$data`` from, control-register side effects, packet dispatch, and the two ways it
runs the code :mod:`.codegen` generates for its instructions:

* the exact path: one compiled function per instruction, run by :meth:`Processor.step`,
  with optional Mesa-style trace bookkeeping (``tw``) and hooks;
* the fast path: compiled basic blocks run by :meth:`Processor.run_fast` (see
  :mod:`.codegen`). Tests check both paths give the same effects, steps and registers.

A processor is attached to a :class:`Host` (the :class:`~.emulator.Emulator`): GPU registers,
memory, effects and hooks are the host's, shared by its processors.

Semantics follow the spec (``../shared/specs/adreno-afuc.rst``), not Mesa's emulator where the
two differ: the ``(xmovN)`` count is ``min(N, $rem)`` *after* the main ``$data`` read; extra
moves go to ``$00`` unless the destination is ``$data``/``$addr``/``$usraddr``; ``(rep)``
decrements ``$rem`` only when the iteration read no ``$data``; several memory writes in one
step all happen; ``msb`` uses its one source; ``swrite``/``sread`` use their register offset.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from hashlib import blake2b
from typing import Any, Protocol

from ...core.errors import EmulationError
from ...core.hooks import Hook
from ...core.isa import ISA
from ..isa import REG_ADDR, REG_REM, REG_USRADDR
from ..regdb import RegDB
from .queues import BootQueue, ListQueue, RegionQueue, SdsQueue
from .stream import HEADERS, parse_header, pkt7_header

M32 = 0xFFFFFFFF
STACK_DEPTH = 8
DATA_ADDR, DATA_USRADDR, DATA_PIPE = 0, 1, 2  # where $data writes go: $addr, $usraddr, pipe
SDS_KICK, SDS_PENDING, SDS_READY = 0x050, 0x051, 0x052  # a6xx control registers (SdsQueue)
_IB_END: dict[int, int] = {}  # the header of the IN_IB_END an empty IB ends with, by packet id


class StepLimitError(EmulationError):
    """The firmware ran for more steps than allowed (a runaway loop)."""


class StreamEndError(EmulationError):
    """The firmware read past the end of the command stream, inside a packet."""


class Idle(Exception):  # noqa: N818 - a control-flow signal, not an error
    """Raised inside a step when the processor waits for a packet header that is not there."""


class Compiler(Protocol):
    """What turns a processor's instructions into functions (:class:`.codegen.CodeGen`)."""

    def compile_one(self, proc: Processor, pc: int) -> Callable[..., Any]: ...

    def compile_block(self, proc: Processor, start: int) -> tuple[Callable[..., Any], int]: ...


class Host(Protocol):
    """What a processor needs of the machine it is part of (the emulator)."""

    gen: int
    db: RegDB
    isa: ISA
    codegen: Compiler
    gpu: array  # the 64K GPU registers (uint32)
    mem: dict[int, int]  # GPU memory: byte address -> dword
    # effects: appended as (kind, addr, value, processor name) when only recorded, else
    # emitted (recorded and given to hooks); both None when nobody looks
    fast_append: Callable[[tuple], None] | None
    emit: Callable[[str, int, int, Processor], None] | None
    packet_hooks: list[Hook]  # the "packet" hooks (empty when none)
    pkt4_id: int  # the packet-table entry of type-4 packets
    ib_end_id: int | None  # the IN_IB_END packet an empty IB ends with

    def write_mem(self, addr: int, value: int, proc: Processor | None = None) -> None: ...

    def start_processor(self, parent: Processor, kind: str, value: int) -> None: ...


class DrawState:
    """The draw-state RAM: 32 groups of header fields, base and SDS position."""

    def __init__(self) -> None:
        self.hdr = [0] * 32
        self.base = [[0, 0] for _ in range(32)]
        self.sds_base = [0] * 32
        self.sds_dwords = [0] * 32
        self.prev_sel = 0


class Processor:
    """An afuc core (SQE, BR, BV, LPAC, or a5xx PFP/ME) attached to a :class:`Host`."""

    __slots__ = ("_decoded", "_fast", "_fast_fn", "_slow", "base", "bootq", "bt", "c", "carry",
                 "control", "ctl_special", "data_mode", "db", "draw", "emu", "fast_append",
                 "fast_regs", "gen", "gpr", "gpu", "header", "ib", "ib_level", "image",
                 "image_key", "insn_hooks", "is_me5", "jmptbl",
                 "limit", "lpac_cntl", "meq", "name", "nreads", "nrt_addr", "nrt_data",
                 "packets", "pc", "pipe", "pipe_thresh", "pipe_void", "rb", "replay", "sp_reg",
                 "sqe", "stack0",
                 "steps", "reps", "tw", "waitin_pending", "midblock")

    def __init__(self, emu: Host, name: str, image: list[int], base: int) -> None:
        self.emu = emu
        self.name = name
        self.gen = emu.gen
        self.db = emu.db
        self.image = image
        self.image_key = blake2b(array("I", image).tobytes(), digest_size=16).digest()
        self.base = base
        self.gpr = [0] * 32
        self.pc = 0
        self.carry = 0
        self.bt: int | None = None  # branch target taken after the next instruction
        self.waitin_pending = False
        self.nreads = 0
        self.data_mode = DATA_ADDR
        # uint32 arrays (array.array: item access costs a third of numpy's, and the CLI
        # starts without importing numpy)
        self.control = array("I", bytes(4 * 0x1000))
        self.sqe = array("I", bytes(4 * 0x100))
        self.pipe = array("I", bytes(4 * 0x100))  # (item access: a third of numpy's cost)
        self.jmptbl = [0] * 0x80
        self.draw = DrawState()
        self.rb = ListQueue()
        self.ib: dict[int, RegionQueue | SdsQueue] = {}
        self.meq: ListQueue | None = None  # an a5xx PFP forwards $data writes here
        self.ib_level = 0  # @IB_LEVEL & 3: which ROQ queue $data reads
        self.bootq: BootQueue | None = None  # set for a boot-code run: $data reads end it
        self.gpu = emu.gpu
        self.replay: Any = None  # the type-4 templates of traced runs (.replay.Type4Replay)
        self.fast_regs = False  # effects are only recorded: the fast path may inline writes
        self.fast_append: Callable | None = None
        self.is_me5 = False  # a5xx ME: memory and register reads through GPU registers
        self.tw: Any = None  # trace bookkeeping (trace.TraceState) or None
        self.insn_hooks: tuple[Hook, ...] = ()  # the host's "insn" hooks (see step_hooked)
        self.steps = 0  # instructions issued plus (rep) iterations past the first (the budget)
        self.reps = 0  # (rep) iterations past the first, less one per (rep) run 0 times
        self.midblock = False  # an error stopped a compiled block: pc is not exact
        self.limit = 1 << 62
        self.packets = 0
        self.header: int | None = None
        self._slow: dict[int, Callable] = {}
        self._fast: dict[int, tuple[Callable, int]] = {}
        self._fast_fn: dict[int, Callable] = {}  # the same blocks, for chaining
        self._decoded: dict[int, tuple] = {}
        c = {n: self.db.control_reg(n) for n in (
            "PACKET_TABLE_WRITE", "PACKET_TABLE_WRITE_ADDR", "REG_WRITE", "REG_WRITE_ADDR",
            "BV_CNTL", "LPAC_CNTL", "THREAD_SYNC", "MEM_READ_ADDR", "MEM_READ_DWORDS",
            "REG_READ_ADDR", "REG_READ_DWORDS", "LOAD_STORE_HI", "IB_LEVEL", "IB1_BASE",
            "IB1_DWORDS", "IB2_BASE", "IB2_DWORDS", "SDS_BASE", "SDS_DWORDS",
            "DRAW_STATE_SET_HDR", "DRAW_STATE_SEL", "DRAW_STATE_HDR", "DRAW_STATE_BASE",
            "DRAW_STATE_ACTIVE_BITMASK", "BV_INSTR_BASE", "LPAC_INSTR_BASE")}
        if self.gen == 5:  # a5xx numbers the Mesa database does not name
            c.update(PACKET_TABLE_WRITE_ADDR=0x033, PACKET_TABLE_WRITE=0x034,
                     REG_READ_DWORDS=0x012, REG_READ_ADDR=0x013)
        self.c = c
        self.sp_reg = self.db.sqe_reg("SP") or 5
        self.stack0 = self.db.sqe_reg("STACK0") or 8
        self.nrt_addr = self.db.pipe_reg("NRT_ADDR")
        self.nrt_data = self.db.pipe_reg("NRT_DATA")
        self.lpac_cntl = self.db.gpu_reg("CP_LPAC_SQE_CNTL")
        self.pipe_thresh = 0xFFFF if self.gen >= 6 else 0xFFFFFF
        # per pipe register: typed void (writing $addr alone triggers it; see set_addr)
        self.pipe_void = tuple(self.db.pipe_reg_is_void(n) for n in range(0x100))
        ctl_writes = {c[k] for k in ("PACKET_TABLE_WRITE", "REG_WRITE", "IB1_DWORDS",
                                     "IB2_DWORDS", "SDS_DWORDS", "DRAW_STATE_SET_HDR",
                                     "DRAW_STATE_SEL") if c[k] is not None}
        if self.gen == 6:  # the SDS queue is fed by kicks (SdsQueue), not by @SDS_DWORDS
            ctl_writes.add(SDS_KICK)
        if self.gen >= 7:
            ctl_writes |= {c["BV_CNTL"], c["LPAC_CNTL"]}
        if c["IB_LEVEL"] is not None:
            ctl_writes.add(c["IB_LEVEL"])
        self.ctl_special = ctl_writes

    # -- decoding ---------------------------------------------------------------------------
    def decode(self, pc: int) -> tuple:
        got = self._decoded.get(pc)
        if got is None:
            if not 0 <= pc < len(self.image):
                raise EmulationError(f"{self.name}: pc {pc:#06x} is outside the firmware "
                                     f"({len(self.image)} instructions)")
            word = self.image[pc]
            ins = self.emu.isa.match(word)
            if ins is None:
                if word >> 27 == 0:
                    got = ("nop", {}, word)
                else:
                    raise EmulationError(f"{self.name}: undecodable instruction {word:08x} "
                                         f"at pc {pc:#06x}")
            else:
                got = (ins.name, ins.field_values(word), word)
            self._decoded[pc] = got
        return got

    # -- register spaces --------------------------------------------------------------------
    def ctrl64(self, name: str) -> int:
        off = self.c.get(name)
        if off is None:
            return 0
        return int(self.control[off]) | int(self.control[off + 1]) << 32

    def wr_ctrl(self, n: int, v: int) -> None:
        n &= 0xFFF
        self.control[n] = v
        emu = self.emu
        if emu.fast_append is not None:
            emu.fast_append(("ctrl", n, v, self.name))
        elif emu.emit is not None:
            emu.emit("ctrl", n, v, self)
        if self.tw is not None:
            self.tw.ctrl.add(n)
        if n in self.ctl_special:
            self._ctrl_side_effect(n, v)

    def _ctrl_side_effect(self, n: int, v: int) -> None:
        c = self.c
        if n == c["IB_LEVEL"]:
            self.ib_level = v & 3
        elif n == c["PACKET_TABLE_WRITE"]:
            addr = int(self.control[c["PACKET_TABLE_WRITE_ADDR"]])
            if addr >= len(self.jmptbl):
                raise EmulationError(f"{self.name}: packet table write to entry {addr} "
                                     "(only 128 exist)")
            self.jmptbl[addr] = v
            self.wr_ctrl(c["PACKET_TABLE_WRITE_ADDR"], addr + 1)
        elif n == c["REG_WRITE"]:
            addr = int(self.control[c["REG_WRITE_ADDR"]])
            flags, reg = addr >> 16, addr & 0xFFFF
            self.wr_gpu(reg, v)
            self.wr_ctrl(c["REG_WRITE_ADDR"], ((reg + 1) & 0xFFFF) | (flags << 16))
        elif n == c["DRAW_STATE_SET_HDR"]:
            idx = (v >> 24) & 0x1F
            self.draw.hdr[idx] = (v & 0xFFFF) | (((v >> 20) & 7) << 16)
            mask_reg = c["DRAW_STATE_ACTIVE_BITMASK"]
            self.wr_ctrl(mask_reg, int(self.control[mask_reg]) | (1 << idx))
        elif n == c["DRAW_STATE_SEL"]:
            ds, idx = self.draw, v & 0x1F
            self.wr_ctrl(c["DRAW_STATE_HDR"], ds.hdr[idx])
            self.wr_ctrl(c["DRAW_STATE_BASE"], ds.base[idx][0])
            self.wr_ctrl(c["DRAW_STATE_BASE"] + 1, ds.base[idx][1])
            prev, sb = ds.prev_sel, c["SDS_BASE"]
            ds.sds_base[prev] = int(self.control[sb]) | int(self.control[sb + 1]) << 32
            ds.sds_dwords[prev] = int(self.control[c["SDS_DWORDS"]])
            self.wr_ctrl(sb, ds.sds_base[idx] & M32)
            self.wr_ctrl(sb + 1, ds.sds_base[idx] >> 32)
            self.wr_ctrl(c["SDS_DWORDS"], ds.sds_dwords[idx])
            ds.prev_sel = idx
        elif self.gen == 6 and n in (SDS_KICK, c["SDS_DWORDS"]):
            q = self.ib.get(3)
            if not isinstance(q, SdsQueue):  # (an IN_IB_END may stand in its place)
                q = self.ib[3] = SdsQueue(self.emu.mem, self.control, SDS_READY)
            if n == c["SDS_DWORDS"]:  # only records what the group has loaded
                return
            b = c["DRAW_STATE_BASE"]
            addr = int(self.control[b]) | int(self.control[b + 1]) << 32
            q.kick(v & 0x1F, addr, int(self.control[c["DRAW_STATE_HDR"]]) & 0xFFFF)
        elif n in (c["IB1_DWORDS"], c["IB2_DWORDS"], c["SDS_DWORDS"]):
            level = {c["IB1_DWORDS"]: 1, c["IB2_DWORDS"]: 2, c["SDS_DWORDS"]: 3}[n]
            base = int(self.control[n - 2]) | int(self.control[n - 1]) << 32
            self.ib[level] = RegionQueue(self.emu.mem, base, v)
        elif self.gen >= 7 and n == c["BV_CNTL"]:
            self.emu.start_processor(self, "BV", v)
        elif self.gen >= 7 and n == c["LPAC_CNTL"]:
            self.emu.start_processor(self, "LPAC", v)

    def wr_sqe(self, n: int, v: int) -> None:
        n &= 0xFF
        self.sqe[n] = v
        if self.tw is not None:
            self.tw.sqe.add(n)

    def wr_gpu(self, n: int, v: int) -> None:
        emu = self.emu
        emu.gpu[n] = v
        if emu.fast_append is not None:
            emu.fast_append(("reg", n, v, self.name))
        elif emu.emit is not None:
            emu.emit("reg", n, v, self)
        if self.tw is not None:
            self.tw.gpu.add(n)
        if n == self.lpac_cntl and self.c["THREAD_SYNC"] is not None:
            ts = self.c["THREAD_SYNC"]
            self.wr_ctrl(ts, int(self.control[ts]) | (1 << 1))
        elif self.is_me5 and n == 0x812:  # a5xx ME: NRT data (address in 0x810/0x811)
            addr = int(emu.gpu[0x810]) | int(emu.gpu[0x811]) << 32
            emu.write_mem(addr & ~3, v, self)
            if not addr & 3:
                addr += 4
                emu.gpu[0x810], emu.gpu[0x811] = addr & M32, addr >> 32

    def wr_pipe(self, n: int, v: int) -> None:
        self.pipe[n] = v
        emu = self.emu
        if emu.fast_append is not None:
            emu.fast_append(("pipe", n, v, self.name))
        elif emu.emit is not None:
            emu.emit("pipe", n, v, self)
        if self.tw is not None:
            self.tw.pipe.add(n)
        if n == self.nrt_data:
            lo = self.nrt_addr
            addr = int(self.pipe[lo]) | int(self.pipe[lo + 1]) << 32
            emu.write_mem(addr & ~3, v, self)
            if not addr & 3:  # a set low bit disables the auto-increment
                # the hardware's own increment: changed state (the trace shows it, as
                # Mesa's does), not a write of the firmware (no effect, no hook)
                addr += 4
                self.pipe[lo], self.pipe[lo + 1] = addr & M32, (addr >> 32) & M32
                if self.tw is not None:
                    self.tw.pipe.update((lo, lo + 1))

    # -- special GPRs -----------------------------------------------------------------------
    def queue(self) -> Any:
        if self.bootq is not None:
            return self.bootq
        if self.meq is not None and not self.is_me5:
            return self.rb
        if self.is_me5:
            return self.meq
        level = self.ib_level
        return self.rb if level == 0 else self.ib.get(level) or RegionQueue({}, 0, 0)

    def rd_data(self) -> int:
        level = self.ib_level
        if level == 0 and self.meq is None:
            q = self.rb  # (a boot-code run's is a BootQueue)
            v = q.popleft() if q.__class__ is ListQueue and q else q.pop()
        else:
            q = self.ib.get(level) if self.meq is None and self.bootq is None else None
            if q.__class__ is RegionQueue and q.left:  # an IB or SDS region (as its pop)
                v = q.mem.get(q.addr, 0)
                q.addr += 4
                q.left -= 1
            else:
                q = self.queue()
                v = q.popleft() if q.__class__ is ListQueue and q else q.pop()
        if v is None:
            raise StreamEndError(f"{self.name}: the command stream ended inside a packet "
                                 f"($rem = {self.gpr[REG_REM]})")
        self.nreads += 1
        self.gpr[REG_REM] = (self.gpr[REG_REM] - 1) & M32
        if self.tw is not None:
            self.tw.gpr.add(REG_REM)
        return v

    def peek_data(self) -> int:
        v = self.queue().peek()
        if v is None:
            raise StreamEndError(f"{self.name}: (peek) past the end of the command stream")
        return v

    def rd_memdata(self, peek: bool = False) -> int:
        if self.is_me5:
            gpu = self.emu.gpu
            dwords, addr = int(gpu[0x80F]), int(gpu[0x80D]) | int(gpu[0x80E]) << 32
            if dwords and not peek:
                gpu[0x80F], nxt = dwords - 1, addr + 4
                gpu[0x80D], gpu[0x80E] = nxt & M32, nxt >> 32
            return self.emu.mem.get(addr & ~3, 0)
        c = self.c
        da, aa = c["MEM_READ_DWORDS"], c["MEM_READ_ADDR"]
        dwords = int(self.control[da])
        addr = int(self.control[aa]) | int(self.control[aa + 1]) << 32
        if dwords and not peek:
            self.wr_ctrl(da, dwords - 1)
            self.wr_ctrl(aa, (addr + 4) & M32)
            self.wr_ctrl(aa + 1, ((addr + 4) >> 32) & M32)
        return self.emu.mem.get(addr & ~3, 0)

    def rd_regdata(self, peek: bool = False) -> int:
        if self.is_me5:  # a5xx ME reads the register at $addr directly
            a = self.gpr[REG_ADDR]
            if not peek:
                self.gpr[REG_ADDR] = (a + 1) & M32
            return int(self.emu.gpu[a & 0xFFFF])
        c = self.c
        da, aa = c["REG_READ_DWORDS"], c["REG_READ_ADDR"]
        dwords, addr = int(self.control[da]), int(self.control[aa])
        if dwords and not peek:
            self.wr_ctrl(da, dwords - 1)
            self.wr_ctrl(aa, addr + 1)
        return int(self.emu.gpu[addr & 0xFFFF])

    def set_addr(self, n: int, v: int) -> None:
        self.data_mode = DATA_ADDR if n == REG_ADDR else DATA_USRADDR
        self.gpr[n] = v
        if self.tw is not None:
            self.tw.gpr.add(n)
        if v > self.pipe_thresh:
            if self.pipe_void[v >> 24]:
                self.wr_pipe(v >> 24, 0)
            self.data_mode = DATA_PIPE

    def wr_data(self, v: int) -> None:
        if self.meq is not None and not self.is_me5:
            self.meq.append(v)
            return
        reg = REG_USRADDR if self.data_mode == DATA_USRADDR else REG_ADDR
        off = self.gpr[reg]
        if off > self.pipe_thresh:
            if not off & 0x40000:
                self.gpr[reg] = (off + 0x01000000) & M32
                if self.tw is not None:
                    self.tw.gpr.add(reg)
            self.wr_pipe(off >> 24, v)
        else:
            if not off & 0x40000:
                self.gpr[reg] = (off + 1) & M32
                if self.tw is not None:
                    self.tw.gpr.add(reg)
            self.wr_gpu(off & 0xFFFF, v)

    def ds_base(self, i: int, v: int) -> None:
        idx = (int(self.control[self.c["DRAW_STATE_SET_HDR"]]) >> 24) & 0x1F
        if i < 2:
            self.draw.base[idx][i] = v

    # -- memory ops -------------------------------------------------------------------------
    def ls_addr(self, low: int) -> int:
        hi = self.c["LOAD_STORE_HI"]
        return ((int(self.control[hi]) << 32) if hi is not None else 0) + low

    def load(self, addr: int) -> int:
        return self.emu.mem.get(addr & ~3, 0)

    def store(self, addr: int, v: int) -> None:
        self.emu.write_mem(addr & ~3, v, self)

    # -- stack ------------------------------------------------------------------------------
    def call(self, ret: int) -> None:
        sp = int(self.sqe[self.sp_reg])
        if sp >= STACK_DEPTH:
            raise EmulationError(f"{self.name}: call stack overflow (depth {STACK_DEPTH}) at pc "
                                 f"{self.pc:#06x}")
        self.wr_sqe(self.stack0 + sp, ret)
        self.wr_sqe(self.sp_reg, sp + 1)

    def ret(self) -> int:
        sp = int(self.sqe[self.sp_reg])
        if sp == 0:
            raise EmulationError(f"{self.name}: ret with an empty call stack")
        if sp > STACK_DEPTH:
            raise EmulationError(f"{self.name}: ret with a call stack pointer of {sp} (the "
                                 f"stack holds {STACK_DEPTH})")
        target = int(self.sqe[self.stack0 + sp - 1])
        self.wr_sqe(self.sp_reg, sp - 1)
        return target

    def limit_hit(self) -> None:
        raise StepLimitError(f"{self.name}: step limit of {self.limit} reached at pc "
                             f"{self.pc:#06x}" + (f" ($rem = {self.gpr[REG_REM]:#x})"
                                                  if self.gpr[REG_REM] else ""))

    # -- packet dispatch ----------------------------------------------------------------------
    def next_header(self) -> int:
        """The header ``waitin`` parses; an empty IB ends with a fake IN_IB_END packet."""
        q = self.queue()
        hdr = q.peek()
        if hdr is None:
            if isinstance(q, (RegionQueue, SdsQueue)) and self.emu.ib_end_id is not None:
                return self.ib_end()[0]
            raise Idle
        return hdr

    def ib_end(self) -> ListQueue:
        """Put the fake IN_IB_END packet an ended IB (or SDS queue) gives ``waitin`` in the
        place of the queue @IB_LEVEL reads; returns that one-header queue."""
        lvl = int(self.control[self.c["IB_LEVEL"]]) & 3
        end = self.emu.ib_end_id
        fake_hdr = _IB_END.get(end)  # type: ignore[arg-type]
        if fake_hdr is None:
            fake_hdr = _IB_END[end] = pkt7_header(end, 0)  # type: ignore[index,arg-type]
        fake = ListQueue([fake_hdr])
        self.ib[lvl] = fake  # type: ignore[assignment]
        return fake

    def alone_hint(self) -> str:
        """What to add to a bad-header error of an a5xx firmware run alone (as the ME): a
        PFP firmware run so reads the ME's packets, which is the likely cause."""
        if self.is_me5 and self.meq is self.rb:
            return ("; a5xx needs the ME firmware: this one runs alone as the ME; if it is "
                    "the PFP's (a530_pfp.fw), give the ME's with --me (a530_pm4.fw)")
        return ""

    def dispatch(self, hdr: int) -> None:
        got = HEADERS.get(hdr)
        if got is None:
            try:
                h = parse_header(hdr)
            except EmulationError as e:
                raise type(e)(f"{self.name}: {e.message} (packet {self.packets + 1})"
                              + self.alone_hint()) from None
            got = HEADERS[hdr] = (h.type == 4, h.ident, h.count)
        is4, ident, count = got
        g = self.gpr
        if is4:
            ident = self.emu.pkt4_id
            # the PKT4 handler shifts the register out of $01: the type and the parity bit
            # must go (Mesa clears only the type, so registers of even parity break there);
            # an a5xx PFP passes $01 on to the ME unchanged
            if g[1] == hdr and (self.meq is None or self.is_me5):
                g[1] = hdr & 0x07FFFFFF
        g[REG_REM] = count
        if self.tw is not None:
            self.tw.gpr.add(REG_REM)
        self.pc = self.jmptbl[ident]
        self.packets += 1
        self.header = hdr
        hooks = self.emu.packet_hooks
        if hooks:
            addr = 4 * self.pc
            for h in hooks:
                if h.covers(addr):
                    h.callback(self.emu, addr, hdr, self)

    # -- execution ----------------------------------------------------------------------------
    def _check_resumable(self) -> None:
        if self.midblock:
            raise EmulationError(f"{self.name}: an error stopped a compiled block, so the exact "
                                 "pc is unknown and the run cannot continue; run with "
                                 "exact=True to continue after errors")

    def step(self) -> None:
        """Execute one instruction (all (rep) iterations), exactly, with trace and hooks."""
        if self.midblock:
            self._check_resumable()
        pc = self.pc
        fn = self._slow.get(pc)
        if fn is None:
            fn = self._slow[pc] = self.emu.codegen.compile_one(self, pc)
        hdr = None
        if self.waitin_pending:
            hdr = self.next_header()  # raises Idle before anything changes
        bt, self.bt = self.bt, None
        wait, self.waitin_pending = self.waitin_pending, False
        tw = self.tw
        if tw is not None:
            tw.line(self, pc)
        try:
            fn(self, self.gpr, tw)
        except StreamEndError:
            # feed more and step again: the instruction restarts (what it read stays read)
            self.bt, self.waitin_pending = bt, wait
            raise
        self.pc = pc + 1 if bt is None else bt
        if wait:
            self.dispatch(hdr)  # type: ignore[arg-type]
        if tw is not None:
            tw.dump(self)

    def step_hooked(self) -> None:
        """:meth:`step`, calling the ``insn`` hooks first if the instruction is going to
        execute (kept apart so that :meth:`step` costs nothing more without hooks)."""
        if self.midblock:
            self._check_resumable()
        if self.waitin_pending:
            self.next_header()  # raises Idle before the hooks, as step() would (and the same
            # header is found again there: an ended IB's fake IN_IB_END stays in its place)
        addr = 4 * self.pc
        for h in self.insn_hooks:
            if h.covers(addr):
                h.callback(self.emu, addr, 4, self)
        self.step()

    def run_fast(self, max_steps: int) -> None:
        """Run blocks until idle or until ``steps`` reaches ``max_steps`` (then exact steps)."""
        self._check_resumable()
        self.limit = max_steps
        fast, codegen = self._fast, self.emu.codegen
        g = self.gpr
        while True:
            if self.waitin_pending and self.bt is None:
                if self.steps >= max_steps:
                    self.limit_hit()
                hdr = self.next_header()
                self.waitin_pending = False
                pc = self.pc
                fn = self._slow.get(pc)
                if fn is None:
                    fn = self._slow[pc] = codegen.compile_one(self, pc)
                fn(self, g, None)
                self.pc = pc + 1
                self.dispatch(hdr)
                continue
            if self.bt is not None or self.waitin_pending:
                if self.steps >= max_steps:
                    self.limit_hit()
                self.step()
                continue
            pc = self.pc
            got = fast.get(pc)
            if got is None:
                got = fast[pc] = codegen.compile_block(self, pc)
                self._fast_fn[pc] = got[0]
            fn, n = got
            if self.steps + n > max_steps:
                if self.steps >= max_steps:
                    self.limit_hit()
                self.step()
                continue
            try:
                while fn is not None:  # each block returns the next one when it is compiled
                    fn = fn(self, g)
            except EmulationError:
                self.midblock = True
                raise

