"""T-Language features beyond the regressions: each checked against an equivalent program
or against the instruction fields the manual and the ISA define."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from isaforge import theia
from isaforge.cli import main
from isaforge.theia.compiler import CompileError, compile_cp, compile_program, compile_vp

PROLOGUE = 5  # R0 = (0,1,2), R2.z = 0, R3 = 0


def vp(src: str, **kw: object) -> list[int]:
    return compile_vp(src, filename="t.vp", **kw).words  # type: ignore[arg-type]


def cp(src: str, **kw: object) -> list[int]:
    return compile_cp(src, filename="t.cp", **kw).words  # type: ignore[arg-type]


def texts(words: list[int]) -> list[str]:
    return [ins.text for ins in theia.disassemble(words)]


def fields(word: int) -> dict[str, int]:
    return {"imm": word >> 63, "scale": word >> 59 & 0xF, "eof": word >> 58 & 1,
            "branch": word >> 57 & 1, "btype": word >> 54 & 7, "opcode": word >> 48 & 7,
            "mode": word >> 45 & 7, "we": word >> 42 & 7, "dst": word >> 34 & 0xFF,
            "src1": word >> 17 & 0x1FFFF, "src0": word & 0x1FFFF}


# -- equivalences -----------------------------------------------------------------------------

def test_for_is_a_while_with_the_step_at_the_end() -> None:
    body = "vector i, a, b;\nb = 0;\n"
    loop = vp(body + "for (i.x = 0; i.x < 10; i.x++)\n{\n a = b + i.x;\n}\nexit;\n")
    while_ = vp(body + "i.x = 0;\nwhile (i.x < 10)\n{\n a = b + i.x;\n i.x++;\n}\nexit;\n")
    assert loop == while_


def test_single_lane_source_is_a_broadcast() -> None:
    assert vp("vector a, b;\na = b.y + a;\n") == vp("vector a, b;\na = b.yyy + a;\n")


def test_minus_equals_adds_the_twos_complement() -> None:
    assert vp("vector a;\na -= 3;\n") == vp("vector a;\na += 0xfffffffd;\n")


def test_define_is_textual_substitution() -> None:
    src = "#define Result R66\n#define Limit 0x20\nvector a;\nif (a < Limit) { Result = a; }\n"
    plain = "\nvector a;\nif (a < 0x20) { R66 = a; }\n"
    assert vp(src) == vp("\n" + plain)


def test_macro_function_expands_with_its_arguments() -> None:
    src = ("#macro C = Cross( A, B )\n"
           "  R7 = A.yzx * B.zxy;\n"
           "  R8 = A.zxy * B.yzx;\n"
           "  C = R7 - R8;\n"
           "#endmacro\n"
           "vector nrm, t1, t2;\n"
           "nrm = Cross( t1, t2 );\n")
    manual = ("\n\n\n\n\n"
              "vector nrm, t1, t2;\n"
              "R7 = t1.yzx * t2.zxy;\n"
              "R8 = t1.zxy * t2.yzx;\n"
              "nrm = R7 - R8;\n")
    assert vp(src) == vp(manual)
    prog = compile_vp(src, filename="t.vp")
    assert prog.preprocessed is not None
    assert "//nrm = Cross( t1, t2 );" in prog.preprocessed.lines  # the call stays, commented
    assert "//  R8 = t1.zxy * t2.yzx;" in prog.listing  # the listing quotes the expansion


def test_cp_include_pastes_the_file(tmp_path: Path) -> None:
    (tmp_path / "defs.th").write_text("#define Out R66\n#define Seven 7\n")
    main_cp = tmp_path / "main.cp"
    main_cp.write_text('#include "defs.th"\nscalar s;\ns = Seven;\nexit;\n')
    words = compile_cp(main_cp.read_text(), filename=str(main_cp)).words
    assert words == cp("scalar s;\ns = 7;\nexit;\n")
    # include_dirs and in-memory headers are searched too
    assert compile_cp('#include "defs.th"\nscalar s;\ns = Seven;\n', include_dirs=[tmp_path]
                      ).words == cp("scalar s;\ns = 7;\n")
    assert compile_cp('#include "h.th"\nscalar s;\ns = N;\n', headers={"h.th": "#define N 3\n"}
                      ).words == cp("scalar s;\ns = 3;\n")


def test_vp_include_is_a_comment_with_a_warning(tmp_path: Path) -> None:
    # the upstream VP preprocessor never opens a file: #include "F" becomes a comment
    (tmp_path / "defs.th").write_text("#define Out R66\n")
    main_vp = tmp_path / "main.vp"
    main_vp.write_text('#include "defs.th"\nR66 = 1;\n')
    prog = compile_vp(main_vp.read_text(), filename=str(main_vp))
    assert prog.words == vp("//\nR66 = 1;\n")
    assert prog.warnings == [f"{main_vp}:1:1: warning: #include is ignored in VP code: the "
                             "line becomes a comment and 'defs.th' is not read (only the CP "
                             "compiler includes files)"]
    with pytest.raises(CompileError, match="undefined variable 'Out'"):
        compile_vp('#include "defs.th"\nOut = 1;\n', filename=str(main_vp))


def test_cp_define_replaces_whole_names_only() -> None:
    # the CP preprocessor does not touch a name inside a longer word (the VP one does)
    words = cp("#define N 5\nscalar NN, a;\na = N + NN;\n")
    assert words == cp("scalar NN, a;\na = 5 + NN;\n")


# -- instruction fields -------------------------------------------------------------------------

def test_declarations_are_allocated_last_name_first() -> None:
    words = vp("vector a, b = (1, 2, 3), c;\nc = a;\n")
    # c -> R10, b -> R11, a -> R12; b's initialiser writes R11 lane by lane
    init = [fields(w) for w in words[PROLOGUE:PROLOGUE + 3]]
    assert [(f["dst"], f["we"], f["src0"]) for f in init] == [(11, 4, 1), (11, 2, 2), (11, 1, 3)]
    copy = fields(words[PROLOGUE + 3])
    assert (copy["dst"], copy["src0"] & 0xFF) == (10, 12)


def test_arithmetic_opcodes_signs_and_swizzles() -> None:
    words = vp("vector a, b, c;\nc = a.zyx * b.-x-y-z;\nc = a / b;\nc = sqrt(a);\n"
               "c = a & b;\nc = a | b;\nc = a - b;\n")
    ops = [fields(w)["opcode"] for w in words[PROLOGUE:]]
    assert ops == [3, 2, 4, 5, 5, 1]
    t = texts(words[PROLOGUE:])
    assert t[0].endswith("R[12 + offset].zyx R[11 + offset].-x-y-z")
    assert t[5].endswith("R[12 + offset].xyz R[11 + offset].-x-y-z")
    assert fields(words[PROLOGUE + 3])["scale"] == 0  # AND
    assert fields(words[PROLOGUE + 4])["scale"] == 1  # OR


def test_fixed_point_scales_mul_and_div() -> None:
    words = vp("using fixed_point_arithmetic;\nvector a, b, c;\nc = a * b;\nc = a / b;\n")
    mul, div = (fields(w) for w in words[PROLOGUE:PROLOGUE + 2])
    assert (mul["opcode"], mul["scale"]) == (3, 12)  # result shifted right by SCALE
    assert (div["opcode"], div["scale"]) == (2, 2)  # source 1 shifted left by SCALE
    plain = vp("vector a, b, c;\nc = a * b;\n")
    assert fields(plain[PROLOGUE])["scale"] == 0


@pytest.mark.parametrize(("op", "btype"), [("!=", 1), ("==", 2), (">", 5), ("<", 6), ("<=", 4),
                                           (">=", 3)])
def test_conditions_branch_out_on_the_negation(op: str, btype: int) -> None:
    words = vp(f"vector a, b;\nif (a {op} b) {{ a = 5; }}\nexit;\n")
    br = fields(words[PROLOGUE])
    assert (br["branch"], br["btype"]) == (1, btype)
    assert br["src0"] >> 14 == 7  # a - b: source 0 negated
    assert br["dst"] == PROLOGUE + 2  # past the then-block


def test_if_else_and_while_targets() -> None:
    words = vp("vector a;\nwhile (a < 3) {\n if (a == 1) { a = 2; } else { a = 3; }\n a++;\n}\n"
               "exit;\n")
    f = [fields(w) for w in words]
    loop, cond = PROLOGUE, PROLOGUE + 1  # constant load, branch out of the loop
    assert f[cond]["branch"] and f[cond]["dst"] == len(words) - 2  # the NOP before EOF
    inner = cond + 1
    assert f[inner]["btype"] == 2 and f[inner]["dst"] == inner + 3  # to the else block
    assert f[inner + 2]["btype"] == 0 and f[inner + 2]["dst"] == inner + 4  # over the else
    back = fields(words[-3])
    assert (back["btype"], back["dst"]) == (0, loop)
    assert f[-1]["eof"] == 1 and f[-2]["opcode"] == 0


def test_functions_frames_parameters_and_return_value() -> None:
    prog = compile_vp(
        "function add3(p, q)\n{\n return p + q;\n}\n"
        "function main()\n{\n vector a = (1,2,3), b, r;\n r = add3(a, b);\n exit;\n}\n",
        filename="t.vp")
    # add3: the addition, frame restore, return branch, frame restore at its end
    assert prog.symbols == {"add3": PROLOGUE, "main": PROLOGUE + 4}
    t = texts(prog.words)
    # the body adds the parameters: q is R4, p is R5 (last parameter first)
    assert t[PROLOGUE] == "ADD R[1+ offset].xyz R5.xyz R4.xyz"
    call = prog.words.index(next(w for w in prog.words[PROLOGUE + 4:]
                                 if fields(w)["branch"] and fields(w)["dst"] == PROLOGUE))
    # arguments copied last first: b -> R4, a -> R5, then return address, frame, call
    copies = [fields(w) for w in prog.words[call - 5:call - 3]]
    assert [c["dst"] for c in copies] == [4, 5]
    ret = fields(prog.words[call - 3])
    assert (ret["dst"], ret["src0"]) == (2, call + 1)
    grab = fields(prog.words[call + 1])
    assert grab["src1"] & 0xFF == 1  # the return value comes back in R1
    assert "//add3" in prog.listing and "//main" in prog.listing


def test_forward_call_is_resolved_in_the_image_and_named_in_the_listing() -> None:
    prog = compile_vp("f();\nexit;\nfunction f() { R70 = 1; return; }\n", filename="t.vp")
    call = next(i for i, w in enumerate(prog.words) if fields(w)["branch"]
                and fields(w)["btype"] == 0 and not fields(w)["imm"])
    assert fields(prog.words[call])["dst"] == prog.symbols["f"]
    assert "ADD <BRANCH.ALWAYS> @f.___ R0.xyz R0.xyz" in prog.listing
    assert theia.assemble(prog.listing) == prog.words


def test_threads_use_their_own_registers_and_control_register() -> None:
    prog = compile_vp("thread T()\n{\n vector a, b;\n a = b + a;\n}\n"
                      "start T();\nvector c;\nc = c + c;\nexit;\n", filename="t.vp")
    t = texts(prog.words)
    # b -> R129, a -> R130 (thread registers start above R128)
    assert t[PROLOGUE] == "ADD R[130+ offset].xyz R[129 + offset].xyz R[130 + offset].xyz"
    assert t[PROLOGUE + 1] == "ADD R[2].__z I(0) 0"  # end of thread: multithreading off
    assert t[PROLOGUE + 2:PROLOGUE + 4] == [f"ADD R[2].__z I({PROLOGUE * 2:x}) 0",
                                            f"ADD R[2].__z I({PROLOGUE * 2 + 1:x}) 0"]


def test_arrays_and_io() -> None:
    words = vp("vector arr[4], i, v, addr = (0, 1, 2);\narr[i] = v;\nv = in[addr];\n"
               "out[addr] = v;\nout[5] = v;\n")
    # addr -> R10, v -> R11, i -> R12, arr -> R13..R16
    t = texts(words[PROLOGUE + 3:])
    assert t[0] == "ADD R[13+ R[12 + offset] + offset ].xyz 0 R[11 + offset]"
    assert t[1] == "IO R[11+ offset].xyz (scaled) R[10 + offset].xyz R0.xyz"  # TMREAD
    assert t[2] == "IO R[0+ offset].xyz R[10 + offset].xyz R[11 + offset].xyz"  # OMWRITE
    assert t[3] == "IO R[11 + offset ].xyz I(5) R[DST+offset] *** 0 , 0"


def test_registers_as_variables_and_literal_bases() -> None:
    words = vp("R1 = r2 + R5;\nr3.z = 0xfff;\nR4 = 0b111000111;\nR6.xy = 75;\n")
    t = texts(words[PROLOGUE:])
    assert t == ["ADD R1.xyz R2.xyz R5.xyz", "ADD R[3].__z I(fff) 0", "ADD R[4].xyz I(1c7) 0",
                 "ADD R[6].xy_ I(4b) 0"]


# -- CP dialect ---------------------------------------------------------------------------------

def test_cp_program_shape() -> None:
    prog = compile_cp("scalar a, b = 3;\na = b + 1;\na += b;\nstart <3>;\nexit;\n",
                      filename="t.cp")
    t = [line.split("//", 1)[1] for line in prog.mem.splitlines()[1:]]
    assert t[:4] == ["NOP R0 R0 R0"] * 3 + ["ASSIGN R0 I(0 )"]
    # b is R10 (last name first) and a is R11
    assert t[4:] == ["ASSIGN R10 I(3 )", "ASSIGN R128 I(1 )", "ADD R129 R10 R128",
                     "ADD R11 R129 R0", "ADD R11 R10 R11", "DELIVERCOMMAND R4 R0 R0",
                     "EXIT R0 R0 R0"]


def test_cp_if_else_with_delay_slots() -> None:
    prog = compile_cp("scalar a, b;\nif (a == b) { a = b; } else { b = a; }\nexit;\n",
                      filename="t.cp")
    t = [line.split("//", 1)[1] for line in prog.mem.splitlines()[5:]]
    assert t == ["BNE R9 R11 R10", "NOP R0 R0 R0", "ADD R11 R10 R0", "BRANCH R10 R0 R0",
                 "NOP R0 R0 R0", "ADD R10 R11 R0", "EXIT R0 R0 R0"]


# -- properties ---------------------------------------------------------------------------------

_leaf = st.sampled_from(["a", "b", "c", "a.zxy", "b.-xy-z", "R7", "5", "0x1f", "2", "(1,2,3)"])
_expr = st.recursive(_leaf, lambda sub: st.tuples(sub, st.sampled_from("+-*/&|"), sub).map(
    lambda t: f"({t[0]} {t[1]} {t[2]})"), max_leaves=6)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(exprs=st.lists(_expr, min_size=1, max_size=3), cond=_expr)
def test_random_programs_compile_to_decodable_code(exprs: list[str], cond: str) -> None:
    body = "".join(f"c = {e};\n" for e in exprs)
    src = f"vector a, b, c;\nwhile (a < {cond}) {{\n{body}a++;\n}}\nexit;\n"
    prog = compile_vp(src, filename="t.vp")
    assert prog.words == compile_vp(src, filename="t.vp").words  # deterministic
    for ins in theia.disassemble(prog.words):
        assert ins.mnemonic != ".word"
        assert ins.fields.get("OPCODE", 0) != 7
    assert theia.assemble(prog.listing) == prog.words
    assert fields(prog.words[-1])["eof"] == 1


def test_cli_compile_vp_and_cp(tmp_path: Path) -> None:
    (tmp_path / "p.vp").write_text("vector a;\na = 7;\nexit;\n")
    (tmp_path / "p.cp").write_text('#include "code_block_header.thh"\nscalar s;\n'
                                   "s = P_SIZE;\nexit;\n")
    r = CliRunner().invoke(main, ["theia", "compile", str(tmp_path / "p.vp"), "-o",
                                  str(tmp_path / "o")])
    assert r.exit_code == 0, r.output
    assert "CodeBlockSize: 8" in r.output
    out = tmp_path / "o"
    assert (out / "code_block_header.thh").read_text() == \
        "\n#define  P_SIZE (8<<20)\n#define  P_OFFSET 0\n"
    # the CP preprocessor pasted the header's text: s = (8<<20)
    assert "//s = (8<<20);" in (out / "cp_code.list").read_text()
    mem = (out / "control_code.mem").read_text()
    assert "ASSIGN R128 I(8 )" in mem and "SHL R130 R128 R129" in mem
    # the CP compiles alone too, finding the header in -o's folder
    r2 = CliRunner().invoke(main, ["theia", "compile", str(tmp_path / "p.cp"), "-q", "-o",
                                   str(out)])
    assert r2.exit_code == 0 and r2.output == ""
    res = compile_program(tmp_path / "p.cp", out)
    assert [p.name for p in res.files] == ["cp_code.list", "control_code.mem"]


_cp_leaf = st.sampled_from(["s", "t", "1", "0x20", "0b101", "700"])
_cp_expr = st.recursive(_cp_leaf, lambda sub: st.tuples(sub, st.sampled_from(
    ["+", "-", "|", "<<", ">>", "&"]), sub).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
    max_leaves=8)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(exprs=st.lists(_cp_expr, min_size=1, max_size=3))
def test_random_cp_programs_match_the_disassembler(exprs: list[str]) -> None:
    body = "".join(f"s = {e};\nt += {e};\n" for e in exprs)
    prog = compile_cp(f"scalar s, t = 3;\nwhile (s <= t) {{\n{body}}}\nexit;\n",
                      filename="t.cp")
    # our CP text is the disassembler's text for the same words, and it reassembles
    assert theia.write_mem(prog.words, cp=True) == prog.mem
    assert theia.assemble(prog.listing, cp=True) == prog.words
    ops = [line.split("//", 1)[1].split()[0] for line in prog.mem.splitlines()[1:]]
    assert ops[-1] == "EXIT" and "BLE" in ops and "BRANCH" in ops


# -- upstream behaviours kept for compatibility (see the package docstring) -------------------

def test_nested_loops_share_one_loop_start_like_upstream() -> None:
    words = vp("vector i, j;\nwhile (i < 3) {\n while (j < 3) { j++; }\n i++;\n}\nexit;\n")
    gotos = [fields(w)["dst"] for w in words if fields(w)["branch"] and fields(w)["btype"] == 0]
    inner_start = PROLOGUE + 2  # after the outer condition's constant load and branch
    assert gotos == [inner_start, inner_start]


def test_returned_expression_lands_in_r1_plus_offset_like_upstream() -> None:
    t = texts(vp("function f(p)\n{\n return p + p;\n}\n"))
    assert t[PROLOGUE] == "ADD R[1+ offset].xyz R4.xyz R4.xyz"


def test_plain_call_keeps_the_parameter_counter_like_upstream() -> None:
    words = vp("function f(p) { return; }\nvector a;\nf(a);\nf(a);\n")
    copies = [fields(w)["dst"] for w, t in zip(words, texts(words), strict=True)
              if t.endswith("R0.xxx") and fields(w)["we"] == 7 and fields(w)["dst"] >= 4]
    assert copies == [4, 5]


# -- the bundled example programs ---------------------------------------------------------------

EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "isaforge" / "examples" / "theia" / \
    "programs"
EXAMPLE_VPS = sorted(p.name for p in EXAMPLES.glob("*.vp"))


def test_examples_are_bundled() -> None:
    assert EXAMPLE_VPS == ["cross_product.vp", "manual_tour.vp", "sum_loop.vp",
                           "two_threads.vp"]
    for name in EXAMPLE_VPS:
        assert (EXAMPLES / name).with_suffix(".cp").is_file()


@pytest.mark.parametrize("name", EXAMPLE_VPS)
def test_example_programs_compile(tmp_path: Path, name: str) -> None:
    result = compile_program(EXAMPLES / name, tmp_path)
    assert result.vp is not None and result.cp is not None
    assert theia.assemble(result.vp.listing) == result.vp.words
    assert theia.read_mem((tmp_path / "code.mem").read_text()) == result.vp.words
    assert any(fields(w)["eof"] for w in result.vp.words)
    # the CP program loads exactly this many instructions
    size = result.vp.size
    assert f"DstOffset = (0x0 | ({size}<<20) | (1<<31) );" in result.cp.listing


def test_several_programs_like_the_driver(tmp_path: Path) -> None:
    srcs = [EXAMPLES / "sum_loop.vp", EXAMPLES / "two_threads.vp"]
    r = CliRunner().invoke(main, ["theia", "compile", *map(str, srcs), "-o", str(tmp_path)])
    assert r.exit_code == 0, r.output
    one = compile_vp((EXAMPLES / "sum_loop.vp").read_text())
    two = compile_vp((EXAMPLES / "two_threads.vp").read_text())
    assert (tmp_path / "code_block_header.thh").read_text() == (
        f"\n#define  SUM_LOOP_SIZE ({one.size}<<20)\n#define  SUM_LOOP_OFFSET 0\n"
        f"#define  TWO_THREADS_SIZE ({two.size}<<20)\n#define  TWO_THREADS_OFFSET {one.size}\n")
    assert (tmp_path / "instructions.mem").read_text() == "\n" + one.mem + two.mem
    assert (tmp_path / "code.mem").read_text() == two.mem  # the last program's


# -- warnings: code compiled as upstream does that does not do what the source says ----------

@pytest.mark.parametrize(("src", "where", "pattern"), [
    ("vector a, b;\nb = a + 5;\n", (2, 7), r"constant 0x5 in this '\+' is miscompiled"),
    ("vector a, b;\nb = 7 * a;\n", (2, 7), r"constant 0x7 in this '\*'"),
    ("vector a;\nif (5 == a) { a = 1; }\n", (2, 11), r"left of a comparison"),
    ("vector a, i;\nwhile (a < 3) {\n while (i < 3) { i++; }\n a++;\n}\n", (2, 1),
     r"jumps back to instruction 7"),
    ("vector arr[3], i, vv;\nvv = arr[i];\n", (2, 1), r"array index is ignored"),
    ("vector a;\na = scale(R5);\n", (2, 5), r"scale\(\.\.\.\) reads R0"),
    ("function f(p) { vector q; return q; }\n", (1, 34), r"returns the constant 0x0"),
    ("function f(p) { return p + p; }\n", (1, 24), r"R\[1 \+ frame offset\]"),
    ("vector a, b;\nif (a + b == a) {\n b = a;\n}\n", (3, 2), r"emits no instruction"),
])
def test_vp_warnings(src: str, where: tuple[int, int], pattern: str) -> None:
    prog = compile_vp(src, filename="w.vp")
    assert len(prog.warnings) == 1, prog.warnings
    assert prog.warnings[0].startswith(f"w.vp:{where[0]}:{where[1]}: warning: ")
    assert __import__("re").search(pattern, prog.warnings[0])


@pytest.mark.parametrize(("src", "pattern"), [
    ("scalar Rate, a;\na = Rate;\n", r"'Rate' contains a capital R and is read as register R0"),
    ("scalar a = 16, b;\n", r"initial value of 'a' is 10"),
    ("scalar a;\na++;\n", r"'\+\+' adds 0"),
])
def test_cp_warnings(src: str, pattern: str) -> None:
    prog = compile_cp(src, filename="w.cp")
    assert any(__import__("re").search(pattern, w) for w in prog.warnings), prog.warnings


def test_the_regressions_that_rely_on_upstream_defects_are_warned_about() -> None:
    from tests.refdata import refdata
    path = refdata("theia", "regressions", "test_expressions", "test_expressions.vp")
    warnings = compile_vp(path.read_text(), filename="t.vp").warnings
    assert [w.split(": warning: ")[0] for w in warnings] == ["t.vp:12:3", "t.vp:18:3",
                                                             "t.vp:51:9"]


@pytest.mark.parametrize("name", EXAMPLE_VPS)
def test_example_programs_have_no_warnings(tmp_path: Path, name: str) -> None:
    assert compile_program(EXAMPLES / name, tmp_path).warnings == []


def test_cli_prints_warnings_on_stderr(tmp_path: Path) -> None:
    (tmp_path / "w.vp").write_text("vector a, b;\nb = a + 5;\nexit;\n")
    (tmp_path / "w.cp").write_text("exit;\n")
    r = CliRunner().invoke(main, ["theia", "compile", str(tmp_path / "w.vp"), "-q", "-o",
                                  str(tmp_path / "o")])
    assert r.exit_code == 0 and r.stdout == ""
    assert r.stderr.startswith(f"isaforge: {tmp_path / 'w.vp'}:2:7: warning: ")


def test_fixed_point_literals() -> None:
    # the manual: 17fp2.5 is 2.5 * 2^17 = 0x50000; 8fp3.14159265 rounds to 0x324
    assert vp("vector a;\na.x = 17fp2.5;\n") == vp("vector a;\na.x = 0x50000;\n")
    assert vp("R9 = (8fp3.14159265, 17fp1, 0);\n") == vp("R9 = (0x324, 0x20000, 0);\n")
    with pytest.raises(CompileError, match="fixed-point scale 40 is too large"):
        vp("R9 = 40fp1;\n")
