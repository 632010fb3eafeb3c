"""``isaforge tensix run``: loads, dumps, traces, and clear one-line errors on bad input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from isaforge.cli import main
from isaforge.tensix import assemble

from .machine.test_kernel import TRACE_TABLE, _faces, _tile, matmul_kernel


def invoke(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, ["tensix", "run", *args])
    return r.exit_code, r.stdout, r.stderr


@pytest.fixture
def tiles(tmp_path: Path) -> tuple[Path, Path, np.ndarray]:
    rng = np.random.default_rng(4)
    a = rng.integers(-8, 9, (64, 16)).astype(np.float32)
    b = rng.integers(-8, 9, (64, 16)).astype(np.float32)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    return tmp_path / "a.npy", tmp_path / "b.npy", _faces(_tile(b) @ _tile(a))


def test_run_matmul_with_load_dump_and_rwc_trace(tmp_path: Path, tiles) -> None:  # noqa: ANN001
    a, b, want = tiles
    prog = tmp_path / "mm.s"
    prog.write_text(".config ALU_ACC_CTRL_Fp32_enabled 1\n" + matmul_kernel(4))
    out = tmp_path / "d.npy"
    code, stdout, stderr = invoke(str(prog), "--load", f"srca:0:bf16={a}",
                                  "--load", f"srcb:0:bf16={b}", "--dump", f"dst:fp32={out}",
                                  "--trace", "rwc")
    assert code == 0, stderr
    np.testing.assert_array_equal(np.load(out)[:64], want.astype(np.float32))
    lines = [ln for ln in stdout.splitlines() if "ttmvmul" in ln]
    assert len(lines) == 64
    for i, ln in enumerate(lines[:16]):
        ra, ca, rb, cb, rd, cd = TRACE_TABLE[i]
        fid = 1 if i == 15 else 0
        assert ln.startswith("T1  ttmvmul 0,0,")
        assert ln.endswith(f"rwc_a={ra}(cr={ca}) rwc_b={rb}(cr={cb}) rwc_d={rd}(cr={cd}) "
                           f"fid={fid}")
    assert "done: 76 instructions (T0 0, T1 76, T2 0)" in stderr


def test_insn_and_all_traces(tmp_path: Path) -> None:
    prog = tmp_path / "p.s"
    prog.write_text(".thread 2\nttsetrwc 0,0,3,0,0,4\n.thread 0\n.word 0x02000000\n")
    code, stdout, _ = invoke(str(prog), "--trace", "insn")
    assert code == 0
    word = assemble("ttsetrwc 0,0,3,0,0,4")[0]
    assert stdout.splitlines() == ["T0  02000000  ttnop", f"T2  {word:08x}  ttsetrwc 0,0,3,0,0,4"]
    code, stdout, _ = invoke(str(prog), "--trace", "all")
    assert stdout.splitlines()[1].split() == ["2", "T2", f"{word:08x}", "ttsetrwc", "0,0,3,0,0,4",
                                              "rwc_a=0(cr=0)", "rwc_b=0(cr=0)", "rwc_d=3(cr=3)",
                                              "fid=0"]


def test_directives_gpr_semaphore_mopcfg_dump(tmp_path: Path) -> None:
    prog = tmp_path / "p.s"
    prog.write_text(".thread 1\n.gpr 3 40\n.semaphore 2 1 3\n.mopcfg 0 5\n"
                    "ttadddmareg 1,4,2,3\n")
    out = tmp_path / "g.npy"
    code, _, stderr = invoke(str(prog), "--dump", f"gpr:1={out}")
    assert code == 0, stderr
    g = np.load(out)
    assert g.shape == (64,) and g[3] == 40 and g[4] == 42


BAD = [
    ("ttfrobnicate 1,2\n", "p.s:1:1: error: unknown Blackhole Tensix instruction 'ttfrobnicate'"),
    ("ttsetc16 5\n", "p.s:1:1: error: ttsetc16 takes 2 operands, found 1"),
    ("ttsetrwc 0,0,0,0,99,1\n", "p.s:1:18: error: ttsetrwc: operand rwc_a = 99 does not fit"),
    ("nop\n.word 0xff000000\n", "p.s:2:1: error: .word 0xff000000: 0xff000000 is not a"),
    (".thread 5\n", "p.s:1:1: error: .thread 5 is out of range (0..2)"),
    (".frob 1\n", "p.s:1:1: error: unknown directive '.frob'"),
    ("ttdotpv 0,0,0,0,0\n", "error: thread 0: not implemented: DOTPV"),
    ("ttmvmul 0,0,0,0\n", "error: deadlock: no thread can make progress (thread 0: ttmvmul"),
]


@pytest.mark.parametrize("text,message", BAD, ids=[m.split("error: ")[1][:24] for _, m in BAD])
def test_bad_programs_give_one_line_errors(tmp_path: Path, text: str, message: str) -> None:
    prog = tmp_path / "p.s"
    prog.write_text(text.replace("nop\n", "ttnop\n"))
    code, stdout, stderr = invoke(str(prog))
    assert code == 1
    assert stderr.startswith("isaforge: ")
    assert message.replace("p.s", str(prog)) in stderr
    assert "Traceback" not in stderr and len(stderr.strip().splitlines()) == 1


def test_never_ending_program_hits_max_steps(tmp_path: Path) -> None:
    prog = tmp_path / "p.s"
    # a MOP expanding to 127 * 127 instructions stands in for a program that never ends
    prog.write_text(".mopcfg 0 127\n.mopcfg 1 127\n.mopcfg 2 0x02000000\n"
                    ".mopcfg 3 0x02000000\n.mopcfg 5 0x60000000\n.mopcfg 6 0x02000000\n"
                    ".mopcfg 7 0x60000000\n.mopcfg 8 0x60000000\nttmop 1,0,0\n")
    code, _, stderr = invoke(str(prog), "--max-steps", "1000")
    assert code == 1
    assert "did not finish within 1000 steps" in stderr and "Traceback" not in stderr


def test_undefined_behaviour_stop_or_continue(tmp_path: Path) -> None:
    prog = tmp_path / "p.s"
    prog.write_text("ttshiftdmareg 0,5,1,2,3\nttadddmareg 1,9,1,9\n")
    out = tmp_path / "g.npy"
    code, _, stderr = invoke(str(prog), "--dump", f"gpr:0={out}")
    assert code == 1 and "undefined behaviour: SHIFTDMAREG mode 5" in stderr
    code, _, stderr = invoke(str(prog), "--ub", "continue", "--dump", f"gpr:0={out}")
    assert code == 0 and "warning: thread 0: ttshiftdmareg 0,5,1,2,3: undefined" in stderr
    assert np.load(out)[9] == 1


@pytest.mark.parametrize("args,message", [
    (["--load", "srca:0:bf16"], "--load expects SPEC=FILE.npy"),
    (["--load", "srcc:0:bf16=x.npy"], "unknown register file 'srcc'"),
    (["--load", "srca:2:bf16=x.npy"], "bank 2 is out of range"),
    (["--dump", "dst:fp64=o.npy"], "unknown Dst format 'fp64'"),
    (["--load", "dst:fp32=missing.npy"], "No such file or directory"),
])
def test_bad_specs(tmp_path: Path, args: list[str], message: str) -> None:
    prog = tmp_path / "p.s"
    prog.write_text("ttnop\n")
    args = [a.replace("x.npy", str(tmp_path / "x.npy")) for a in args]
    code, _, stderr = invoke(str(prog), *args)
    assert code == 1 and message in stderr and "Traceback" not in stderr


def test_load_with_wrong_shape_and_non_npy(tmp_path: Path) -> None:
    prog = tmp_path / "p.s"
    prog.write_text("ttnop\n")
    np.save(tmp_path / "x.npy", np.zeros((65, 16), np.float32))
    code, _, stderr = invoke(str(prog), "--load", f"srca:0:bf16={tmp_path / 'x.npy'}")
    assert code == 1 and "outside 0..63" in stderr
    (tmp_path / "y.npy").write_bytes(b"not numpy")
    code, _, stderr = invoke(str(prog), "--load", f"dst:fp32={tmp_path / 'y.npy'}")
    assert code == 1 and "not a numpy .npy file" in stderr


def test_bundled_kernel_runs_from_the_command_line(tmp_path: Path, tiles) -> None:  # noqa: ANN001
    from importlib import resources

    a, b, want = tiles
    prog = resources.files("isaforge.tensix") / "data" / "matmul_kernel.s"
    out = tmp_path / "c.npy"
    code, _, stderr = invoke(str(prog), "--load", f"srca:0:bf16={a}", "--load",
                             f"srcb:0:bf16={b}", "--dump", f"dst:fp32={out}")
    assert code == 0, stderr
    np.testing.assert_array_equal(np.load(out)[:64], want.astype(np.float32))
