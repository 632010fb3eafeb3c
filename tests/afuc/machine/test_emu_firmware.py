"""Our own small firmware programs, assembled with our assembler, run on the emulator.

The programs run as boot code (from the image start); words the test feeds are read from the
ring buffer with ``$data``. Expected values are written from the spec's definitions.
"""

from __future__ import annotations

import pytest

from isaforge.afuc import Emulator, assemble
from isaforge.core.errors import EmulationError

M = 0xFFFFFFFF
A6, A7 = "[016ee001]\n", "[01730001]\n"
END = "waitin\nmov $01, $data\n"


def run(src: str, feed: list[int] | None = None, exact: bool = False) -> Emulator:
    emu = Emulator(assemble(src))
    if feed:
        emu.feed(feed)
    assert emu.run(max_steps=10_000, exact=exact) == "idle"
    return emu


def regs(emu: Emulator, *ns: int) -> list[int]:
    return [emu.read_gpr(n) for n in ns]


@pytest.mark.parametrize("exact", [False, True])
def test_alu_ops_a6xx(exact):
    src = A6 + """
mov $02, 0x30
msb $03, $02
mov $04, 0xffff << 16
or $04, $04, 0xffff
and $05, $04, 0x0f0f
xor $06, $04, $02
not $07, $02
mov $08, 0x1
shl $09, $02, 0x0
shl $0a, $08, 0x1f
ushr $0b, $04, 0x1f
ushr $0c, $02, 0x0
ishr $0d, $0a, 0x1f
rot $0e, $0a, 0x1
mul8 $0f, $04, $02
min $10, $02, $08
max $11, $02, $08
cmp $12, $02, $08
cmp $13, $08, $02
cmp $14, $02, $02
setbit $15, $00, b7
clrbit $16, $04, b0
msb $17, $00
msb $18, $0a
""" + END
    emu = run(src, exact=exact)
    a, ones = 0x30, M
    assert regs(emu, *range(3, 0x19)) == [
        5, ones, 0x0F0F, ones ^ a, ~a & M, 1, a, 0x80000000, 1, a, M, 1, 0xFF * a, 1, a,
        0x00, 0x1E, 0x2B, 0x80, M - 1, 0, 31]


@pytest.mark.parametrize("exact", [False, True])
def test_carry_chains(exact):
    # 64-bit add 0x1_ffffffff + 0x1 and 64-bit sub 0x1_00000000 - 0x1, via add/addhi, sub/subhi
    src = A6 + """
mov $02, 0xffff << 16
or $02, $02, 0xffff
mov $03, 0x1
add $04, $02, 0x1
addhi $05, $03, $00
add $06, $03, $03
addhi $07, $00, $00
sub $08, $00, 0x1
subhi $09, $03, $00
sub $0a, $03, $00
subhi $0b, $03, $00
""" + END
    emu = run(src, exact=exact)
    assert regs(emu, *range(4, 0xC)) == [0, 2, 2, 0, M, 0, 1, 1]


@pytest.mark.parametrize("exact", [False, True])
def test_rep_and_xmov_and_peek(exact):
    src = A6 + """
mov $rem, 0x3
mov $02, 0x0
(rep)add $02, $02, 0x5
mov $addr, 0x8801
mov $rem, 0x2
(xmov1)mov $data, $data
mov $addr, 0x8810
mov $rem, 0x3
(xmov2)mov $data, $data
mov $rem, 0x4
(xmov3)mov $usraddr, $data
mov $rem, 0x3
(xmov2)mov $05, $data
mov $rem, 0x1
(xmov3)mov $06, $data
(peek)mov $07, $data
mov $08, $data
mov $09, $rem
""" + END
    words = [0x11, 0x22, 0xA, 0xB, 0xC, 0x8820, 0x1, 0x8821, 0x2, 0x50, 0x51, 0x52, 0x60, 0x70]
    emu = run(src, words, exact=exact)
    assert emu.read_gpr(2) == 15
    writes = [(e.addr, e.value) for e in emu.effects if e.kind == "reg"]
    assert writes == [(0x8801, 0x11), (0x8802, 0x22), (0x8810, 0xA), (0x8811, 0xB),
                      (0x8812, 0xC), (0x8820, 0x1), (0x8821, 0x2)]
    # (xmov2)mov $05: the two extra words go to $00; (xmov3) with $rem = 1 reads one word
    assert regs(emu, 5, 6, 7, 8) == [0x50, 0x60, 0x70, 0x70]
    assert emu.read_gpr(9) == M  # the (peek) consumed nothing; each later read decremented
    assert list(emu.main.rb) == []


def test_rep_cwrite_preincrement_and_sds():
    src = A6 + """
mov $rem, 0x4
mov $03, 0xff
(rep)cwrite $rem, [$03 + 0x1]!
mov $rem, 0x3
(rep)(sds2)cwrite $data, [$00 + @DRAW_STATE_SET_HDR]
""" + END
    emu = run(src, [0x05700003, 0x1234, 0x5])
    # as the spec's example: each iteration writes 0x100 + i and leaves $03 there;
    # the value is $rem before the iteration's decrement
    assert [emu.read_reg("control", 0x100 + i) for i in range(4)] == [4, 3, 2, 1]
    assert emu.read_gpr(3) == 0x103
    assert emu.main.draw.base[5] == [0x1234, 0x5]
    assert emu.read_gpr(0x1C) == 0


def _calls(depth: int) -> str:
    src = A6 + "call #f1\nnop\n" + END
    for i in range(1, depth + 1):
        nxt = f"call #f{i + 1}\nnop\n" if i < depth else ""
        src += f"f{i}:\nadd $02, $02, 0x1\n{nxt}ret\nnop\n"
    return src


def test_call_ret_nesting_to_stack_depth():
    emu = run(_calls(8))
    assert emu.read_gpr(2) == 8
    assert emu.read_reg("sqe", "SP") == 0
    with pytest.raises(EmulationError, match="call stack overflow"):
        run(_calls(9))


@pytest.mark.parametrize("exact", [False, True])
def test_delay_slots(exact):
    src = A6 + """
mov $02, 0x1
breq $02, 0x1, #taken
add $03, $03, 0x1
add $03, $03, 0x10
taken:
breq $02, 0x2, #wrong
brne $02, 0x2, #right
add $04, $04, 0x1
wrong:
add $04, $04, 0x100
right:
jump #end
mov $05, 0x7
mov $05, 0x9
end:
""" + END
    emu = run(src, exact=exact)
    assert regs(emu, 3, 4, 5) == [1, 1, 7]


@pytest.mark.parametrize("exact", [False, True])
def test_bl_sret_and_jump_reg_a7xx(exact):
    src = A7 + """
mov $02, 0x7
bl #fn
nop
jump $02
mov $04, 0x7
mov $04, 0x9
target:                ; pc 7 (pc 0 is the version word)
mov $05, 0x3
""" + END + """
fn:
sret
mov $03, 0x5
"""
    emu = Emulator(assemble(src))
    assert emu.run(exact=exact) == "idle"
    assert regs(emu, 3, 4, 5) == [5, 7, 3]
    assert emu.read_gpr(0x1B) == 4  # bl at pc 2 links to pc 4 (past its delay slot)


def test_a7xx_br_starts_bv_and_lpac():
    def br(bv_off: int, lpac_off: int) -> str:
        return A7 + f"""
mov $02, {0x1000 + 4 * bv_off:#x}
cwrite $02, [$00 + @BV_INSTR_BASE]
cwrite $00, [$00 + @BV_INSTR_BASE+0x1]
mov $02, {0x1000 + 4 * lpac_off:#x}
cwrite $02, [$00 + @LPAC_INSTR_BASE]
cwrite $00, [$00 + @LPAC_INSTR_BASE+0x1]
mov $03, 0x1
cwrite $03, [$00 + @BV_CNTL]
cwrite $03, [$00 + @LPAC_CNTL]
""" + END

    def sub(value: int) -> list[int]:
        words = assemble(A7 + f"""
mov $02, 0x100
mov $03, {value:#x}
cwrite $02, [$00 + @REG_WRITE_ADDR]
cwrite $03, [$00 + @REG_WRITE]
""" + END)
        return list(memoryview(words).cast("I"))[1:]

    main_len = len(assemble(br(0, 0))) // 4 - 1
    bv, lpac = sub(0xB0), sub(0x1AC)
    image = assemble(br(main_len, main_len + len(bv)))
    words = list(memoryview(image).cast("I")) + bv + lpac
    emu = Emulator(b"".join(w.to_bytes(4, "little") for w in words))
    assert emu.run() == "idle"
    assert [p.name for p in emu.procs] == ["BR", "BV", "LPAC"]
    assert [(e.proc, e.value) for e in emu.effects if e.kind == "reg"] == [
        ("BV", 0xB0), ("LPAC", 0x1AC)]
    assert all(p.waitin_pending for p in emu.procs)


@pytest.mark.parametrize("exact", [False, True])
def test_load_store_with_load_store_hi(exact):
    src = A6 + """
mov $02, 0x1
cwrite $02, [$00 + @LOAD_STORE_HI]
mov $03, 0x2000
mov $04, 0xbeef
store $04, [$03 + 0x8]
store $04, [$03 + 0x4]!
load $05, [$03 + 0x4]
""" + END
    emu = run(src, exact=exact)
    base = (1 << 32) + 0x2000
    assert emu.read_mem(base + 4, 2) == [0xBEEF, 0xBEEF]
    assert [(e.addr, e.value) for e in emu.effects if e.kind == "mem"] == [
        (base + 8, 0xBEEF), (base + 4, 0xBEEF)]
    assert regs(emu, 3, 5) == [0x2004, 0xBEEF]  # pre-increment wrote $03

