"""An afuc instruction executor: one SQE/PFP/ME core running microcode.

This is the part of the machine the disassembler needs to run firmware boot code (which is
how a6xx/a7xx firmware builds its packet jump table and finds its BV/LPAC sections). It
executes every instruction as the spec defines it (delay slots, ``(rep)``, ``(xmovN)``,
``(peek)``, the carry of ``add/sub``), with control, SQE, GPU and pipe register spaces and a
sparse memory. The emulator builds on it.
"""

from __future__ import annotations

from collections.abc import Callable

from ..core.errors import EmulationError
from ..core.isa import sign_extend
from .firmware import Firmware
from .isa import REG_ADDR, REG_DATA, REG_MEMDATA, REG_REGDATA, REG_REM, REG_USRADDR, isa_for
from .regdb import RegDB

MASK32 = 0xFFFFFFFF
INSTR_BASE = 0x10000  # where the executor places the firmware image in GPU memory
PROC_SQE, PROC_BV, PROC_LPAC = "SQE", "BV", "LPAC"


def _rotl(x: int, r: int) -> int:
    r &= 31
    return ((x << r) | (x >> (32 - r))) & MASK32 if r else x


def _msb(x: int) -> int:
    return x.bit_length() - 1 if x else 0


# ALU semantics: (src1, src2, carry) -> (result, new carry or None)
ALU_OPS: dict[str, Callable[[int, int, int], tuple[int, int | None]]] = {
    "add": lambda a, b, c: ((a + b) & MASK32, (a + b) >> 32),
    "addhi": lambda a, b, c: ((a + b + c) & MASK32, None),
    "sub": lambda a, b, c: ((a - b) & MASK32, MASK32 if a < b else 0),
    "subhi": lambda a, b, c: ((a - b + c) & MASK32, None),
    "and": lambda a, b, c: (a & b, None),
    "or": lambda a, b, c: (a | b, None),
    "xor": lambda a, b, c: (a ^ b, None),
    "not": lambda a, b, c: (~a & MASK32, None),
    "shl": lambda a, b, c: ((a << (b & 31)) & MASK32, None),
    "ushr": lambda a, b, c: (a >> (b & 31), None),
    "ishr": lambda a, b, c: ((sign_extend(a, 32) >> (b & 31)) & MASK32, None),
    "rot": lambda a, b, c: (_rotl(a, b), None),
    "mul8": lambda a, b, c: ((a & 0xFF) * (b & 0xFF), None),
    "min": lambda a, b, c: (min(a, b), None),
    "max": lambda a, b, c: (max(a, b), None),
    "cmp": lambda a, b, c: (0x00 if a > b else 0x2B if a == b else 0x1E, None),
    "bic": lambda a, b, c: (a & ~b & MASK32, None),
    "msb": lambda a, b, c: (_msb(a), None),
    "setbit": lambda a, b, c: ((a & ~(1 << (b >> 1 & 31)) | ((b & 1) << (b >> 1 & 31))) & MASK32,
                               None),
}


# immediate forms of the ALU operations ("setbiti" is the bit-number form of setbit, not one)
IMMEDIATE_ALU = {op + "i" for op in ALU_OPS} - {"setbiti"}


class Core:
    """One afuc processor: registers, the register spaces it reaches, and a step function."""

    def __init__(self, fw: Firmware, processor: str = PROC_SQE, image_offset: int = 1,
                 regdb: RegDB | None = None) -> None:
        self.fw = fw
        self.gen = fw.gen
        self.isa = isa_for(fw.gen)
        self.db = regdb or RegDB.for_variant(fw.variant)
        self.processor = processor
        # the instructions this core runs: the image from ``image_offset`` on
        self.instrs = fw.words[image_offset:]
        self.gpr = [0] * 32
        self.pc = 0
        self.carry = 0
        self.branch_target: int | None = None
        self.waitin = False
        self.control = [0] * 0x1000
        self.sqe = [0] * 0x1000
        self.pipe = [0] * 0x100
        self.gpu: dict[int, int] = {}
        self.mem: dict[int, int] = {}
        self.jmptbl = [0] * 0x80
        self.data_mode = "addr"
        self.bootstrap = False
        self.bootstrap_finished = False
        self.steps = 0
        self.step_limit: int | None = None  # each (rep) iteration counts as a step
        self._decoded: dict[int, tuple] = {}
        self._rem_consumed = False
        self._c = {n: self.db.control_reg(n) for n in (
            "PACKET_TABLE_WRITE", "PACKET_TABLE_WRITE_ADDR", "REG_WRITE", "REG_WRITE_ADDR",
            "BV_CNTL", "LPAC_CNTL", "THREAD_SYNC", "MEM_READ_ADDR", "MEM_READ_DWORDS",
            "REG_READ_ADDR", "REG_READ_DWORDS", "LOAD_STORE_HI", "BV_INSTR_BASE",
            "LPAC_INSTR_BASE")}
        self._g = {n: self.db.gpu_reg(n) for n in (
            "CP_SQE_INSTR_BASE", "CP_LPAC_SQE_INSTR_BASE", "CP_LPAC_SQE_CNTL")}
        self._p = {n: self.db.pipe_reg(n) for n in ("NRT_ADDR", "NRT_DATA")}
        self._reset()

    # -- reset ------------------------------------------------------------------------------
    def _reset(self) -> None:
        for i, w in enumerate(self.instrs):
            self.mem[INSTR_BASE + 4 * i] = w
        if self.processor == PROC_SQE:
            self.set_gpu64("CP_SQE_INSTR_BASE", INSTR_BASE)
        elif self.processor == PROC_BV:
            self.set_control64("BV_INSTR_BASE", INSTR_BASE)
        elif self.gen >= 7:
            self.set_control64("LPAC_INSTR_BASE", INSTR_BASE)
        else:
            self.set_gpu64("CP_LPAC_SQE_INSTR_BASE", INSTR_BASE)
        # what the real hardware presents at boot, per firmware (the boot code checks it)
        fwid = self.fw.fwid
        if fwid == 0x520:
            self.write_control(0, 7 << 28)
            self.write_control(2, 0x40 << 8)
        elif fwid in (0x730, 0x740, 0x512):
            self.write_control(0xEF, 1 << 21)
            self.write_control(0, 7 << 28)
        elif fwid == 0x6DD:
            self.write_control(0, 3 << 28)
        elif fwid == 0x6DC:
            self.write_control(0, 1 << 28)

    # -- register spaces ----------------------------------------------------------------------
    def _ctl(self, name: str) -> int:
        off = self._c.get(name)
        if off is None:
            raise EmulationError(f"control register {name} is unknown on {self.fw.variant}")
        return off

    def control64(self, name: str) -> int:
        off = self._ctl(name)
        return self.control[off] | (self.control[off + 1] << 32)

    def set_control64(self, name: str, value: int) -> None:
        off = self._ctl(name)
        self.write_control(off, value & MASK32)
        self.write_control(off + 1, value >> 32)

    def gpu64(self, name: str) -> int:
        off = self._g.get(name)
        if off is None:
            return 0
        return self.gpu.get(off, 0) | (self.gpu.get(off + 1, 0) << 32)

    def set_gpu64(self, name: str, value: int) -> None:
        off = self._g.get(name)
        if off is None:
            raise EmulationError(f"GPU register {name} is unknown on {self.fw.variant}")
        self.write_gpu(off, value & MASK32)
        self.write_gpu(off + 1, value >> 32)

    def write_control(self, n: int, val: int) -> None:
        n &= 0xFFF
        self.control[n] = val
        c = self._c
        if n == c["PACKET_TABLE_WRITE"]:
            addr = self.control[c["PACKET_TABLE_WRITE_ADDR"]]
            if addr >= len(self.jmptbl):
                raise EmulationError(f"packet table write to entry {addr} (only 128 exist)")
            self.jmptbl[addr] = val
            self.control[c["PACKET_TABLE_WRITE_ADDR"]] = addr + 1
        elif n == c["REG_WRITE"]:
            addr = self.control[c["REG_WRITE_ADDR"]]
            flags, reg = addr >> 16, addr & 0xFFFF
            self.write_gpu(reg, val)
            self.control[c["REG_WRITE_ADDR"]] = ((reg + 1) & 0xFFFF) | (flags << 16)
        elif self.gen >= 7 and n == c["BV_CNTL"] and c["THREAD_SYNC"] is not None:
            # what the BV boot code would do, so the BR boot code does not wait forever
            self.control[c["THREAD_SYNC"]] &= ~(1 << 1)
        elif self.gen >= 7 and n == c["LPAC_CNTL"] and c["THREAD_SYNC"] is not None:
            self.control[c["THREAD_SYNC"]] &= ~(1 << 2)

    def write_gpu(self, n: int, val: int) -> None:
        self.gpu[n] = val & MASK32
        if n == self._g["CP_LPAC_SQE_CNTL"] and self._c["THREAD_SYNC"] is not None:
            self.control[self._c["THREAD_SYNC"]] |= 1 << 1

    def write_pipe(self, n: int, val: int) -> None:
        self.pipe[n] = val
        if n == self._p["NRT_DATA"]:
            off = self._p["NRT_ADDR"]
            addr = self.pipe[off] | (self.pipe[off + 1] << 32)
            self.mem[addr] = val
            addr += 4
            self.pipe[off], self.pipe[off + 1] = addr & MASK32, addr >> 32

    # -- GPRs and FIFOs -------------------------------------------------------------------------
    def read_gpr(self, n: int, peek: bool = False) -> int:
        if n == 0:
            return 0
        if n == REG_MEMDATA:
            c = self._c
            dwords, addr = self.control[c["MEM_READ_DWORDS"]], self.control64("MEM_READ_ADDR")
            if dwords and not peek:
                self.control[c["MEM_READ_DWORDS"]] = dwords - 1
                self.set_control64("MEM_READ_ADDR", addr + 4)
            return self.mem.get(addr, 0)
        if n == REG_REGDATA:
            c = self._c
            dwords, addr = self.control[c["REG_READ_DWORDS"]], self.control[c["REG_READ_ADDR"]]
            if dwords and not peek:
                self.control[c["REG_READ_DWORDS"]] = dwords - 1
                self.control[c["REG_READ_ADDR"]] = addr + 1
            return self.gpu.get(addr, 0)
        if n == REG_DATA:
            return self.read_data(peek)
        return self.gpr[n]

    def read_data(self, peek: bool) -> int:
        """The next packet word. During boot this ends the boot sequence."""
        if self.bootstrap:
            self.bootstrap_finished = True
            return 0
        raise EmulationError("no packet stream is attached to this core")

    def write_gpr(self, n: int, val: int) -> None:
        val &= MASK32
        if n in (REG_ADDR, REG_USRADDR):
            self.data_mode = "addr" if n == REG_ADDR else "usraddr"
            self.gpr[n] = val
            if val > 0xFFFF:
                if self.db.pipe_reg_is_void(val >> 24):
                    self.write_pipe(val >> 24, 0)
                self.data_mode = "pipe"
        elif n == REG_DATA:
            reg = REG_USRADDR if self.data_mode == "usraddr" else REG_ADDR
            regoff = self.gpr[reg]
            if regoff > 0xFFFF:
                if not regoff & 0x40000:
                    self.gpr[reg] = (regoff + 0x01000000) & MASK32
                self.write_pipe(regoff >> 24, val)
            else:
                self.gpr[reg] = regoff + 1
                self.write_gpu(regoff, val)
        elif n != 0:
            self.gpr[n] = val

    # -- execution ----------------------------------------------------------------------------
    def decode_at(self, pc: int) -> tuple:
        got = self._decoded.get(pc)
        if got is None:
            if not 0 <= pc < len(self.instrs):
                raise EmulationError(f"pc {pc:#06x} is outside the firmware ({len(self.instrs)} "
                                     "instructions)")
            word = self.instrs[pc]
            ins = self.isa.match(word)
            if ins is None:
                if word >> 27 == 0:  # a NOP carrying a payload
                    got = ("nop", {}, word)
                else:
                    raise EmulationError(f"undecodable instruction {word:08x} at pc {pc:#06x}")
            else:
                got = (ins.name, ins.field_values(word), word)
            self._decoded[pc] = got
        return got

    def step(self) -> None:
        name, f, _ = self.decode_at(self.pc)
        branch_target, self.branch_target = self.branch_target, None
        if f.get("REP"):
            while self.gpr[REG_REM]:
                self._check_limit()
                self._rem_consumed = False
                self.execute(name, f)
                if not self._rem_consumed:
                    self.gpr[REG_REM] = (self.gpr[REG_REM] - 1) & MASK32
                self.steps += 1
        else:
            self._check_limit()
            self.execute(name, f)
            self.steps += 1
        self.pc += 1
        if branch_target is not None:
            self.pc = branch_target

    def _address(self, f: dict) -> int:
        """``$OFFSET + immediate`` of a control/SQE/memory access, written back to
        ``$OFFSET`` in pre-increment mode."""
        reg = (self.read_gpr(f["OFFSET"]) + f.get("BASE", f.get("IMMED", 0))) & MASK32
        if f["PREINCREMENT"]:
            self.write_gpr(f["OFFSET"], reg)
        return reg

    def _mem_addr(self, low: int) -> int:
        """A load/store address: the high half comes from @LOAD_STORE_HI."""
        return (self.control[self._ctl("LOAD_STORE_HI")] << 32) + low

    def _check_limit(self) -> None:
        if self.step_limit is not None and self.steps >= self.step_limit:
            raise EmulationError(
                f"step limit of {self.step_limit} reached at pc {self.pc:#06x}"
                + (f" ($rem = {self.gpr[REG_REM]:#x} in a (rep) loop)" if self.gpr[REG_REM]
                   else ""))

    def _src2(self, f: dict) -> int:
        if "RIMMED" in f:
            return f["RIMMED"]
        if "IMMED" in f:
            return f["IMMED"]
        return self.read_gpr(f["SRC2"], bool(f.get("PEEK")))

    def execute(self, name: str, f: dict) -> None:  # noqa: C901 - a dispatch table in code
        op = name[:-1] if name in IMMEDIATE_ALU else name
        if op in ALU_OPS:
            if op in ("not", "msb") and "SRC1" in f:
                a = self.read_gpr(f["SRC1"])
                b = 0
            elif op == "not":
                a, b = f["IMMED"], 0
            else:
                a = self.read_gpr(f["SRC1"])
                b = self._src2(f)
            res, carry = ALU_OPS[op](a, b, self.carry)
            if carry is not None:
                self.carry = carry & MASK32 if op == "sub" else carry
            self.write_gpr(f["DST"], res)
            if f.get("XMOV"):
                self._xmov(f)
            return
        if name == "movi":
            self.write_gpr(f["DST"], (f["RIMMED"] << f["SHIFT"]) & MASK32)
        elif name in ("setbiti", "clrbit"):
            src = self.read_gpr(f["SRC"])
            bit = 1 << f["BIT"]
            self.write_gpr(f["DST"], src | bit if name == "setbiti" else src & ~bit)
        elif name == "ubfx":
            lo, hi = f["LO"], f["HI"]
            width = max(hi - lo + 1, 0)
            self.write_gpr(f["DST"], (self.read_gpr(f["SRC"]) >> lo) & ((1 << width) - 1))
        elif name == "bfi":
            lo, hi = f["LO"], f["HI"]
            width = max(hi - lo + 1, 0)
            ins = (self.read_gpr(f["SRC"]) & ((1 << width) - 1)) << lo
            self.write_gpr(f["DST"], self.read_gpr(f["DST"]) | ins)
        elif name in ("cwrite", "swrite", "store"):
            val = self.read_gpr(f["SRC"])
            reg = self._address(f)
            if name == "cwrite":
                self.write_control(reg, val)
                for _ in range(f.get("SDS", 0)):
                    self.read_gpr(f["SRC"])
            elif name == "swrite":
                self.sqe[reg & 0xFFF] = val
            else:
                self.mem[self._mem_addr(reg)] = val
        elif name in ("cread", "sread", "load"):
            reg = self._address(f)
            if name == "cread":
                val = self.control[reg & 0xFFF]
            elif name == "sread":
                val = self.sqe[reg & 0xFFF]
            else:
                val = self.mem.get(self._mem_addr(reg), 0)
            self.write_gpr(f["DST"], val)
        elif name in ("brnei", "breqi", "brneb", "breqb"):
            src = self.read_gpr(f["SRC"])
            target = self.pc + sign_extend(f["OFFSET"], 16)
            if name == "brnei":
                taken = src != f["IMMED"]
            elif name == "breqi":
                taken = src == f["IMMED"]
            elif name == "brneb":
                taken = not src & (1 << f["BIT"])
            else:
                taken = bool(src & (1 << f["BIT"]))
            if taken:
                self.branch_target = target
        elif name == "call":
            sp = self.sqe[self.db.sqe_reg("SP")]
            stack0 = self.db.sqe_reg("STACK0")
            if sp >= 8:
                raise EmulationError(f"call stack overflow at pc {self.pc:#06x}")
            self.sqe[stack0 + sp] = self.pc + 2
            self.sqe[self.db.sqe_reg("SP")] = sp + 1
            self.branch_target = f["TARGET"]
        elif name in ("ret", "iret"):
            sp = self.sqe[self.db.sqe_reg("SP")]
            if sp == 0:
                raise EmulationError(f"{name} with an empty call stack at pc {self.pc:#06x}")
            self.branch_target = self.sqe[self.db.sqe_reg("STACK0") + sp - 1]
            self.sqe[self.db.sqe_reg("SP")] = sp - 1
        elif name == "bl":
            self.gpr[0x1B] = self.pc + 2
            self.branch_target = f["TARGET"]
        elif name == "jumpa":
            self.branch_target = f["TARGET"]
        elif name == "jumpr":
            self.branch_target = self.read_gpr(f["SRC1"])
        elif name == "sret":
            self.branch_target = self.gpr[0x1B]
        elif name == "waitin":
            self.waitin = True
        elif name in ("nop", "setsecure"):
            pass
        else:
            raise EmulationError(f"cannot execute {name} at pc {self.pc:#06x}")

    def _xmov(self, f: dict) -> None:
        m = min(f["XMOV"], self.gpr[REG_REM])
        dst = f["DST"]
        special = dst in (REG_DATA, REG_ADDR, REG_USRADDR)
        data_dst = REG_DATA if special else 0
        src2 = f.get("SRC2", 0)
        dests = {1: [data_dst], 2: [data_dst, data_dst], 3: [data_dst, dst, data_dst]}[m] if m \
            else []
        for d in dests:
            self.write_gpr(d, self.read_gpr(src2))

    def run_bootstrap(self, max_steps: int = 200_000) -> None:
        """Run the boot code until it waits for the first packet (or reads one)."""
        self.bootstrap = True
        self.bootstrap_finished = False
        if self.gen == 6 and self.processor == PROC_LPAC and self._c["THREAD_SYNC"] is not None:
            self.control[self._c["THREAD_SYNC"]] = 1
        self.step_limit = max_steps
        try:
            while not self.bootstrap_finished and not self.waitin:
                self.step()
        except EmulationError as e:
            raise EmulationError(f"the {self.processor} boot code did not reach waitin: "
                                 f"{e.message}") from None
        finally:
            self.bootstrap = False
            self.step_limit = None
