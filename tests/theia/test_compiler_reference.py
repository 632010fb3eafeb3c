"""The T-Language compilers against the upstream compilers' outputs (refdata/theia).

For every regression, ``compile_vp(X.vp)`` and ``compile_cp(X.cp)`` (with the header the
driver generates) give code.mem, code.list, code_block_header.thh, control_code.mem and
cp_code.list byte for byte as the reference driver ``theia_compile`` wrote them; listings are
compared exactly (stronger than the "identical up to whitespace" the issue asks for).
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from isaforge import theia
from isaforge.theia.compiler import (
    CompileError,
    CpProgram,
    VpProgram,
    compile_cp,
    compile_program,
    compile_vp,
    program_name,
)
from tests.refdata import refdata

REGRESSIONS = [
    "test1_IO", "test1_out_of_order_1", "test1_tmem", "test_arrays_1", "test_bitwise_operations",
    "test_branches_1", "test_expressions", "test_multihtread1", "test_omem_1",
]
# (folder parts, program name): every folder of refdata/theia with T-Language sources and the
# reference compiler's outputs for them
PROGRAMS = [(("regressions", t), t) for t in REGRESSIONS] + [(("perf_div_livelock",),
                                                               "perf_loop")]
OUTPUTS = ["code.mem", "code.list", "code_block_header.thh", "control_code.mem", "cp_code.list"]


@functools.cache
def _compiled(parts: tuple[str, ...], name: str) -> tuple[VpProgram, str, CpProgram]:
    folder = refdata("theia", *parts)
    vp_path, cp_path = folder / f"{name}.vp", folder / f"{name}.cp"
    vp = compile_vp(vp_path.read_text(), filename=str(vp_path))
    header = vp.header(program_name(vp_path.name))
    cp = compile_cp(cp_path.read_text(), filename=str(cp_path),
                    headers={"code_block_header.thh": header})
    return vp, header, cp


def _ours(parts: tuple[str, ...], name: str, output: str) -> str:
    vp, header, cp = _compiled(parts, name)
    return {"code.mem": vp.mem, "code.list": vp.listing, "code_block_header.thh": header,
            "control_code.mem": cp.mem, "cp_code.list": cp.listing}[output]


def test_every_regression_folder_is_covered() -> None:
    root = refdata("theia", "regressions")
    assert sorted(p.name for p in root.iterdir() if p.is_dir()) == sorted(REGRESSIONS)


# perf_div_livelock keeps no code_block_header.thh (its control_code.mem shows the size used)
CASES = [(parts, name, out) for parts, name in PROGRAMS for out in OUTPUTS
         if not (name == "perf_loop" and out == "code_block_header.thh")]


@pytest.mark.parametrize(("parts", "name", "output"), CASES,
                         ids=[f"{n}-{o}" for _, n, o in CASES])
def test_output_is_the_reference(parts: tuple[str, ...], name: str, output: str) -> None:
    ref = refdata("theia", *parts, output).read_text()
    ours = _ours(parts, name, output)
    if output.endswith(".list"):
        # the issue asks for "identical up to whitespace"; we hold the stronger line
        assert ours.split() == ref.split()
    assert ours == ref


@pytest.mark.parametrize(("parts", "name"), PROGRAMS, ids=[n for _, n in PROGRAMS])
def test_words_agree_with_the_listing_and_the_assembler(parts: tuple[str, ...],
                                                        name: str) -> None:
    vp, _, cp = _compiled(parts, name)
    assert theia.read_mem(vp.mem) == vp.words
    assert theia.assemble(vp.listing) == vp.words
    assert theia.assemble(cp.listing, cp=True) == cp.words
    assert len(vp.words) == vp.size
    # the size in the header is the number of VP instructions
    assert f"_SIZE ({vp.size}<<20)" in vp.header(name)


def test_multicore_cp_programs() -> None:
    folder = refdata("theia", "multicore_smoke")
    render4 = compile_cp((folder / "render4.cp").read_text(), filename="render4.cp")
    assert render4.mem == (folder / "control_code.mem").read_text()
    committed = compile_cp((folder / "simple_render.cp").read_text(),
                           filename=str(folder / "simple_render.cp"))  # includes theia.thh
    assert committed.mem == (folder / "control_code.committed_simple_render.mem").read_text()
    assert committed.listing == (folder / "cp_code.committed_simple_render.list").read_text()


def test_simple_render_fails_like_the_reference_compiler() -> None:
    # RUN.md: the final upstream compiler rejects simple_render.vp with
    # "ERROR: Undefined variable 'Ur68'" (#define V0 r68 rewrites UV0 inside a word).
    # Its '#include "Utils.th"' (a file not in the repository) is a comment to the VP
    # preprocessor, as upstream.
    path = refdata("theia", "multicore_smoke", "simple_render.vp")
    with pytest.raises(CompileError, match=r"undefined variable 'Ur68'") as err:
        compile_vp(path.read_text(), filename=str(path))
    assert err.value.loc is not None and err.value.loc.line == 180


def test_compile_program_writes_the_driver_files(tmp_path: Path) -> None:
    src = refdata("theia", "regressions", "test_multihtread1", "test_multihtread1.vp")
    result = compile_program(src, tmp_path / "out")
    assert sorted(p.name for p in result.files) == sorted(OUTPUTS)
    for name in OUTPUTS:
        ref = refdata("theia", "regressions", "test_multihtread1", name).read_bytes()
        assert (tmp_path / "out" / name).read_bytes() == ref, name
