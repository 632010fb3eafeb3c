"""The README's first command: ``isaforge demo`` round-trips every bundled example."""

from __future__ import annotations

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
