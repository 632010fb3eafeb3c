"""``isaforge afuc ...``: a thin layer over :mod:`isaforge.afuc`."""

from __future__ import annotations

import click

from ..core.cli import guarded, preset, read_input, write_output
from ..core.errors import AsmError, EmulationError
from . import assemble, listing
from .debug_cli import debug_cmd

GPU_HELP = "firmware id in hex as Mesa's -g takes it (6dc) or a GPU name (a650); overrides the file"


@click.group("afuc")
def afuc_cli() -> None:
    """Adreno afuc (CP/SQE microcode, a5xx-a7xx): Mesa-compatible asm and disasm."""


afuc_cli.add_command(debug_cmd)


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


def _effect_text(e) -> str:
    if e.kind == "mem":
        return f"mem   0x{e.addr:016x} = 0x{e.value:08x}"
    width = {"reg": 4, "pipe": 2, "ctrl": 3}[e.kind]
    name = f" {e.name}" if e.name else ""
    return f"{e.kind:<5} 0x{e.addr:0{width}x}{name} = 0x{e.value:08x}"


@afuc_cli.command("run")
@click.argument("firmware", type=click.Path(dir_okay=False, allow_dash=True))
@click.argument("stream", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--json", "as_json", is_flag=True, help="effects as JSON lines")
@click.option("--trace", is_flag=True, help="each executed instruction and what it changed "
              "(Mesa's afuc-disasm -e format, real pc), instead of the effect list")
@click.option("--max-steps", default=10_000_000, show_default=True, type=click.IntRange(1),
              help="stop a runaway firmware after this many steps")
@click.option("--gpu", "-g", metavar="ID", help=GPU_HELP)
@click.option("--me", "me_firmware", type=click.Path(dir_okay=False),
              help="a5xx: the ME firmware (FIRMWARE is then the PFP, joined by the MEQ)")
@guarded
def run_cmd(firmware: str, stream: str, as_json: bool, trace: bool, max_steps: int,
            gpu: str | None, me_firmware: str | None) -> None:
    """Run FIRMWARE on the command stream STREAM and print its effects.

    STREAM is binary little-endian dwords, or text with one packet a line as Mesa's emulator
    prompt takes them (CP_MEM_WRITE 0x1000 0 0xdead, RB_RENDER_CNTL 0x11), plus
    '@ADDR: w0 w1 ...' lines that place IBs in GPU memory.
    """
    import json

    from .disasm import jumptable_offset
    from .emu import Emulator
    from .trace import TraceState

    me = read_input(me_firmware) if me_firmware else None
    emu = Emulator(read_input(firmware), gpu, me_firmware=me)
    emu.feed_file(read_input(stream), stream)
    if trace:
        tw = TraceState(click.echo, jumptable_offset(emu.fw))
        emu.tracer = tw
        for p in emu.procs:
            p.tw = tw
    shown = 0

    def flush() -> None:
        nonlocal shown
        for e in emu.effects[shown:]:
            click.echo(json.dumps(e.as_json()) if as_json else _effect_text(e))
        shown = len(emu.effects_raw)

    try:
        emu.run(max_steps=max_steps)
    except EmulationError:
        if not trace:
            flush()
        click.echo(emu.state_dump(), err=True)
        raise
    if not trace:
        flush()
    summary = (f"{emu.steps} instructions, {emu.packets} packets, "
               f"{len(emu.effects_raw)} effects; idle, waiting for a packet")
    click.echo(("; " if trace else "") + summary, err=as_json)


afuc_cli.add_command(preset(
    run_cmd, "trace", help="Run FIRMWARE on STREAM and print every executed instruction and "
    "what it changed, in Mesa's afuc-disasm -e format (same as 'run --trace').",
    trace=True, as_json=False))
