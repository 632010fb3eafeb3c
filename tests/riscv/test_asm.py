"""The assembler: pseudo-instructions, directives, labels, and errors with positions."""

from __future__ import annotations

import pytest

from isaforge.core.errors import AsmError
from isaforge.riscv import Assembler, assemble, disassemble


def texts(src: str, address: int = 0) -> list[str]:
    return [i.text for i in disassemble(assemble(src, address), address)]


@pytest.mark.parametrize(("value", "want"), [
    (5, ["li\ta0,5"]),
    (-2048, ["li\ta0,-2048"]),
    (0xFFFFFFFF, ["li\ta0,-1"]),  # a 32-bit pattern is a signed value
    (0x800, ["lui\ta0,0x1", "addi\ta0,a0,-2048"]),
    (0x12345678, ["lui\ta0,0x12345", "addi\ta0,a0,1656"]),
    (0xFFB00000, ["lui\ta0,0xffb00"]),  # low bits zero: lui alone
    (0x80000000, ["lui\ta0,0x80000"]),
    (0x7FFFFFFF, ["lui\ta0,0x80000", "addi\ta0,a0,-1"]),
])
def test_li(value: int, want: list[str]) -> None:
    assert texts(f"li a0, {value:#x}") == want


def test_li_la_call_tail_with_labels() -> None:
    src = """
    start:
        li a0, data
        la a1, data
        call func
        tail func
    func:
        ret
        .balign 16
    data:
        .word data, start
    """
    a = Assembler()
    code = a.assemble(src, 0x100)
    assert a.labels == {"start": 0x100, "func": 0x120, "data": 0x130}
    ins = list(disassemble(code, 0x100))
    assert [i.text for i in ins[:9]] == [
        "lui\ta0,0x0", "addi\ta0,a0,304", "auipc\ta1,0x0", "addi\ta1,a1,40",
        "auipc\tra,0x0", "jalr\t16(ra)", "auipc\tt1,0x0", "jr\t8(t1)", "ret"]
    assert [i.text for i in ins[9:12]] == ["nop"] * 3  # .balign pads code with nops
    assert [i.word for i in ins[12:]] == [0x130, 0x100]


def test_hi_lo_and_expressions() -> None:
    src = ".equ BASE, 0xFFB12345\nlui a0, %hi(BASE)\naddi a0, a0, %lo(BASE)\n" \
          "addi a1, a1, ((1 << 4) | 3)\naddi a2, a2, -(8 * 2)\n"
    assert texts(src) == ["lui\ta0,0xffb12", "addi\ta0,a0,837", "addi\ta1,a1,19",
                          "addi\ta2,a2,-16"]


def test_branch_targets_labels_dot_addresses_and_objdump_form() -> None:
    src = """
        beqz a0, done
        bgt a1, a2, done        # blt a2, a1
        bleu a1, a2, . + 8      # bgeu a2, a1
        j 0x10c
        jal 10c <done>          # objdump prints hex before <symbol>
    done:
        sgtu a3, a4, a5         # sltu a3, a5, a4
    """
    assert texts(src, 0x100) == [
        "beqz\ta0,0x114", "blt\ta2,a1,0x114", "bgeu\ta2,a1,0x110", "j\t0x10c",
        "jal\t0x10c", "sltu\ta3,a5,a4"]


def test_data_directives() -> None:
    code = assemble(".byte 1, 2\n.half 0x304\n.word -1\n.ttinsn 0x02000000\n.zero 3\n"
                    ".insn 4, 0x12345678\n.text\n.globl x\n")
    assert code == bytes([1, 2, 4, 3]) + b"\xff" * 4 + (0x08000000).to_bytes(4, "little") \
        + bytes(3) + (0x12345678).to_bytes(4, "little")


@pytest.mark.parametrize(("src", "message"), [
    ("nop\n  fooo a0, a1", "prog.s:2:3: error: unknown instruction 'fooo'"),
    ("add a0, a1, x99", "prog.s:1:13: error: expected a register, found 'x99'"),
    ("addi a0, a0, 5000", "prog.s:1:14: error: addi: 5000 does not fit the signed 12-bit "
                          "immediate (-2048..2047)"),
    ("slli a0, a0, 32", "prog.s:1:14: error: slli: 0x20 does not fit the 5-bit field"),
    ("beq a0, a1, nowhere", "prog.s:1:13: error: undefined label 'nowhere'"),
    ("x:\nx: nop", "prog.s:2:1: error: label 'x' is defined twice (first at prog.s:1:1)"),
    ("j 0x200000", "prog.s:1:3: error: jal: target 0x200000 is out of reach"),
    ("beq a0, a1, 3", "prog.s:1:13: error: beq: target 0x3 is odd"),
    (".ttinsn 0xc0000000", "prog.s:1:9: error: .ttinsn 0xc0000000: a Tensix instruction is "
                           "below 0xc0000000"),
    (".frob 3", "prog.s:1:1: error: unknown directive '.frob'"),
    ("lw a0, 4(a1", "prog.s:1:12: error: expected ')', found end of line"),
    ("li a0, 0x100000000", "prog.s:1:8: error: li: 0x100000000 does not fit 32 bits"),
    ("add a0, a1, a2 a3", "prog.s:1:16: error: expected end of statement, found 'a3'"),
    ("nop ; x", "prog.s:1:5: error: unexpected character ';'"),
])
def test_errors_say_where_and_what(src: str, message: str) -> None:
    with pytest.raises(AsmError) as e:
        assemble(src, 0, "prog.s")
    assert str(e.value).startswith(message), str(e.value)
