"""The T-Language manual (specs/theia-t-language.txt), section by section: every example and
construct it shows compiles, and where a VP can run it, gives the result the manual describes
on the ISA-level simulator (isaforge.theia.Gpu).

Examples are quoted as the manual writes them where they are valid T-Language; where the
manual's own text is not (a typo, an undeclared name, a register used as a variable name), the
test says so and checks the compiler's error, then runs a corrected copy.
"""

from __future__ import annotations

import re

import pytest

from isaforge.theia import Gpu
from isaforge.theia.compiler import CompileError, compile_cp, compile_vp

PROLOGUE = 5  # R0 = (0,1,2), R2.z = 0, R3 = 0
FIRST_VAR = 10  # the last name of the first declaration at top level


def vp(src: str, **kw: object) -> list[int]:
    return compile_vp(src, filename="m.vp", **kw).words  # type: ignore[arg-type]


def fields(word: int) -> dict[str, int]:
    return {"imm": word >> 63, "scale": word >> 59 & 0xF, "eof": word >> 58 & 1,
            "branch": word >> 57 & 1, "btype": word >> 54 & 7, "opcode": word >> 48 & 7,
            "mode": word >> 45 & 7, "we": word >> 42 & 7, "dst": word >> 34 & 0xFF,
            "src1": word >> 17 & 0x1FFFF, "src0": word & 0x1FFFF,
            "value": word & 0xFFFFFFFF}


def run(src: str, cores: int = 1, tmem: list[int] | None = None) -> Gpu:
    """Compile ``src`` and run it on VP 0 (the frame offset R3.x is 0 at top level, so the
    variables of the first declaration are R10, R11, ... last name first)."""
    gpu = Gpu(cores=cores)
    if tmem is not None:
        gpu.load([], None, tmem)
    gpu.load_vp(0, vp(src))
    result = gpu.run(max_steps=200_000)
    assert result.finished == [0]
    return gpu


def reg(gpu: Gpu, row: int) -> tuple[int, ...]:
    return tuple(int(v) for v in gpu.register(0, row))


def signed(lanes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(v - (1 << 32) if v >> 31 else v for v in lanes)


def err(src: str, pattern: str, cp: bool = False) -> str:
    with pytest.raises(CompileError) as info:
        (compile_cp if cp else compile_vp)(src, filename="m.cp" if cp else "m.vp")
    text = str(info.value)
    assert re.search(pattern, text), text
    return text


# -- section 5.7, Figure 15: a declaration that initialises some lanes -------------------------

def test_declaration_with_member_sets_one_lane_with_an_immediate() -> None:
    src = ("using fixed_point_arithmetic; //Tells the compiler to assemble for fixed point "
           "arithmetic\n"
           "vector MyNumber.x = 17fp2.5; //This is OK, the compiler will transform into "
           "2.5*2^17 = 0x50000\n")
    words = vp(src)
    assert len(words) == PROLOGUE + 1
    f = fields(words[PROLOGUE])
    # upstream has no such form: the natural code, an ADD of the immediate with a write mask
    # (the same form as the lanes of a (x, y, z) initialiser: IMM mode 101, dst + offset)
    assert (f["imm"], f["opcode"], f["mode"], f["we"], f["dst"]) == (1, 1, 5, 0b100, FIRST_VAR)
    assert f["value"] == 0x50000
    gpu = Gpu(cores=1)
    gpu.write_register(0, FIRST_VAR, (11, 22, 33))
    gpu.load_vp(0, vp(src + "exit;\n"))
    gpu.run()
    assert reg(gpu, FIRST_VAR) == (0x50000, 22, 33)  # y and z untouched


def test_declaration_with_members_in_a_list() -> None:
    src = "vector a.xz = 0x7, b = (1,2,3), c.y = 17fp0.5;\nexit;\n"
    words = vp(src)
    # right-recursive like every declaration: c -> R10, b -> R11, a -> R12
    c, a = fields(words[PROLOGUE]), fields(words[PROLOGUE + 4])
    assert (c["dst"], c["we"], c["value"]) == (10, 0b010, 0x10000)
    assert (a["dst"], a["we"], a["value"]) == (12, 0b101, 7)
    gpu = run(src)
    assert reg(gpu, 10)[1] == 0x10000
    assert reg(gpu, 11) == (1, 2, 3)
    assert (reg(gpu, 12)[0], reg(gpu, 12)[2]) == (7, 7)


def test_declaration_with_member_in_a_function_frame() -> None:
    # inside a called function the variable is frame-relative: R[10 + offset]
    src = ("vector a, b, c;\nf();\nexit;\n"
           "function f()\n{\n vector v.y = 0x44;\n R70 = v;\n return;\n}\n")
    gpu = run(src)
    assert reg(gpu, 70)[1] == 0x44
    # v is the fourth name seen (R13); the call displaced the frame by main's 3 variables
    assert [i for i in range(256) if reg(gpu, i)[1] == 0x44] == [13 + 3, 70]


def test_declaration_of_a_fraction_without_fixed_point_is_refused() -> None:
    # Figure 15: "vector MyNumber.x = 2.5;  //This is wrong!"
    text = err("using fixed_point_arithmetic;\nvector MyNumber.x = 2.5;\n",
               r"e\.g\. 17fp2\.5")
    assert text.startswith("m.vp:2:21: error: ")


def test_declaration_with_a_bad_member() -> None:
    err("vector a.q = 1;\n", r"m\.vp:1:9: error: bad write mask")
    err("vector a.x;\n", r"'=' \(a declaration with lanes")
