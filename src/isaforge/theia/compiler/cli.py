"""``isaforge theia compile``: the reference driver ``theia_compile`` as a command."""

from __future__ import annotations

import click

from ...core.cli import guarded
from . import compile_programs


@click.command("compile")
@click.argument("sources", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("-o", "--output-dir", "out_dir", default=".", show_default=True,
              type=click.Path(file_okay=False),
              help="folder for code.mem, code.list, code_block_header.thh, control_code.mem "
                   "and cp_code.list")
@click.option("-I", "--include", "include_dirs", multiple=True,
              type=click.Path(file_okay=False), help="extra folder searched by #include")
@click.option("-q", "--quiet", is_flag=True,
              help="do not list the files written (warnings still go to stderr)")
@guarded
def compile_cmd(sources: tuple[str, ...], out_dir: str, include_dirs: tuple[str, ...],
                quiet: bool) -> None:
    """Compile a T-Language program: PROG.vp (and PROG.cp beside it), or PROG.cp alone.

    Writes the files of the upstream driver theia_compile, byte for byte. Several .vp
    programs are compiled as the driver does: one header with each program's size and
    offset, and their code one after the other in instructions.mem.
    """
    result = compile_programs(sources, out_dir, include_dirs)
    for warning in result.warnings:
        click.echo(f"isaforge: {warning}", err=True)
    if quiet:
        return
    if result.vp is not None:
        click.echo(f"CodeBlockSize: {result.vp.size}")
    for path in result.files:
        click.echo(f"wrote {path}")
