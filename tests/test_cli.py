"""The README's first command: ``isaforge demo`` round-trips every bundled example."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from isaforge.cli import main


def test_demo_round_trips_every_bundled_program() -> None:
    result = CliRunner().invoke(main, ["demo"])
    assert result.exit_code == 0, result.output
    assert "DIFFERENT" not in result.output
    for program in ("demo_a6xx.asm", "matmul_setup.s", "vector_add.list"):
        assert program in result.output
    assert result.output.count("identical") == 3
    # the emulators ran: THEIA's sum_loop wrote the lane sums of 1..10 times (1, 2, 3)
    squeezed = "".join(result.output.split())  # rich wraps table cells
    assert "VP2OMEM[0..2]=[55,110,165]" in squeezed
    assert "sum_loop.vp(run)" in squeezed


def test_every_architecture_has_its_command_group() -> None:
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0
    for arch in ("afuc", "tensix", "theia"):
        assert arch in result.output


def test_every_architecture_has_a_trace_command(tmp_path) -> None:
    """``isaforge <arch> trace`` is ``run`` with tracing on (the CLI verbs of the design)."""
    from importlib import resources

    from tests.refdata import refdata

    runner = CliRunner()
    stream = tmp_path / "s.txt"
    stream.write_text("CP_ME_INIT 0\nRB_RENDER_CNTL 0x11\n")
    fw = refdata("afuc", "firmware", "a630_sqe.fw")
    r = runner.invoke(main, ["afuc", "trace", str(fw), str(stream)])
    assert r.exit_code == 0, r.output
    assert "waitin" in r.output and "RB_RENDER_CNTL: 00000011" in r.output
    assert "--json" not in runner.invoke(main, ["afuc", "trace", "--help"]).output

    import numpy as np

    kernel = resources.files("isaforge") / "tensix" / "data" / "matmul_kernel.s"
    np.save(tmp_path / "ones.npy", np.ones((64, 16), np.float32))
    loads = [f"{src}:0:bf16={tmp_path / 'ones.npy'}" for src in ("srca", "srcb")]
    r = runner.invoke(main, ["tensix", "trace", str(kernel), "--load", loads[0],
                             "--load", loads[1]])
    assert r.exit_code == 0, r.output
    assert "ttmvmul" in r.output and "rwc_a=16(cr=0) rwc_b=8(cr=0) rwc_d=24(cr=0)" in r.output

    prog = resources.files("isaforge") / "examples" / "theia" / "programs" / "sum_loop.vp"
    r = runner.invoke(main, ["theia", "trace", str(prog), "-o", str(tmp_path / "out")])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "out" / "vp.2.log").read_text().strip()


@pytest.mark.parametrize("arch", ["demo", "tensix"])
def test_a_closed_pipe_ends_the_command_quietly(arch: str, tmp_path) -> None:
    """``isaforge ... | head``: no traceback, no error message, exit status 1 (for rich's output
    in the demo, and for click.echo's in a trace of a line per instruction)."""
    import subprocess
    import sys

    args = ["demo"]
    if arch == "tensix":
        prog = tmp_path / "nops.s"
        prog.write_text("\n".join([".thread 0", *["ttnop"] * 20000]) + "\n")
        args = ["tensix", "trace", str(prog)]
    proc = subprocess.Popen([sys.executable, "-m", "isaforge", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()  # the reader goes away while the command is still printing
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 1, err
    assert err == ""


@pytest.mark.parametrize("args, status, message", [
    (["nosuch"], 2, "isaforge: error: no such command 'nosuch' (see 'isaforge --help')"),
    (["tensix", "disasm", "--bogus", "x"], 2, "isaforge: error: no such option '--bogus'"),
    (["theia", "run", "--rtl-quirk", "nonsense", "x.vp"], 2, "isaforge: error: invalid value"),
    (["afuc", "disasm", "/nonexistent/fw.bin"], 1, "isaforge: error: "),
])
def test_one_voice_for_errors(args: list[str], status: int, message: str) -> None:
    """Bad usage (click's errors) and bad input both speak as one line ``isaforge: error:
    ...``; usage errors exit 2, bad input 1, and neither prints click's ``Error:``."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "isaforge", *args], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == status, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(message), proc.stderr
