"""Colour disassembly (``--color``, Mesa's ``afuc-disasm -c``): refdata's ``*.color.txt``
are compared byte for byte in test_reference.py; here the CLI and the name colouring."""

from __future__ import annotations

from click.testing import CliRunner

from isaforge.afuc.color import GREEN, RED, RESET, YELLOW, color_name
from isaforge.cli import main as cli_main
from tests.refdata import refdata


def test_cli_color_is_mesas_bytes():
    fw = refdata("afuc", "firmware", "a630_sqe.fw")
    want = refdata("afuc", "disasm", "a630_sqe.color.txt").read_bytes()
    res = CliRunner().invoke(cli_main, ["afuc", "disasm", "--color", str(fw)])
    assert res.exit_code == 0
    assert res.stdout_bytes == want
    plain = CliRunner().invoke(cli_main, ["afuc", "disasm", str(fw)])
    assert "\x1b" not in plain.output


def test_name_parts():
    assert color_name("CP_SCRATCH[0x6].REG") == (
        f"{GREEN}CP_SCRATCH{RESET}[{YELLOW}0x6{RESET}].{GREEN}REG{RESET}")
    assert color_name("MEM_READ_ADDR+0x1") == f"{GREEN}MEM_READ_ADDR{RESET}+{RED}0x1{RESET}"
    assert color_name("VSC_DRAW_STRM_ADDRESS_HI", hi_half=True) == (
        f"{GREEN}VSC_DRAW_STRM_ADDRESS{RESET}_HI")
    assert color_name("LOAD_STORE_HI") == f"{GREEN}LOAD_STORE_HI{RESET}"
