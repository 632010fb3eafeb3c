"""RV32 (I, M, Zicsr, Zaamo, Zba, Zbb and Tenstorrent's xttzbkb/xtttensixbh): the ISA of the
five RISC-V cores of a Blackhole Tensix tile, as a general-purpose package.

Python API (Capstone/Keystone/Unicorn style)::

    from isaforge import riscv
    code = riscv.assemble("li a0, 5\nebreak\n", address=0x100)     # bytes
    for ins in riscv.disassemble(code, address=0x100):            # core Instruction records
        print(f"{ins.address:x}", ins.mnemonic, ins.op_str)         # objdump's text
    space = riscv.AddressSpace("core")
    space.map_ram(0, l1)                                 # numpy uint8 array, shared
    space.map_mmio(0xFFB20000, 0x10000, read, write)     # read(addr, size), write(addr, size, v)
    hart = riscv.Hart("brisc", space, pc=0x100)
    hart.run(1_000_000)                                  # -> StopReason
"""

from .asm import Assembler, assemble
from .disasm import decode, disassemble, listing
from .isa import ARCH, rv32_isa
from .machine import (
    AddressSpace,
    Hart,
    IllegalInstruction,
    MapError,
    MemoryAccessError,
    RiscvError,
    StopReason,
)

__all__ = [
    "ARCH",
    "AddressSpace",
    "Assembler",
    "Hart",
    "IllegalInstruction",
    "MapError",
    "MemoryAccessError",
    "RiscvError",
    "StopReason",
    "assemble",
    "decode",
    "disassemble",
    "listing",
    "rv32_isa",
]
