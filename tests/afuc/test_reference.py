"""afuc against Mesa's own outputs on real firmware (refdata/afuc, see its ORACLE.md)."""

from __future__ import annotations

import difflib

import pytest

from isaforge.afuc import assemble, listing
from tests.refdata import refdata

FIRMWARE = ["a530_pfp", "a530_pm4", "a630_sqe"]
MODES = {
    "asm": {},
    "verbose.txt": {"verbose": True},
    "raw.txt": {"raw": True},
    "raw-verbose.txt": {"raw": True, "verbose": True},
    "color.txt": {"color": True},  # Mesa's -c: ANSI escapes, compared byte for byte
}


def _same_text(got: str, want: str, what: str) -> None:
    if got != want:
        diff = "\n".join(
            list(difflib.unified_diff(want.splitlines(), got.splitlines(), "mesa", "ours",
                                      lineterm="", n=1))[:40]
        )
        pytest.fail(f"{what} differs from Mesa's output:\n{diff}")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fw", FIRMWARE)
def test_disasm_identical_to_mesa(fw: str, mode: str) -> None:
    data = refdata("afuc", "firmware", f"{fw}.fw").read_bytes()
    want = refdata("afuc", "disasm", f"{fw}.{mode}").read_text()
    _same_text(listing(data, **MODES[mode]), want, f"{fw} ({mode})")


@pytest.mark.parametrize("fw", FIRMWARE)
def test_mesa_disassembly_reassembles_to_firmware(fw: str) -> None:
    src = refdata("afuc", "disasm", f"{fw}.asm")
    want = refdata("afuc", "firmware", f"{fw}.fw").read_bytes()
    assert assemble(src.read_text(), filename=str(src)) == want


@pytest.mark.parametrize("fw", FIRMWARE)
def test_our_disassembly_reassembles_to_firmware(fw: str) -> None:
    data = refdata("afuc", "firmware", f"{fw}.fw").read_bytes()
    assert assemble(listing(data)) == data


@pytest.mark.parametrize("test", ["afuc_test", "afuc_test_a7xx"])
@pytest.mark.parametrize("folder", ["traces", "reference"])
def test_mesa_test_sources_assemble_to_reference(test: str, folder: str) -> None:
    """Mesa's hand-written test sources and their canonical disassembly both assemble to
    Mesa's reference firmware (a6xx, and a7xx with BV/LPAC sections)."""
    src = refdata("afuc", "mesa-tests", folder, f"{test}.asm")
    want = refdata("afuc", "mesa-tests", "reference", f"{test}.fw").read_bytes()
    assert assemble(src.read_text(), filename=str(src)) == want


@pytest.mark.parametrize("test", ["afuc_test", "afuc_test_a7xx"])
def test_mesa_test_firmware_disassembles_to_reference(test: str) -> None:
    data = refdata("afuc", "mesa-tests", "reference", f"{test}.fw").read_bytes()
    want = refdata("afuc", "mesa-tests", "reference", f"{test}.asm").read_text()
    _same_text(listing(data), want, test)


def test_cli_disasm_and_asm(tmp_path) -> None:
    from click.testing import CliRunner

    from isaforge.cli import main

    fw = refdata("afuc", "firmware", "a630_sqe.fw")
    out = tmp_path / "a630.asm"
    runner = CliRunner()
    r = runner.invoke(main, ["afuc", "disasm", str(fw), "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert out.read_text() == refdata("afuc", "disasm", "a630_sqe.asm").read_text()
    back = tmp_path / "a630.fw"
    r = runner.invoke(main, ["afuc", "asm", str(out), "-o", str(back)])
    assert r.exit_code == 0, r.output
    assert back.read_bytes() == fw.read_bytes()


def test_gpu_override_changes_generation() -> None:
    """--gpu overrides the id in the file: the a630 words read as a7xx decode differently."""
    data = refdata("afuc", "firmware", "a630_sqe.fw").read_bytes()
    text = listing(data, gpu="a730", raw=True)
    assert text.startswith("; a7xx microcode\n")
    assert text != listing(data, raw=True).replace("; a6xx", "; a7xx")
