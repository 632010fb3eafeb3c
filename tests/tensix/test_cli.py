"""``isaforge tensix``'s voice: every error is one line, ``isaforge: FILE:LINE:COL: error:
...`` or ``isaforge: error: ...``; exit status 1 for bad input, 2 for bad usage."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from isaforge.cli import main


@pytest.mark.parametrize("args, message", [
    (["disasm", "--frob", "x"], "no such option '--frob' (see 'isaforge tensix disasm --help')"),
    (["disasm", "--syntax", "att", "x"], "invalid value for '--syntax': 'att' is not one of"),
    (["asm", "k.s"], "missing option '-o' / '--output' (see 'isaforge tensix asm --help')"),
    (["run"], "missing argument 'PROGRAM'"),
    (["run", "--max-steps", "0", "p.s"], "invalid value for '--max-steps'"),
    (["trace", "--trace", "rwc", "p.s"], "no such option '--trace'"),
    (["frob"], "no such command 'frob' (see 'isaforge tensix --help')"),
])
def test_bad_usage_is_one_line_and_status_2(args: list[str], message: str) -> None:
    r = CliRunner().invoke(main, ["tensix", *args], prog_name="isaforge")
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith("isaforge: error: ") and message in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and r.stdout == ""


def test_bad_input_is_one_line_and_status_1(tmp_path: Path) -> None:
    binary = tmp_path / "b.s"
    binary.write_bytes(b"\xff\xfe\x00")
    bad = tmp_path / "bad.s"
    bad.write_text("ttnop\nttsetc16 1\n")
    cases = [
        (["asm", str(binary), "-o", str(tmp_path / "o")], f"error: {binary}: not a text file"),
        (["run", str(binary)], f"error: {binary}: not a text file"),
        (["asm", str(bad), "-o", str(tmp_path / "o")], f"{bad}:2:1: error: ttsetc16 takes"),
        (["run", str(tmp_path / "none.s")], "error: No such file or directory"),
        (["disasm", str(binary)], "error: "),
    ]
    for args, message in cases:
        r = CliRunner().invoke(main, ["tensix", *args])
        assert r.exit_code == 1, (args, r.output)
        assert r.stderr.startswith("isaforge: ") and message in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1


def test_mopcfg_option_sets_the_fidelity_phases_of_the_bundled_kernel(tmp_path: Path) -> None:
    """``--mopcfg 1:1=N`` writes MopCfg[1] of the math thread after the program's own
    directives: N = 4 is what the kernel sets itself (same Dst), N = 1 is LoFi (other Dst);
    malformed or out-of-range writes are one line, status 1."""
    from importlib import resources

    import numpy as np

    kernel = str(resources.files("isaforge") / "tensix" / "data" / "matmul_kernel.s")
    rng = np.random.default_rng(5)
    for name in ("a", "b"):
        np.save(tmp_path / f"{name}.npy", rng.uniform(-2, 2, (64, 16)).astype(np.float32))

    def run(*extra: str) -> np.ndarray:
        out = tmp_path / "c.npy"
        r = CliRunner().invoke(main, ["tensix", "run", kernel, *extra,
                                      "--load", f"srca:0:bf16={tmp_path / 'a.npy'}",
                                      "--load", f"srcb:0:bf16={tmp_path / 'b.npy'}",
                                      "--dump", f"dst:fp32={out}"])
        assert r.exit_code == 0, r.output
        return np.load(out).view(np.uint32)

    own = run()
    assert (run("--mopcfg", "1:1=4") == own).all()
    assert (run("--mopcfg", "1:1=1") != own).any()
    for bad, what in (("1:1", "expects THREAD:INDEX=VALUE"), ("3:1=2", "thread 3 is out"),
                      ("1:9=2", "index 9 is out"), ("1:x=2", "index must be a number")):
        r = CliRunner().invoke(main, ["tensix", "run", kernel, "--mopcfg", bad])
        assert r.exit_code == 1 and what in r.stderr, r.output
