"""``isaforge tensix ...``: a thin layer over :mod:`isaforge.tensix`."""

from __future__ import annotations

import click

from ..core.cli import guarded, preset, read_input, write_output
from .asm import assemble_bytes
from .disasm import disassemble, listing, looks_like_listing, relist

SYNTAX = click.Choice(["objdump", "llk"])


@click.group("tensix")
def tensix_cli() -> None:
    """Tenstorrent Blackhole Tensix coprocessor: asm and disasm (objdump and LLK syntax), run."""


@tensix_cli.command("disasm")
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--rotated", is_flag=True,
              help="words are in RISC-V stream order (each Tensix word rotated left by 2)")
@click.option("--syntax", type=SYNTAX, default="objdump", show_default=True,
              help="objdump's text, or LLK macro calls (TTI_SETC16(5, 4))")
@click.option("-v", "--verbose", is_flag=True, help="show each word's offset and raw value")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="write to a file")
@guarded
def disasm_cmd(file: str, rotated: bool, syntax: str, verbose: bool,
               output: str | None) -> None:
    """Disassemble FILE: little-endian Tensix words, or an objdump listing (every Tensix word
    it shows is disassembled again, and differences from objdump's text are marked)."""
    data = read_input(file)
    if looks_like_listing(data):
        write_output(output, relist(data.decode("utf-8"), syntax=syntax, what=file))
        return
    instrs = disassemble(data, rotated=rotated, syntax=syntax, what=file)
    write_output(output, listing(instrs, verbose=verbose))


@tensix_cli.command("asm")
@click.argument("source", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, allow_dash=True),
              help="file of little-endian words to write")
@click.option("--rotated", is_flag=True,
              help="write words in RISC-V stream order (rotated left by 2, as .ttinsn emits)")
@guarded
def asm_cmd(source: str, output: str, rotated: bool) -> None:
    """Assemble SOURCE (objdump or LLK macro syntax) into Tensix words."""
    try:
        text = read_input(source).decode("utf-8")
    except UnicodeDecodeError as e:
        raise click.ClickException(f"{source}: not a text file ({e.reason})") from None
    write_output(output, assemble_bytes(text, rotated=rotated, filename=source))


def _register_run() -> None:
    from .run_cli import run_cmd

    tensix_cli.add_command(run_cmd)
    tensix_cli.add_command(preset(
        run_cmd, "trace", help="Run PROG.s and print every executed instruction: thread, "
        "word, disassembly and the RWCs after it (same as 'run --trace all').", trace="all"))


_register_run()
