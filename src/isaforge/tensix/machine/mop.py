"""The MOP expander of one thread: MOP_CFG and MOP (templates 0 and 1).

It sits first in the thread's frontend: ``MOP_CFG`` sets the high 16 bits of the template-0
mask, ``MOP`` expands to a sequence of instruction words taken from the nine-word ``MopCfg``
(written by the RISC-V core, here the ``.mopcfg`` directive or :meth:`MopExpander.cfg`), and
everything else passes through. The expansion follows the ISA documentation's model,
including the documented hardware bug of template 1: with ``OuterCount == 1``, a NOP
``StartOp``, ``InnerCount == 0`` and a non-NOP ``EndOp0``, the outer loop runs 129 times.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

OP_NOP = 0x02
OP_MOP = 0x01
OP_MOP_CFG = 0x03


def is_nop(word: int) -> bool:
    """Plain NOP (opcode 0x02) only, not DMANOP nor SFPNOP."""
    return word >> 24 == OP_NOP


class MopExpander:
    """Per-thread MOP state: ``cfg`` (9 words) and the template-0 high mask."""

    def __init__(self) -> None:
        self.cfg = np.zeros(9, dtype=np.uint32)
        self.mask_hi = 0
        #: (MOP fields, mask_hi, cfg bytes) -> its expansion, as a kernel repeats its MOPs
        self._expansions: dict[tuple[int, int, bytes], tuple[int, ...]] = {}

    def feed(self, word: int) -> Sequence[int]:
        """The words that leave the expander for one incoming word."""
        op = word >> 24
        if op == OP_MOP_CFG:
            self.mask_hi = word & 0xFFFF
            return ()
        if op != OP_MOP:
            return (word,)
        key = (word & 0xFFFFFF, self.mask_hi, self.cfg.tobytes())
        out = self._expansions.get(key)
        if out is None:
            if word >> 23 & 1 == 0:
                mask = (self.mask_hi << 16) | (word & 0xFFFF)
                out = tuple(self.template0(mask, word >> 16 & 0x7F))
            else:
                out = tuple(self.template1())
            if len(self._expansions) >= 64:
                self._expansions.clear()
            self._expansions[key] = out
        return out

    def template0(self, mask: int, count1: int) -> list[int]:
        c = self.cfg.tolist()
        flags, insn_b, a0, a1, a2, a3, skip_a0, skip_b = c[1:9]
        has_b, has_a123 = flags & 1, flags & 2
        out: list[int] = []
        for _ in range(count1 + 1):
            if mask & 1 == 0:
                out.append(a0)
                if has_a123:
                    out += [a1, a2, a3]
                if has_b:
                    out.append(insn_b)
            else:
                out.append(skip_a0)
                if has_b:
                    out.append(skip_b)
            mask >>= 1
        return out

    def template1(self) -> list[int]:
        c = self.cfg.tolist()
        outer, inner = c[0] & 127, c[1] & 127
        start, end0, end1, loop_op, loop_op1, last0, last1 = c[2:9]
        flip = 0
        if not is_nop(loop_op1):
            flip = loop_op ^ loop_op1
            inner *= 2
        if outer == 1 and is_nop(start) and inner == 0 and not is_nop(end0):
            outer += 128  # the documented hardware bug
        out: list[int] = []
        for j in range(outer):
            if not is_nop(start):
                out.append(start)
            for i in range(inner):
                if i != inner - 1:
                    out.append(loop_op)
                elif j != outer - 1:
                    out.append(last1)
                else:
                    out.append(last0)
                loop_op ^= flip
            if not is_nop(end0):
                out.append(end0)
                if not is_nop(end1):
                    out.append(end1)
        return out


__all__ = ["MopExpander", "is_nop"]
