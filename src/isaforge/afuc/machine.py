"""One afuc processor of the emulator, and the code generator that runs it.

Each instruction is decoded once and turned into Python source by :class:`CodeGen`. The same
source runs in two ways, so both give the same effects:

* the exact path: one compiled function per instruction, run by :meth:`Processor.step`,
  with optional Mesa-style trace bookkeeping (``tw``) and hooks;
* the fast path: straight-line runs of instructions (basic blocks, up to and including the
  delay slot of a branch) compiled into one function each, run by :meth:`Processor.run_fast`.
  A block that ends in ``waitin`` runs the delay slot and dispatches the next packet itself,
  and loops when that packet's handler is the block again (a stream of type-4 writes stays
  in one call). Step count, limit, packet count and the ring buffer live in locals (written
  back however the block ends; hooks called meanwhile see the counts of the block's start).
  ``(rep)(xmovN)mov $data, $data`` copies a whole packet of registers at once when its
  words are in the ring buffer and the registers plain. Compiled code is shared by the
  emulators of one firmware image in a process. Tests check both paths give the same
  effects, steps and registers.

Semantics follow the spec (``../shared/specs/adreno-afuc.rst``), not Mesa's emulator where the
two differ: the ``(xmovN)`` count is ``min(N, $rem)`` *after* the main ``$data`` read; extra
moves go to ``$00`` unless the destination is ``$data``/``$addr``/``$usraddr``; ``(rep)``
decrements ``$rem`` only when the iteration read no ``$data``; several memory writes in one
step all happen; ``msb`` uses its one source; ``swrite``/``sread`` use their register offset.
"""

from __future__ import annotations

import re
from array import array
from collections import deque
from collections.abc import Callable
from hashlib import blake2b
from itertools import repeat
from types import CodeType
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core.errors import EmulationError
from ..core.isa import sign_extend
from .isa import REG_ADDR, REG_DATA, REG_LR, REG_MEMDATA, REG_REGDATA, REG_REM, REG_USRADDR
from .stream import parse_header

if TYPE_CHECKING:
    from .emu import Emulator

M32 = 0xFFFFFFFF
STACK_DEPTH = 8
BRANCHES = {"brnei", "breqi", "brneb", "breqb", "call", "ret", "iret", "bl", "jumpa", "jumpr",
            "sret", "waitin"}
DATA_ADDR, DATA_USRADDR, DATA_PIPE = 0, 1, 2
SDS_KICK, SDS_PENDING, SDS_READY = 0x050, 0x051, 0x052  # a6xx control registers (SdsQueue)
BLOCK_MAX = 24  # longer blocks compile slower than they run faster (firmware paths branch)


class StepLimitError(EmulationError):
    """The firmware ran for more steps than allowed (a runaway loop)."""


class StreamEndError(EmulationError):
    """The firmware read past the end of the command stream, inside a packet."""


class Idle(Exception):  # noqa: N818 - a control-flow signal, not an error
    """Raised inside a step when the processor waits for a packet header that is not there."""


class RegionQueue:
    """An IB/SDS queue of the ROQ: ``dwords`` words read from GPU memory at ``addr``."""

    __slots__ = ("mem", "addr", "left")

    def __init__(self, mem: dict[int, int], addr: int, dwords: int) -> None:
        self.mem, self.addr, self.left = mem, addr, dwords

    def __len__(self) -> int:
        return self.left

    def peek(self) -> int | None:
        return self.mem.get(self.addr, 0) if self.left else None

    def pop(self) -> int | None:
        if not self.left:
            return None
        v = self.mem.get(self.addr, 0)
        self.addr += 4
        self.left -= 1
        return v


class SdsQueue:
    """The SDS queue of the a6xx ROQ: the IBs of the draw-state groups the firmware kicked,
    in kick order, read through ``$data`` at @IB_LEVEL 3.

    Not in the spec; inferred from the a630 SQE firmware (CP_SET_DRAW_STATE and the draw
    packets' routine that walks @DRAW_STATE_ACTIVE_BITMASK, and the preemption save/restore
    of the same registers). After selecting a group with @DRAW_STATE_SEL the firmware writes
    the group number to control register 0x050 (SDS_KICK): the hardware then fetches
    ``@DRAW_STATE_HDR & 0xffff`` dwords from @DRAW_STATE_BASE. Control register 0x052
    (SDS_READY) is the mask of groups with dwords still queued; 0x051 (SDS_PENDING) the mask
    of kicked groups not fetched yet, always 0 here as fetches complete at once. The
    firmware runs the queued packets with @IB_LEVEL 3 and ``waitin`` until SDS_READY is 0;
    an empty queue ends with IN_IB_END, as an IB does."""

    __slots__ = ("control", "groups", "mem", "ready")

    def __init__(self, mem: dict[int, int], control: np.ndarray, ready: int) -> None:
        self.mem, self.control, self.ready = mem, control, ready
        self.groups: deque[list[int]] = deque()  # [group, next address, dwords left]

    def kick(self, group: int, addr: int, dwords: int) -> None:
        if dwords:
            self.groups.append([group, addr, dwords])
            self.control[self.ready] = int(self.control[self.ready]) | 1 << group

    def __len__(self) -> int:
        return sum(g[2] for g in self.groups)

    def __iter__(self) -> Any:
        for _, addr, left in list(self.groups):
            for i in range(left):
                yield self.mem.get(addr + 4 * i, 0)

    def peek(self) -> int | None:
        return self.mem.get(self.groups[0][1], 0) if self.groups else None

    def pop(self) -> int | None:
        if not self.groups:
            return None
        g = self.groups[0]
        v = self.mem.get(g[1], 0)
        g[1] += 4
        g[2] -= 1
        if not g[2]:
            self.groups.popleft()
            mask = 0
            for other in self.groups:
                mask |= 1 << other[0]
            self.control[self.ready] = mask
        return v


class ListQueue(deque):
    """The ring buffer (fed packets) or the a5xx MEQ."""

    def peek(self) -> int | None:
        return self[0] if self else None

    def pop(self) -> int | None:  # type: ignore[override]
        return self.popleft() if self else None


class BootQueue:
    """The ROQ of a boot-code run (the disassembler finding the packet table, as Mesa's
    disassembler does): any ``$data`` read or peek gives 0 and marks the boot code finished."""

    __slots__ = ("finished",)

    def __init__(self) -> None:
        self.finished = False

    def __len__(self) -> int:
        return 0

    def peek(self) -> int:
        self.finished = True
        return 0

    pop = peek


class DrawState:
    """The draw-state RAM: 32 groups of header fields, base and SDS position."""

    def __init__(self) -> None:
        self.hdr = [0] * 32
        self.base = [[0, 0] for _ in range(32)]
        self.sds_base = [0] * 32
        self.sds_dwords = [0] * 32
        self.prev_sel = 0


class Processor:
    """An afuc core (SQE, BR, BV, LPAC, or a5xx PFP/ME) attached to an :class:`Emulator`."""

    __slots__ = ("_decoded", "_fast", "_fast_fn", "_slow", "base", "bootq", "bt", "c", "carry",
                 "control", "ctl_special", "data_mode", "db", "draw", "emu", "fast_append",
                 "fast_regs", "gen", "gpr", "gpu", "header", "ib", "ib_level", "image",
                 "image_key", "is_me5", "jmptbl",
                 "limit", "lpac_cntl", "meq", "name", "nreads", "nrt_addr", "nrt_data",
                 "packets", "pc", "pipe", "pipe_thresh", "rb", "sp_reg", "sqe", "stack0",
                 "steps", "tw", "waitin_pending", "midblock")

    def __init__(self, emu: Emulator, name: str, image: list[int], base: int) -> None:
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
        self.control = np.zeros(0x1000, dtype=np.uint32)
        self.sqe = np.zeros(0x100, dtype=np.uint32)
        self.pipe = np.zeros(0x100, dtype=np.uint32)
        self.jmptbl = [0] * 0x80
        self.draw = DrawState()
        self.rb = ListQueue()
        self.ib: dict[int, RegionQueue | SdsQueue] = {}
        self.meq: ListQueue | None = None  # an a5xx PFP forwards $data writes here
        self.ib_level = 0  # @IB_LEVEL & 3: which ROQ queue $data reads
        self.bootq: BootQueue | None = None  # set for a boot-code run: $data reads end it
        self.gpu = emu.gpu
        self.fast_regs = False  # effects are only recorded: the fast path may inline writes
        self.fast_append: Callable | None = None
        self.is_me5 = False  # a5xx ME: memory and register reads through GPU registers
        self.tw: Any = None  # trace bookkeeping (trace.TraceState) or None
        self.steps = 0
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
    def rd_ctrl(self, n: int) -> int:
        return int(self.control[n & 0xFFF])

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
                addr += 4
                self.wr_pipe(lo, addr & M32)
                self.wr_pipe(lo + 1, (addr >> 32) & M32)

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
        q = self.rb if self.ib_level == 0 and self.meq is None else self.queue()
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
            if self.db.pipe_reg_is_void(v >> 24):
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
                from .stream import pkt7_header

                lvl = int(self.control[self.c["IB_LEVEL"]]) & 3
                fake = ListQueue([pkt7_header(self.emu.ib_end_id, 0)])
                self.ib[lvl] = fake  # type: ignore[assignment]
                return fake[0]
            raise Idle
        return hdr

    def dispatch(self, hdr: int) -> None:
        got = _HEADERS.get(hdr)
        if got is None:
            try:
                h = parse_header(hdr)
            except EmulationError as e:
                raise type(e)(f"{self.name}: {e.message} (packet {self.packets + 1})") from None
            got = _HEADERS[hdr] = (h.type == 4, h.ident, h.count)
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
            for fn in hooks:
                fn(self, hdr)

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


_HEADERS: dict[int, tuple[bool, int, int]] = {}  # header -> (type 4?, id, count)


NEXT = "return F.get(m.pc) if m.bt is None and not m.waitin_pending else None"
LOOP = "@LOOP@"  # the end of a fast dispatch (next pc in p_): the block may loop
WAIT_DONE = "m.waitin_pending = False"


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
    rb_ready = False  # the next inlined $data read is known to find a word in the RB

    def wr_data_inline(self, expr: str) -> list[str]:
        """A $data write of a GPU register in the fast path, inlined; anything else (pipe
        registers, side effects, hooks) goes through :meth:`Processor.wr_data`."""
        lpac = self.proc.lpac_cntl if self.proc is not None else None
        return [
            f"v_ = {expr}",
            f"r_ = {REG_USRADDR} if m.data_mode == {DATA_USRADDR} else {REG_ADDR}",
            "o_ = g[r_]",
            f"if o_ <= 0xffff and o_ != {lpac if lpac is not None else -1} and fr:",
            "    g[r_] = o_ + 1; gpu[o_] = v_; app(('reg', o_, v_, nm))",
            "else:",
            "    m.wr_data(v_)",
        ]

    def body(self, name: str, f: dict, pc: int, traced: bool, branch_var: str) -> list[str]:
        """Lines executing the instruction once (a (rep) iteration); branches assign
        ``branch_var``; waitin sets ``m.waitin_pending``."""
        out: list[str] = []
        inline = not traced and proc_plain(self.proc)
        temps = iter(range(1 << 30))
        nested = [False]  # inside an (xmovN) move, whose reads are conditional
        self.top_read = False

        def rd(n: int, peek: bool = False) -> str:
            """A read; in the fast path a $data read from the ring buffer is inlined as
            statements before the line that uses it (only where it runs unconditionally)."""
            if n != REG_DATA or peek or not inline:
                return self.rd(n, peek)
            t = f"d{next(temps)}"
            if not nested[0]:
                self.top_read = True
            if self.rb_ready:  # the header waitin found (hdr) is the word this read takes
                self.rb_ready = False
                out.append("rb.popleft()")
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
            if not inline:
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
            elif n in (REG_ADDR, REG_USRADDR) and inline:
                mode = DATA_ADDR if n == REG_ADDR else DATA_USRADDR
                out.append(f"v_ = {expr}")
                out.append(f"if v_ <= 0xffff: m.data_mode = {mode}; g[{n}] = v_")
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
            if name == "cwrite":
                out.append("m.wr_ctrl(a, v)")
                for i in range(f.get("SDS", 0)):
                    out.append(f"v = {rd(f['SRC'])}")
                    out.append(f"if (a & 0xfff) == m.c['DRAW_STATE_SET_HDR']: m.ds_base({i}, v)")
            else:
                out.append("m.wr_sqe(a, v)")
        elif name in ("cread", "sread"):
            off = f.get("BASE", f.get("IMMED", 0))
            out.append(f"a = ({rd(f['OFFSET'])} + {off:#x}) & M")
            if f["PREINCREMENT"]:
                wr(f["OFFSET"], "a")
            out.append("r = m.rd_ctrl(a)" if name == "cread" else "r = int(m.sqe[a & 0xff])")
            wr(f["DST"], "r")
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
        out = [f"while g[{REG_REM}]:"]
        if fast:  # steps of the rest of the block are counted already: K of them
            inner = [f"if m.steps - @K@ >= m.limit: m.steps -= @K@; m.pc = {pc}; m.limit_hit()",
                     "m.steps += 1"]
        else:
            inner = ["if m.steps >= m.limit: m.limit_hit()", "m.steps += 1"]
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
            "    vs_ = [rb.popleft() for _ in range(R_)]",
            "    gpu[o_:o_ + R_] = array('I', vs_)",
            "    app.__self__.extend(zip(repeat('reg'), range(o_, o_ + R_), vs_, repeat(nm)))",
            f"    g[r_] = o_ + R_; g[{REG_REM}] = 0; m.steps += {its} - 1",
        ]

    @staticmethod
    def _make(code: CodeType, name: str, **extra: Any) -> Callable:
        ns: dict[str, Any] = {"M": M32, "HEADERS": _HEADERS, "array": array, "repeat": repeat,
                              **extra}
        exec(code, ns)  # noqa: S102 - our own generated code
        return ns[name]

    def _compile(self, src: str, name: str, **extra: Any) -> Callable:
        return self._make(compile(src, f"<afuc {name}>", "exec"), name, **extra)

    def compile_one(self, proc: Processor, pc: int) -> Callable:
        """The exact-path function of one instruction; trace bookkeeping runs when the
        ``tw`` argument is not None. Compiled once per firmware image (see _CODE)."""
        key = _code_key(proc, "step", pc)
        got = _CODE.get(key)
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
        got = _CODE.get(key)
        if got is None:
            src, n = self._block_source(proc, start)
            got = _remember(key, compile(src, "<afuc block>", "exec"), n)
        return self._make(got[0], "block", F=proc._fast_fn), got[1]

    def _block_source(self, proc: Processor, start: int) -> tuple[str, int]:
        self.proc = proc
        lines: list[str] = ["bt = None"]
        pc = start
        maybe_bt = False
        loops = has_branch = False
        n = 0
        while True:
            name, f, _ = proc.decode(pc)
            n += 1
            k_mark = f"@K{n}@"
            body = [s.replace("@K@", k_mark) for s in self.instr(name, f, pc, False, "nb", True)]
            lines.append(f"# {pc:#06x} {name}")
            if name == "waitin":
                lines.extend(body)
                if maybe_bt:
                    lines.append(f"m.pc = bt if bt is not None else {pc + 1}")
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
            if name in BRANCHES:
                has_branch = True
                lines.append("nb = None")
                lines.extend(body)
                if maybe_bt:
                    lines.append(f"if bt is not None: m.steps -= {k_mark}; m.pc = bt; m.bt = nb; "
                                 f"{NEXT}")
                lines.append("bt = nb")
                maybe_bt = True
            else:
                lines.extend(body)
                if maybe_bt:
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
                lines.append("m.bt = bt" if maybe_bt else "m.bt = None")
                lines.append(NEXT)
                break
        lines[:0] = [f"m.steps += {n}", f"if m.steps > m.limit: m.steps -= {n}; return None"]
        if not has_branch:
            lines.remove("bt = None")
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
        src = ("def block(m, g):\n"
               "    rb = m.rb; gpu = m.gpu; app = m.fast_append; fr = m.fast_regs; nm = m.name\n"
               "    jt = m.jmptbl; p4 = m.emu.pkt4_id; ph = m.emu.packet_hooks; HD = HEADERS\n"
               "    S = m.steps; L = m.limit; P = m.packets; H = m.header\n"
               "    try:\n" + body + "    finally:\n"
               "        m.steps = S; m.packets = P; m.header = H\n")
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
    out = [f"if m.ib_level or not rb or m.steps >= m.limit: {'; '.join(out)}; return",
           "hdr = rb[0]", WAIT_DONE, "m.steps += 1  @DS@"]
    gen.rb_ready = True
    try:
        slot = gen.body(name, f, pc + 1, False, "nb")
    finally:
        gen.rb_ready = False
    dec = f"g[{REG_REM}] = (g[{REG_REM}] - 1) & M"
    if sum(f"g[{REG_REM}]" in line for line in slot) == 1 and dec in slot:
        slot.remove(dec)  # $rem is set by the dispatch below before anything reads it
    out.extend(slot)
    slow = "m.STEPS = S; m.packets = P; m.header = H; m.dispatch(hdr); return F.get(m.pc)"
    out.append("try:")
    out.append("    h_ = HD[hdr]")
    out.append("except KeyError:")  # a header not seen yet: dispatch checks and records it
    out.append(f"    {slow}")
    out.append(f"if ph: {slow}")
    out.append("if h_[0]:")
    out.append("    p_ = jt[p4]")
    if slot and slot[-1] == "g[1] = hdr":  # the usual 'mov $01, $data': $01 is the header
        out.append("    g[1] = hdr & 0x07ffffff")
    else:
        out.append("    if g[1] == hdr: g[1] = hdr & 0x07ffffff")
    out.append("else:")
    out.append("    p_ = jt[h_[1]]")
    out.append(f"g[{REG_REM}] = h_[2]; P += 1; H = hdr")
    out.append(LOOP)
    return out


# Compiled code by (kind, firmware image digest, what the code depends on, pc): emulators of
# the same firmware in one process share it (tests, debugger sessions, repeated runs)
_CODE: dict[tuple, tuple[CodeType, int]] = {}
_CODE_MAX = 100_000


def _code_key(proc: Processor, kind: str, pc: int) -> tuple:
    return (kind, proc.image_key, proc.gen, proc.meq is None, proc.is_me5, proc.lpac_cntl, pc)


def _remember(key: tuple, code: CodeType, n: int) -> tuple[CodeType, int]:
    if len(_CODE) >= _CODE_MAX:
        _CODE.clear()
    _CODE[key] = (code, n)
    return _CODE[key]


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
