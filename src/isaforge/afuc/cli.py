"""``isaforge afuc ...``: a thin layer over :mod:`isaforge.afuc`."""

from __future__ import annotations

import click

from ..core.cli import guarded, read_input, write_output
from ..core.errors import AsmError
from . import assemble, listing

GPU_HELP = "firmware id in hex as Mesa's -g takes it (6dc) or a GPU name (a650); overrides the file"


@click.group("afuc")
def afuc_cli() -> None:
    """Adreno afuc (CP/SQE microcode, a5xx-a7xx): Mesa-compatible asm and disasm."""


@afuc_cli.command("disasm")
@click.argument("firmware", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("-v", "--verbose", is_flag=True, help="show each word's index and hex value")
@click.option("-r", "--raw", is_flag=True, help="every dword of the file, no jump-table analysis")
@click.option("--gpu", "-g", metavar="ID", help=GPU_HELP)
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="write to a file")
@guarded
def disasm_cmd(firmware: str, verbose: bool, raw: bool, gpu: str | None,
               output: str | None) -> None:
    """Disassemble FIRMWARE as Mesa's afuc-disasm -u does."""
    write_output(output, listing(read_input(firmware), gpu=gpu, verbose=verbose, raw=raw))


@afuc_cli.command("asm")
@click.argument("source", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="firmware file to write")
@click.option("--gpu", "-g", metavar="ID", help=GPU_HELP + " (default: from the first [literal])")
@guarded
def asm_cmd(source: str, output: str, gpu: str | None) -> None:
    """Assemble SOURCE (Mesa afuc-asm syntax) into firmware."""
    try:
        text = read_input(source).decode("utf-8")
    except UnicodeDecodeError as e:
        raise AsmError(f"{source} is not a text file ({e.reason} at byte {e.start})") from None
    write_output(output, assemble(text, gpu=gpu, filename=source))
