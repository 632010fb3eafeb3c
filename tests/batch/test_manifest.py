"""The batch manifest: jobs, sweeps, placeholders, and errors that name their line."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from isaforge.batch.manifest import ManifestError, command_checker, load_manifest
from isaforge.cli import main

from .helpers import BATCH_EXAMPLE, write

CHECK = command_checker(main)


def load(path: Path, **kw):
    return load_manifest(path, CHECK, **kw)


def test_jobs_and_sweeps_expand_in_manifest_order(tmp_path: Path) -> None:
    for name in ("a.s", "mm_lofi.s", "mm_hifi4.s", "x.npy", "cmds.txt"):
        write(tmp_path / "in" / name, "x\n")
    m = write(tmp_path / "m.toml", """
        timeout = 30
        [vars]
        dir = "in"

        [[job]]
        id = "first"
        args = ["tensix", "asm", "a.s", "-o", "a.bin"]
        inputs = ["{dir}/a.s"]

        [[sweep]]
        id = "fpu-{fidelity}-{fmt}"
        args = ["tensix", "run", "mm_{fidelity}.s", "--load", "srca:0:{fmt}=x.npy"]
        inputs = ["{dir}/mm_{fidelity}.s", "{dir}/x.npy"]
        timeout = 5
        [sweep.over]
        fidelity = ["lofi", "hifi4"]
        fmt = ["bf16", "fp16", "tf32"]

        [[job]]
        id = "last"
        args = [["afuc", "asm", "a.s", "-o", "a.fw"], ["afuc", "disasm", "a.fw"]]
        inputs = ["{dir}/a.s"]
        stdin = "in/cmds.txt"
        isolate = true
        """)
    jobs = load(m).jobs
    assert [j.id for j in jobs] == [
        "first", "fpu-lofi-bf16", "fpu-lofi-fp16", "fpu-lofi-tf32", "fpu-hifi4-bf16",
        "fpu-hifi4-fp16", "fpu-hifi4-tf32", "last"]
    fpu = jobs[5]
    assert fpu.steps == (("tensix", "run", "mm_hifi4.s", "--load", "srca:0:fp16=x.npy"),)
    assert [i.name for i in fpu.inputs] == ["mm_hifi4.s", "x.npy"]
    assert fpu.inputs[0].path == str(tmp_path / "in" / "mm_hifi4.s")
    assert fpu.timeout == 5 and jobs[0].timeout == 30
    assert fpu.line == 10 and jobs[-1].line == 19
    last = jobs[-1]
    assert len(last.steps) == 2 and last.isolate and last.stdin == "cmds.txt"
    assert [i.name for i in last.inputs] == ["a.s", "cmds.txt"]


def test_sweep_ids_without_placeholders_and_spliced_named_values(tmp_path: Path) -> None:
    write(tmp_path / "p.vp", "x")
    m = write(tmp_path / "m.toml", """
        [[sweep]]
        id = "theia"
        args = ["isaforge", "theia", "run", "p.vp", "{quirk}", "--cores", "{cores}"]
        inputs = ["p.vp"]
        [sweep.over]
        quirk = { designed = [], rtl = ["--rtl-quirk", "all"] }
        cores = [3, 4]
        """)
    jobs = load(m).jobs
    assert [j.id for j in jobs] == ["theia-designed-3", "theia-designed-4", "theia-rtl-3",
                                    "theia-rtl-4"]
    assert jobs[0].steps == (("theia", "run", "p.vp", "--cores", "3"),)
    assert jobs[3].steps == (("theia", "run", "p.vp", "--rtl-quirk", "all", "--cores", "4"),)


def test_ten_thousand_jobs_from_a_few_lines(tmp_path: Path) -> None:
    write(tmp_path / "p.s", "x")
    values = ", ".join(str(i) for i in range(100))
    m = write(tmp_path / "m.toml", f"""
        [[sweep]]
        id = "j-{{a}}-{{b}}"
        args = ["tensix", "asm", "p.s", "-o", "{{a}}{{b}}.bin"]
        inputs = ["p.s"]
        [sweep.over]
        a = [{values}]
        b = [{values}]
        """)
    jobs = load(m).jobs
    assert len(jobs) == 10_000 and len({j.id for j in jobs}) == 10_000
    assert jobs[-1].id == "j-99-99"


def test_variables_from_the_command_line_override_the_manifest(tmp_path: Path) -> None:
    write(tmp_path / "there" / "p.s", "x")
    m = write(tmp_path / "m.toml", """
        [vars]
        dir = "nowhere"
        [[job]]
        id = "a"
        args = ["tensix", "asm", "p.s"]
        inputs = ["{dir}/p.s"]
        """)
    with pytest.raises(ManifestError, match="input file not found: nowhere/p.s"):
        load(m)
    assert load(m, variables={"dir": "there"}).jobs[0].inputs[0].name == "p.s"


ERRORS = [
    # (manifest text, line, column, message part)
    ("""
     [[job]]
     id = "a"
     args = ["theia", "disasm", "x.mem"]

     [[job]]
     id = "a"
     args = ["theia", "disasm", "x.mem"]
     """, 6, 1, "duplicate job id 'a' (first at line 1)"),
    ("""
     [[job]]
     id = "a"
     args = ["theia", "runn", "x.vp"]
     """, 3, 1, "unknown command 'theia runn' (expected one of: "),
    ("""
     [[job]]
     id = "a"
     args = ["thiea", "run"]
     """, 3, 1, "unknown command 'thiea'"),
    ("""
     [[job]]
     id = "a"
     args = ["theia", "--cores", "4"]
     """, 3, 1, "'isaforge theia' needs a command"),
    ("""
     [[job]]
     id = "a"
     args = ["batch", "m.toml", "-o", "x"]
     """, 3, 1, "a job cannot run 'isaforge batch'"),
    ("""
     [[job]]
     id = "a"
     args = ["theia", "run", "x.vp"]
     inputs = [
         "missing.vp",
     ]
     """, 4, 1, "input file not found: missing.vp"),
    ("""
     [[job]]
     id = "a"
     args = ["theia", "run", "p.vp"]
     inputs = ["p.vp", "sub/p.vp"]
     """, 4, 1, "two inputs are named 'p.vp'"),
    ("""
     [[job]]
     id = "a/b"
     args = ["theia", "run", "p.vp"]
     """, 2, 1, "job id 'a/b' is not usable as a directory name"),
    ("""
     [[job]]
     id = "a"
     arg = ["theia", "run", "p.vp"]
     """, 3, 1, "unknown key 'arg' in [[job]]"),
    ("""
     [[job]]
     id = "a"
     args = ["theia", "run", "{prog}.vp"]
     """, 3, 1, "unknown placeholder '{prog}'"),
    ("""
     [[job]]
     id = "a"
     args = ["theia", "run", "p.vp"]
     timeout = -1
     """, 4, 1, "'timeout' must be a positive number"),
    ("""
     [[sweep]]
     id = "s-{x}"
     args = ["theia", "run", "p.vp"]
     [sweep.over]
     x = []
     """, 5, 1, "'x' must be a non-empty list of values"),
    ("""
     [[sweep]]
     id = "s"
     args = ["theia", "run", "p.vp"]
     [sweep.over]
     x = [1, 1]
     """, 2, 1, "duplicate job id 's-1' (first at line 1)"),
    ("""
     [[job]]
     id = "a"
     args = ["theia", "run", "p.vp"
     """, 4, 1, "Unclosed array"),
    ("""
     [[job]]
     id = "a"
     args = ["theia", "run", "p.vp"]

     [[jobs]]
     id = "b"
     """, 5, 1, "unknown key 'jobs'"),
]


@pytest.mark.parametrize("text,line,col,message", ERRORS)
def test_errors_name_their_line(tmp_path: Path, text: str, line: int, col: int,
                                message: str) -> None:
    write(tmp_path / "p.vp", "x")
    (tmp_path / "sub").mkdir()
    write(tmp_path / "sub" / "p.vp", "y")
    m = write(tmp_path / "m.toml", text)
    with pytest.raises(ManifestError) as info:
        load(m)
    text_ = str(info.value)
    assert text_.startswith(f"{m}:{line}:{col}: error: "), text_
    assert message in text_, text_


def test_a_manifest_error_stops_everything_before_it_runs(tmp_path: Path) -> None:
    """The CLI reports ``FILE:LINE:COL: error:`` and creates no output directory, although
    the first job is fine."""
    write(tmp_path / "p.s", "ttnop\n")
    m = write(tmp_path / "m.toml", """
        [[job]]
        id = "fine"
        args = ["tensix", "asm", "p.s", "-o", "p.bin"]
        inputs = ["p.s"]

        [[job]]
        id = "broken"
        args = ["tensix", "asm", "q.s"]
        inputs = ["q.s"]
        """)
    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["batch", str(m), "-o", str(out)])
    assert r.exit_code == 1
    assert r.output.strip() == f"isaforge: {m}:9:1: error: input file not found: q.s " \
        f"(paths are relative to the manifest, {tmp_path})"
    assert not out.exists()


def test_the_example_manifest_is_valid() -> None:
    """examples/batch/sweep.toml checks (its reference-data inputs exist beside the clone)."""
    from tests.refdata import refdata, refdata_root

    refdata("theia", "regressions")
    jobs = load(BATCH_EXAMPLE / "sweep.toml", variables={"refdata": str(refdata_root())}).jobs
    ids = [j.id for j in jobs]
    assert sum(i.startswith("tensix-fpu-") for i in ids) == 12
    assert sum(i.startswith("theia-test") for i in ids) == 9
    assert any(i.startswith("afuc-a630-") for i in ids)
