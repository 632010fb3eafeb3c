"""RV32 (I, M, Zicsr, Zaamo, Zba, Zbb and Tenstorrent's xttzbkb/xtttensixbh): the ISA of the
five RISC-V cores of a Blackhole Tensix tile, as a general-purpose package.

Python API (Capstone/Keystone/Unicorn style)::

    from isaforge import riscv
    for ins in riscv.disassemble(code, address=0x3ae0):   # core Instruction records
        print(f"{ins.address:x}", ins.mnemonic, ins.op_str)  # objdump's text
"""

from .disasm import decode, disassemble, listing
from .isa import ARCH, rv32_isa

__all__ = ["ARCH", "decode", "disassemble", "listing", "rv32_isa"]
