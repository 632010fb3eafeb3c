"""The VP dialect of T-Language: a recursive-descent parser that generates code as it parses.

The generated code is that of the upstream ``theia_vp_compile`` (freecores/theia_gpu,
beta_2.0), instruction for instruction, because programs and the RTL regressions depend on it.
That compiler emits code from its grammar actions, in the order an LALR parser reduces, and
keeps a few counters across statements; we keep the same state and the same order:

* declarations are right-recursive: in ``vector a, b = (1,2,3), c;`` the last name gets the
  first register (R10 upwards; R129 upwards inside a thread) and initialisers are emitted
  from the last to the first; function parameters are numbered the same way (R4 upwards),
  and call arguments are copied into them last to first after all are evaluated;
* an expression result lives in a temporary register (frame top + 1, + 2, ...) until the
  statement that uses it retargets its last instruction;
* the count of instructions emitted by expressions is reset only by assignments and
  ``return``: an expression inside a condition or a call argument list leaves it set, and the
  next assignment then patches the branch (or call) instruction instead of emitting one.
  ``theia_vp_compile`` does exactly this (see test_expressions in the regressions); we
  reproduce it so that the output is identical, and document it as an upstream defect.

Other upstream behaviours reproduced on purpose (each visible in the regressions or a direct
consequence of the same rules): nested ``while`` loops share one "loop start" (the inner loop's
start is where the outer loop jumps back to); ``return NAME;`` returns the constant whose hex
digits spell NAME's last token; ``scale(Rn)`` / ``unscale(Rn)`` read R0; ``x = array[i];``
ignores the index; the frame size pushed by a call counts names, not registers.

Extensions over the upstream grammar (the manual's language): ``v.x`` as a source means
``v.xxx``; ``a.xy = ...`` on variables; ``v -= constant``; ``for (init; cond; step) {...}``;
``vector v.x = c;`` and ``vector v = c;``; negative literals and ``-v``; ``scale(expr)`` and
``unscale(expr)``; a thread started before its definition; signs in a swizzle by result lane
(see the package docstring, with the pointers the compiler refuses).
"""

from __future__ import annotations

from ..preprocess import Preprocessed
from ..vpinstr import (
    ADD,
    CONTROL_REG0,
    FRAME_REG,
    WE_X,
    WE_XYZ,
    WE_Y,
    WE_Z,
    VpInstr,
)
from .declarations import VpDeclarations
from .expressions import VpExpressions
from .flow import VpFlow
from .statements import VpStatements


class VpCompiler(VpStatements, VpFlow, VpDeclarations, VpExpressions):
    """Parses a preprocessed VP program and generates its instructions (each part of the
    job in its module: expressions, declarations, statements, flow; the state in .base)."""

    def compile(self) -> list[VpInstr]:
        self.prologue()
        while not self.at("EOF"):
            self.statement()
        self.resolve_thread_starts()
        return self.code

    def prologue(self) -> None:
        for lane, (we, value) in enumerate(((WE_X, 0), (WE_Y, 1), (WE_Z, 2))):
            ins = VpInstr(comment="Make sure R0 has the appropiate values (0,1,2)" if lane == 0
                          else "")
            ins.set_code(ADD)
            ins.set_dest(0)
            ins.set_imm(value)
            ins.dest_zero(True)
            ins.set_we(we)
            self.emit(ins)
        ins = VpInstr(comment="Disable multi-threading by default")
        ins.set_code(ADD)
        ins.set_dest(CONTROL_REG0)
        ins.set_imm(0)
        ins.dest_zero(True)
        ins.set_we(WE_Z)
        self.emit(ins)
        ins = VpInstr(comment="Make sure R3 (Frame Offset) is initialized to zero")
        ins.set_code(ADD)
        ins.set_dest(FRAME_REG)
        ins.set_imm(0)
        ins.dest_zero(True)
        ins.set_we(WE_XYZ)
        self.emit(ins)


def compile_tokens(pre: Preprocessed) -> VpCompiler:
    """Compile a preprocessed VP program: ``.code``, ``.symbols``, ``.warnings``."""
    c = VpCompiler(pre)
    c.compile()
    return c


__all__ = ["VpCompiler", "compile_tokens"]
