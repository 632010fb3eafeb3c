"""The RV32 disassembler: bytes in, :class:`isaforge.core.insn.Instruction` records out.

Text is what Tenstorrent's objdump prints (see :mod:`.isa`). A word nothing decodes prints
as objdump prints it, ``.insn 4, 0x12345678``. A ``.ttinsn`` word prints as
``.ttinsn 0x<Tensix word>`` (the assembler's syntax), unless a *coprocessor* formatter is
given: ``coprocessor(tensix_word) -> (mnemonic, op_str) | None`` (the Tensix package has
one; this package knows no Tensix instruction).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Iterator

from ..core.insn import Instruction
from .isa import FormatContext, rotr2, rv32_isa

Symbolizer = Callable[[int], "str | None"]
Coprocessor = Callable[[int], "tuple[str, str] | None"]


def decode(word: int, address: int = 0, symbols: Symbolizer | None = None,
           coprocessor: Coprocessor | None = None) -> Instruction:
    """One 32-bit instruction word at ``address``, as a record (never raises for data)."""
    isa = rv32_isa()
    ins = isa.match(word)
    if ins is None:
        op_str = f"4, 0x{word:08x}"
        return Instruction(address, 4, word, ".insn", op_str, f".insn\t{op_str}")
    vals = ins.field_values(word)
    if ins.name.startswith("ttinsn") and coprocessor is not None:
        got = coprocessor(rotr2(word))
        if got is not None:
            mnemonic, op_str = got
            text = f"{mnemonic}\t{op_str}" if op_str else mnemonic
            return Instruction(address, 4, word, mnemonic, op_str, text, ins.name, vals)
    mnemonic, op_str, text = isa.format_parts(ins, vals, FormatContext(address, symbols))
    return Instruction(address, 4, word, mnemonic, op_str, text, ins.name, vals)


def disassemble(data: bytes | bytearray | memoryview, address: int = 0,
                symbols: Symbolizer | None = None,
                coprocessor: Coprocessor | None = None) -> Iterator[Instruction]:
    """Every 32-bit word of ``data`` (little-endian), the first at ``address``; trailing
    bytes that make no whole word come out as ``.short``/``.byte`` data."""
    data = bytes(data)
    whole = len(data) - len(data) % 4
    for off, (word,) in zip(range(0, whole, 4), struct.iter_unpack("<I", data[:whole]),
                            strict=True):
        yield decode(word, address + off, symbols, coprocessor)
    off = whole
    if len(data) - off >= 2:
        v = int.from_bytes(data[off:off + 2], "little")
        yield Instruction(address + off, 2, v, ".short", f"0x{v:04x}", f".short\t0x{v:04x}")
        off += 2
    if off < len(data):
        v = data[off]
        yield Instruction(address + off, 1, v, ".byte", f"0x{v:02x}", f".byte\t0x{v:02x}")


def listing(instrs: Iterable[Instruction], verbose: bool = True) -> str:
    """objdump's layout: ``    3878:\\tfb010113          \\taddi\\tsp,sp,-80`` per line
    (without ``verbose``, only the instruction text)."""
    lines = []
    for ins in instrs:
        if verbose:
            raw = f"{ins.word:0{2 * ins.size}x}"
            lines.append(f"{ins.address:8x}:\t{raw:<18}\t{ins.text}")
        else:
            lines.append(ins.text)
    return "\n".join(lines) + ("\n" if lines else "")


__all__ = ["decode", "disassemble", "listing"]
