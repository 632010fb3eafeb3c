"""``isaforge afuc debug FW``: the interactive debugger (:mod:`isaforge.afuc.debugger`)."""

from __future__ import annotations

import shutil
import sys

import click

from ..core.cli import guarded, read_input

GPU_OPTION_HELP = ("firmware id in hex as Mesa's -g takes it (6dc) or a GPU name (a650); "
                   "overrides the file")


@click.command("debug")
@click.argument("firmware", type=click.Path(dir_okay=False, allow_dash=False))
@click.option("--stream", "-s", "streams", multiple=True, type=click.Path(dir_okay=False),
              help="queue a command stream file first (binary dwords, or text as 'afuc run' "
                   "takes it); may be repeated")
@click.option("--gpu", "-g", metavar="ID", help=GPU_OPTION_HELP)
@click.option("--me", "me_firmware", type=click.Path(dir_okay=False),
              help="a5xx: the ME firmware (FIRMWARE is then the PFP, joined by the MEQ)")
@click.option("-x", "--execute", "commands", multiple=True, metavar="CMD",
              help="run this debugger command first (may be repeated), e.g. -x 'b CP_NOP'")
@click.option("--max-steps", default=1_000_000, show_default=True, type=click.IntRange(1),
              help="step limit of one run/continue command")
@click.option("--no-trace", is_flag=True,
              help="do not print each executed instruction ('trace on' turns it back on)")
@click.option("--view", "auto_view", is_flag=True,
              help="show the disassembly/registers/ROQ view after each run")
@guarded
def debug_cmd(firmware: str, streams: tuple[str, ...], gpu: str | None,
              me_firmware: str | None, commands: tuple[str, ...], max_steps: int,
              no_trace: bool, auto_view: bool) -> None:
    """Debug FIRMWARE on the emulator, at a prompt that takes Mesa's emulator commands.

    Type 'h' for the commands: Mesa's letters (s, r, d r, d c NAME, w r $02 5, w m ADDR V,
    p CP_NAME payload..., q) and more (continue, break, view, ...). Commands are read from
    stdin when it is not a terminal, one a line, as Mesa's emulator reads a script; the
    end of input quits.
    """
    from .debugger import Debugger, repl
    from .emu import Emulator

    me = read_input(me_firmware) if me_firmware else None
    emu = Emulator(read_input(firmware), gpu, me_firmware=me)
    for s in streams:
        emu.feed_file(read_input(s), s)
    interactive = sys.stdin.isatty()
    color = interactive and sys.stdout.isatty()
    width = shutil.get_terminal_size((110, 24)).columns if interactive else 110
    dbg = Debugger(emu, trace=not no_trace, max_steps=max_steps, color=color, width=width)
    dbg.auto_view = auto_view
    click.echo(dbg.banner())
    for cmd in commands:
        click.echo(dbg.prompt + cmd)
        text = dbg.execute(cmd)
        if text:
            click.echo(text)
        if dbg.done:
            return
    repl(dbg, sys.stdin, click.echo, interactive, banner=False)
