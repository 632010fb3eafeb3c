"""The T-Language preprocessors, directive by directive, VP and CP dialects.

Each expected text below is what the upstream preprocessors (freecores/theia_gpu beta_2.0,
compiler/src/{vp,cp}_compiler/Preprocessor.cpp) write to ``X.preprocessed`` for the same input
(checked against a local build of them while writing these tests; the build is not part of the
project). Where upstream silently ignores something we add a warning; where it crashes or hangs
we raise an error.
"""

from __future__ import annotations

import pytest

from isaforge.theia.compiler import CompileError, compile_cp, compile_vp
from isaforge.theia.compiler.preprocess import preprocess


def pre(src: str, cp: bool = False, **kw: object) -> tuple[str, list[str]]:
    """The preprocessed text and the warnings (as ``line:col: message``)."""
    p = preprocess(src, "f.cp" if cp else "f.vp", cp=cp, **kw)  # type: ignore[arg-type]
    return p.text, [f"{loc.line}:{loc.col}: {msg}" for loc, msg in p.warnings]


# -- lines without '#', tabs, the end of the file -------------------------------------------------

def test_plain_lines_tabs_and_the_final_newline() -> None:
    for cp in (False, True):
        assert pre("a\tb\n", cp) == ("a b\n\n", [])  # a final newline reads one more empty line
        assert pre("a\tb", cp) == ("a b\n", [])
        assert pre("", cp) == ("\n", [])


def test_crlf_is_kept() -> None:
    # getline splits at \n only: the \r stays, in a #define's value too
    assert pre("#define X Y\r\nX\r\n")[0] == "//#define Y\r Y\r\nY\r\r\n\n"
    assert pre("#define X Y\r\nX\r\n", cp=True)[0] == "//#define X Y\r\nY\r\r\n\n"


def test_nul_ends_the_line_with_a_warning() -> None:
    text, warnings = pre("a\0b #define X 1\nX\n")
    assert text == "a\nX\n\n"
    assert warnings == ["1:2: NUL character: upstream reads the line only up to it"]


def test_line_longer_than_upstreams_buffer_is_an_error() -> None:
    assert pre("x\n//" + "y" * 1021 + "\n")[0].count("y") == 1021  # 1023 characters: fine
    with pytest.raises(CompileError, match="line longer than 1023 characters") as err:
        pre("x\n//" + "y" * 1022 + "\n")  # upstream never finishes
    assert err.value.loc is not None and (err.value.loc.line, err.value.loc.col) == (2, 1024)


# -- #define ------------------------------------------------------------------------------------

def test_vp_define_replaces_everywhere_in_name_order() -> None:
    # A is replaced before AB (so AB is gone); the #define lines themselves are rewritten too
    assert pre("#define AB 1\n#define A 2\nAB A xA //A\n")[0] == \
        "//#define 2B 1\n//#define 2 2\n2B 2 x2 //2\n\n"
    # names are replaced in name order, each until none is left: a value naming a later name
    # is replaced again (A -> B -> C), one naming an earlier name is not (B -> A stays A)
    assert pre("#define A B\n#define B C\nA B\n")[0] == "//#define C C\n//#define C C\nC C\n\n"
    assert pre("#define B A\n#define A C\nA B\n")[0] == "//#define A C\n//#define C C\nC A\n\n"


def test_cp_define_replaces_names_not_next_to_a_letter() -> None:
    # a digit or '_' next to the name does not protect it; a (C-locale) letter does
    assert pre("#define AB 1\n#define A 2\nAB A A_ 3A xA Aé\n", cp=True)[0] == \
        "//#define AB 1\n//#define A 2\n1 2 2_ 32 xA 2é\n\n"


def test_define_value_is_the_third_word() -> None:
    text, warnings = pre("#define X R66 R67\nX = 1;\n")
    assert text == "//#define R66 R66 R67\nR66 = 1;\n\n"
    assert warnings == ["1:1: 'X' is 'R66' (a value is one word): 'R67' is ignored"]
    assert pre("#define X R66 // the output\nX = 1;\n")[1] == []  # a comment: no warning
    text, warnings = pre("#define X R66//output\nX = 1;\n")
    assert text.split("\n")[1] == "R66//output = 1;"
    assert warnings == ["1:1: the value of 'X' ('R66//output') holds a comment: where 'X' is "
                        "replaced, the rest of that line is a comment"]
    # blanks are spaces only after the tabs became spaces: "\v" is part of a word
    assert preprocess("#define\tX\tR6\v\nX\n").defines == {"X": "R6\v"}


def test_define_line_continuation_is_not_one() -> None:
    text, warnings = pre("#define X \\\nR66\nX = 1;\n")
    assert text == "//#define \\ \\\nR66\n\\ = 1;\n\n"
    assert warnings == ["1:1: no line continuations: 'X' is '\\' and the next line is an "
                        "ordinary line"]


@pytest.mark.parametrize("cp", [False, True])
def test_redefinition_applies_to_the_whole_file(cp: bool) -> None:
    src = "X\n#define X 5\nX\n#define X 6\nX\n"
    text, warnings = pre(src, cp)
    assert text.split("\n")[::2] == ["6", "6", "6", ""]
    assert warnings == ["4:1: 'X' redefined: its last value, '6', replaces '5' in the whole "
                        "file (lines before this one too)"]
    assert pre("#define X 5\n#define X 5\n", cp)[1] == []  # the same value: nothing to say


@pytest.mark.parametrize("cp", [False, True])
def test_define_without_a_value_is_an_error(cp: bool) -> None:
    for src in ("#define X\n", "#define\n"):
        with pytest.raises(CompileError, match="#define needs a name and a value"):
            pre(src, cp)  # upstream crashes


def test_self_referencing_value_is_an_error() -> None:
    with pytest.raises(CompileError, match="'X' expands to itself"):
        pre("#define X XY\nX\n")  # upstream never finishes
    assert pre("#define X XY\nX\n", cp=True)[0] == "//#define X XY\nXY\n\n"  # one pass in CP


# -- #include -------------------------------------------------------------------------------------

def test_vp_include_is_a_comment() -> None:
    text, warnings = pre('#include "h.th"\nA\n', headers={"h.th": "#define A 1\n"})
    assert text == '//#include "h.th"\nA\n\n'
    assert warnings == ["1:1: #include is ignored in VP code: the line becomes a comment and "
                        "'h.th' is not read (only the CP compiler includes files)"]
    assert pre('  #include "missing.th"\n')[1][0].startswith("1:3: #include is ignored")


def test_cp_include_pastes_the_lines_without_its_directives() -> None:
    header = "#define A 3\nscalar u; // # here\nu = A;\n#macro R = G(a)\nR = a;\n#endmacro\n"
    text, warnings = pre('#include "h.th"\ns = G(A);\n', cp=True, headers={"h.th": header})
    # the #include line and the header's #define / #macro lines are gone, its plain lines and
    # the macro's body (as comments) stay; the file's own lines follow
    # (the header's 'scalar u;' line has a '#': dropped)
    assert text == "u = 3;\n//R = a;\n//#endmacro\n\n//s = G(3);\ns = 3;\n\n"
    assert warnings == ["2:14: a line with '#' is a directive line: this one is dropped (its "
                        "code is not compiled)"]


def test_cp_include_errors() -> None:
    with pytest.raises(CompileError, match="could not include file 'no.th'"):
        pre('#include "no.th"\n', cp=True)
    with pytest.raises(CompileError, match="#include needs a file name"):
        pre("#include\n", cp=True)
    with pytest.raises(CompileError, match="nested too deeply"):
        pre('#include "h.th"\n', cp=True, headers={"h.th": '#include "h.th"\n'})


# -- #ifdef / #if / #else / #endif, #undef, unknown directives, '#' in code ----------------------

def test_vp_conditionals_are_comments_and_every_branch_is_compiled() -> None:
    src = "#ifdef FOO\nR66 = 1;\n#else\nR66 = 2;\n#endif\n"
    text, warnings = pre(src)
    assert text == "//#ifdef FOO\nR66 = 1;\n//#else\nR66 = 2;\n//#endif\n\n"
    assert [w.split(":")[0] for w in warnings] == ["1", "3", "5"]
    assert "#else is not a directive of the T-Language preprocessor: the line becomes a " \
        "comment (the code of every branch is compiled)" in warnings[1]
    assert len(compile_vp(src + "exit;\n").words) == len(compile_vp(
        "R66 = 1;\nR66 = 2;\nexit;\n").words)


def test_cp_conditionals_are_dropped() -> None:
    text, warnings = pre("#if 0\ns = 1;\n#endif\n", cp=True)
    assert text == "s = 1;\n\n"
    assert warnings[0] == ("1:1: #if is not a directive of the T-Language preprocessor: the "
                           "line is dropped (the code of every branch is compiled)")


@pytest.mark.parametrize(("cp", "what"), [(False, "becomes a comment"), (True, "is dropped")])
def test_undef_and_unknown_directives(cp: bool, what: str) -> None:
    text, warnings = pre("#define N 5\n#undef N\n#pragma once\nN\n", cp)
    assert text.split("\n")[-3] == "5"  # N stays defined
    assert warnings == [f"2:1: #undef is not a directive of the T-Language preprocessor: the "
                        f"line {what}",
                        f"3:1: #pragma is not a directive of the T-Language preprocessor: the "
                        f"line {what}"]


@pytest.mark.parametrize(("cp", "expect"), [(False, "//R66 = 1; // #1\n//// note #2\n\n"),
                                            (True, "\n")])
def test_a_hash_anywhere_makes_a_directive_line(cp: bool, expect: str) -> None:
    text, warnings = pre("R66 = 1; // #1\n// note #2\n", cp)
    assert text == expect
    what = "is dropped" if cp else "becomes a comment"
    # only the line with code is worth a warning
    assert warnings == [f"1:13: a line with '#' is a directive line: this one {what} (its code "
                        "is not compiled)"]


# -- #macro / #endmacro ---------------------------------------------------------------------------

MACRO = "#macro RET = Twice(a)\n\tRET = a + a;\n#endmacro\nv = Twice( R2 );\n"


@pytest.mark.parametrize("cp", [False, True])
def test_macro_call_is_commented_and_followed_by_the_body(cp: bool) -> None:
    # the body lines are kept as read (tabs and all); the call line loses its blanks only in
    # the arguments it hands over
    assert pre(MACRO, cp)[0] == ("//#macro RET = Twice(a)\n//\tRET = a + a;\n//#endmacro\n"
                                 "//v = Twice( R2 );\n\tv = R2 + R2;\n\n")


def test_macro_arguments() -> None:
    # nested parentheses are split at '(' and lose every ')': f((1+2), 3) passes "1+2" and "3"
    src = "#macro R = F(a, b)\nR = a * b;\n#endmacro\nv = F((1+2), 3);\n"
    assert pre(src)[0].split("\n")[-3] == "v = 1+2 * 3;"
    # without parameters the result name is not replaced (upstream replaces it per parameter)
    src = "#macro R = Z()\nR = 0;\n#endmacro\nv = Z();\n"
    assert pre(src)[0].split("\n")[-3] == "R = 0;"
    # a macro's body may call another (the inserted lines are preprocessed in turn)
    src = ("#macro R = F(a,b)\nR = a+b;\n#endmacro\n#macro R = G(a)\nR = F(a, a);\n#endmacro\n"
           "v = G(w);\n")
    assert pre(src)[0].split("\n")[-5:-2] == ["//v = G(w);", "//v = F(w, w);", "v = w+w;"]
    with pytest.raises(CompileError, match="macro 'Add' takes 2 arguments"):
        pre("#macro R = Add(a, b)\nR = a + b;\n#endmacro\nv = Add(R2);\n")


def test_macro_without_endmacro_reads_empty_lines() -> None:
    text, warnings = pre("#macro R = F(a)\n R = a;\n")
    lines = text.split("\n")
    assert lines[:3] == ["//#macro R = F(a)", "// R = a;", "//"]
    assert len(lines) == 1 + 100 + 1  # the signature, 100 body lines, the last newline
    assert warnings == ["1:1: #macro F has no #endmacro: upstream reads empty lines up to 100 "
                        "body lines"]


def test_macro_longer_than_100_lines_ends_there() -> None:
    src = "\n".join(["#macro R = F(a)"] + ["x"] * 101 + ["#endmacro"]) + "\n"
    text, warnings = pre(src)
    assert text.split("\n")[100:104] == ["//x", "x", "//#endmacro", ""]
    assert warnings == ["1:1: #macro F ends after 100 lines (upstream's limit); the next line "
                        "is read as ordinary code",
                        "103:1: #endmacro is not a directive of the T-Language preprocessor: "
                        "the line becomes a comment"]


def test_macro_anywhere_in_a_line() -> None:
    # upstream drops the first six non-blank characters of any line with "#macro": here the
    # result is called "macroR" (so R stays R)
    text, warnings = pre("x; //#macro R = F(a)\nR = a;\n#endmacro\nv = F(w);\n")
    assert text.split("\n")[-4:] == ["//v = F(w);", "R = w;", "", ""]
    assert warnings == ["1:6: '#macro' in this line makes it a macro definition (upstream "
                        "reads it from the line's seventh non-blank character)"]
    with pytest.raises(CompileError, match=r"expected '#macro RESULT = NAME\(P1, \.\.\.\)'"):
        pre("R66 = 1; // see #macro\n")  # upstream crashes


def test_macro_redefinition_and_recursion() -> None:
    src = ("#macro R = F(a)\nR = a + a;\n#endmacro\n#macro R = F(a)\nR = a * a;\n#endmacro\n"
           "v = F(w);\n")
    text, warnings = pre(src)
    assert text.split("\n")[-3] == "v = w * w;"
    assert warnings == ["4:1: macro 'F' redefined: the last definition applies to the whole "
                        "file"]
    with pytest.raises(CompileError, match="macro 'F' expands without end"):
        pre("#macro R = F(a)\nR = F(a);\n#endmacro\nv = F(v);\n")


# -- through the compilers ------------------------------------------------------------------------

def test_compilers_report_the_preprocessor_warnings_first() -> None:
    vp = compile_vp("#pragma x\nvector a, b;\nb = a + 5;\nexit;\n", filename="w.vp")
    assert vp.warnings[0].startswith("w.vp:1:1: warning: #pragma is not a directive")
    assert len(vp.warnings) == 2
    cp = compile_cp("#endif\nscalar s;\ns = 1;\nexit;\n", filename="w.cp")
    assert cp.warnings == ["w.cp:1:1: warning: #endif is not a directive of the T-Language "
                           "preprocessor: the line is dropped (the code of every branch is "
                           "compiled)"]
