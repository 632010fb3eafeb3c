"""``isaforge theia ...``: a thin layer over :mod:`isaforge.theia`."""

from __future__ import annotations

import click

from ..core.cli import guarded, preset, read_input, write_output
from . import assemble, disassemble, listing, read_mem, write_mem

CP_HELP = "the 32-bit control processor (control_code.mem / cp_code.list) instead of the VP"


def _text(path: str) -> str:
    try:
        return read_input(path).decode("utf-8")
    except UnicodeDecodeError as e:
        raise click.ClickException(f"{path}: not a text file ({e.reason})") from None


@click.group("theia")
def theia_cli() -> None:
    """THEIA GPU (VP and CP): asm and disasm compatible with the upstream compiler."""


@theia_cli.command("asm")
@click.argument("source", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, allow_dash=True),
              help=".mem file to write (code.mem, or control_code.mem with --cp)")
@click.option("--cp", is_flag=True, help=CP_HELP)
@guarded
def asm_cmd(source: str, output: str, cp: bool) -> None:
    """Assemble SOURCE (listing syntax, or a whole code.list / cp_code.list) to a .mem file."""
    write_output(output, write_mem(assemble(_text(source), cp=cp, filename=source), cp=cp))


@theia_cli.command("disasm")
@click.argument("mem", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--cp", is_flag=True, help=CP_HELP)
@click.option("--plain", is_flag=True,
              help="instructions only, annotated so they reassemble (default: listing lines "
                   "in the compiler's code.list layout)")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="write to a file")
@guarded
def disasm_cmd(mem: str, cp: bool, plain: bool, output: str | None) -> None:
    """Disassemble a code.mem (or, with --cp, control_code.mem) file."""
    words = read_mem(_text(mem), cp=cp, filename=mem)
    if plain:
        text = "".join(ins.asm + "\n" for ins in disassemble(words, cp=cp))
    else:
        text = listing(words, cp=cp)
    write_output(output, text)


from .compiler.cli import compile_cmd  # noqa: E402 - the T-Language compilers' command

theia_cli.add_command(compile_cmd)


from .run_cli import check_cmd, run_cmd  # noqa: E402 - the simulator's commands

theia_cli.add_command(run_cmd)
theia_cli.add_command(preset(
    run_cmd, "trace", help="Run PROG and also write the cycle model's issue/commit trace "
    "vp.N.log, in the RTL's format with cycle stamps (same as 'run --cycles').", cycles=True))
theia_cli.add_command(check_cmd)
