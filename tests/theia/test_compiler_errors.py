"""Bad T-Language programs: one clear error line with file:line:col, through the API and the
CLI (exit status 1, no traceback)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from isaforge.cli import main
from isaforge.theia.compiler import CompileError, compile_cp, compile_vp

# (source, message pattern, line, column)
VP_CASES = {
    "undefined-variable": ("vector a;\na = b + 1;\n", r"undefined variable 'b'", 2, 5),
    "undefined-array-index": ("vector a[4];\na[i] = 5;\n", r"undefined variable 'i'", 2, 3),
    "syntax-missing-semicolon": ("vector a\na = 1;\n", r"expected ';', found 'a'", 2, 1),
    "syntax-bad-statement": ("vector a;\n+ a;\n", r"expected a statement, found '\+'", 2, 1),
    "syntax-unclosed-block": ("vector a;\nif (a == 1) {\na = 3;\n",
                              r"expected '}', found end of file", 4, 1),
    "syntax-bad-operand": ("vector a;\na = * 3;\n", r"expected an operand, found '\*'", 2, 5),
    "syntax-no-comparison": ("vector a;\nwhile (a) { a++; }\n",
                             r"expected a comparison", 2, 9),
    "bad-swizzle-letter": ("vector a, b;\na = b.xw;\n", r"bad swizzle for 'b'", 2, 6),
    "bad-swizzle-two-lanes": ("vector a, b;\na = b.xy + a;\n", r"bad swizzle for 'b'", 2, 6),
    "bad-write-mask": ("vector a;\na.zx = 1;\n", r"bad write mask '\.zx'", 2, 2),
    "too-many-registers-array": ("vector big[300];\n", r"too many registers: variable 'big'",
                                 1, 8),
    "too-many-registers-vars": ("vector a[240];\nvector b[10], c[10];\n",
                                r"too many registers: variable 'c'", 2, 15),
    "too-many-registers-register": ("R300 = 1;\n", r"too many registers.*R300", 1, 1),
    "too-many-parameters": ("function f(a, b, c, d, e, g, h) { return; }\n",
                            r"cannot allocate more parameters: 'a'", 1, 12),
    "duplicate-parameter": ("function f(a, a) { return; }\n",
                            r"parameter 'a' is already defined", 1, 12),
    "duplicated-variable": ("vector a, b, a;\n", r"duplicated symbol 'a'", 1, 14),
    "undefined-function": ("vector a;\nfoo(a);\n", r"function definition for 'foo' not found",
                           2, 1),
    "undefined-thread": ("start T();\nthread U() { R70 = 1; }\n", r"undefined thread 'T'", 1, 7),
    "unknown-character": ("vector a;\na = 3 $ 4;\n", r"unexpected character '\$'", 2, 7),
    "constant-argument": ("function f(p) { return; }\nvector a;\nf(7);\n",
                          r"undefined variable '7'.*cannot be passed", 3, 3),
    "in-combined": ("vector a, b;\nb = in[a] + b;\n", r"in\[\.\.\.\] cannot be combined", 2, 5),
    "out-of-parameter": ("function f(p) { out[3] = p; }\n",
                         r"could not determine the addressing mode", 1, 27),
    "self-expanding-macro": ("#define A AA\nvector A;\n", r"'A' expands to itself", 1, 1),
    "define-without-value": ("#define A\nvector a;\n", r"#define needs a name and a value", 1, 1),
    "macro-in-a-comment": ("vector a; // see #macro\n", r"expected '#macro RESULT = NAME",
                           1, 18),
    "line-too-long": ("vector a;\n//" + "x" * 1022 + "\n", r"line longer than 1023", 2, 1024),
    "macro-calls-itself": ("#macro R = F(a)\nR = F(a);\n#endmacro\nvector v;\nv = F(v);\n",
                           r"macro 'F' expands without end", 5, 1),
}
CP_CASES = {
    "undefined-variable": ("scalar a;\na = b + 1;\n", r"undefined variable 'b'", 2, 5),
    "syntax-error": ("scalar a;\na = 1\nexit;\n", r"expected ';', found 'exit'", 3, 1),
    "bad-comparison": ("scalar a;\nwhile (a = 1) {}\n",
                       r"expected a comparison .*compare with '=='", 2, 10),
    "decrement": ("scalar a;\na--;\n", r"'--' is not supported", 2, 2),
    "duplicated": ("scalar a, a;\n", r"duplicated symbol 'a'", 1, 11),
    "too-many-temporaries": ("scalar a;\na = " + " + ".join(["1"] * 130) + ";\n",
                             r"too many registers", 2, None),
    "unknown-character": ("scalar a;\na = a * 2;\n", r"unexpected character '\*'", 2, 7),
    "copy-size-operand": ("scalar a;\ncopy_data_block < 2, a, 5>;\n",
                          r"undefined variable '5'", 2, 27),
    "missing-include": ('#include "nothere.th"\nscalar a;\n',
                        r"could not include file 'nothere.th'", 1, 1),
    "include-without-name": ("scalar a;\n  #include\n", r"#include needs a file name", 2, 3),
    "define-without-value": ("#define A\nscalar a;\n", r"#define needs a name and a value", 1, 1),
}


def _check(err: CompileError, name: str, pattern: str, line: int, col: int | None) -> None:
    text = str(err)
    assert "\n" not in text
    assert err.loc is not None
    assert (err.loc.file, err.loc.line) == (name, line), text
    if col is not None:
        assert err.loc.col == col, text
    assert text.startswith(f"{name}:{line}:{err.loc.col}: error: ")
    assert __import__("re").search(pattern, text), text


@pytest.mark.parametrize("case", list(VP_CASES))
def test_vp_errors(case: str) -> None:
    source, pattern, line, col = VP_CASES[case]
    with pytest.raises(CompileError) as err:
        compile_vp(source, filename="bad.vp")
    _check(err.value, "bad.vp", pattern, line, col)


@pytest.mark.parametrize("case", list(CP_CASES))
def test_cp_errors(case: str) -> None:
    source, pattern, line, col = CP_CASES[case]
    with pytest.raises(CompileError) as err:
        compile_cp(source, filename="bad.cp")
    _check(err.value, "bad.cp", pattern, line, col)


def test_error_in_an_included_file_names_that_file(tmp_path: Path) -> None:
    (tmp_path / "defs.th").write_text("scalar a;\na = zz;\n")
    main_file = tmp_path / "main.cp"
    main_file.write_text('#include "defs.th"\nexit;\n')
    with pytest.raises(CompileError) as err:
        compile_cp(main_file.read_text(), filename=str(main_file))
    assert err.value.loc is not None
    assert (Path(err.value.loc.file).name, err.value.loc.line) == ("defs.th", 2)


@pytest.mark.parametrize(("files", "expect"), [
    ({"bad.vp": "vector a;\na = b;\n", "bad.cp": "exit;\n"},
     "bad.vp:2:5: error: undefined variable 'b'"),
    ({"bad.vp": "vector a;\na = a.xw;\n", "bad.cp": "exit;\n"}, "bad.vp:2:6: error: bad swizzle"),
    ({"bad.vp": "vector a\n", "bad.cp": "exit;\n"}, "bad.vp:2:1: error: expected ';'"),
    ({"bad.vp": "vector r[999];\n", "bad.cp": "exit;\n"},
     "bad.vp:1:8: error: too many registers"),
    ({"bad.vp": "vector a;\nexit;\n", "bad.cp": "scalar s;\ns = t;\n"},
     "bad.cp:2:5: error: undefined variable 't'"),
    ({"bad.vp": "exit;\n"}, "error: file not found"),
    ({"bad.cp": "scalar s;\ns = 1\n"}, "bad.cp:3:1: error: expected ';', found end of file"),
])
def test_cli_reports_one_line_and_exit_1(tmp_path: Path, files: dict[str, str],
                                         expect: str) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    src = "bad.vp" if "bad.vp" in files else "bad.cp"
    r = CliRunner().invoke(main, ["theia", "compile", str(tmp_path / src),
                                  "-o", str(tmp_path / "out")])
    assert r.exit_code == 1, r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert "Traceback" not in r.output + r.stderr
    assert lines[0].startswith("isaforge: ")
    assert expect in lines[0], lines[0]


def test_cli_missing_source(tmp_path: Path) -> None:
    r = CliRunner().invoke(main, ["theia", "compile", str(tmp_path / "none.vp")])
    assert r.exit_code == 1
    assert "No such file" in r.stderr and "Traceback" not in r.stderr


def test_cli_not_text(tmp_path: Path) -> None:
    (tmp_path / "bin.vp").write_bytes(b"\xff\xfe\x00vector")
    (tmp_path / "bin.cp").write_text("exit;\n")
    r = CliRunner().invoke(main, ["theia", "compile", str(tmp_path / "bin.vp"), "-o",
                                  str(tmp_path / "o")])
    assert r.exit_code == 1
    assert "not a text file" in r.stderr
