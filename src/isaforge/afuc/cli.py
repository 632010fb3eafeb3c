"""``isaforge afuc ...``: a thin layer over :mod:`isaforge.afuc`.

Errors speak as every isaforge command does: bad input (a file that cannot be read, bad
firmware, a stream the firmware cannot run) is one ``isaforge: [FILE:LINE:COL: ]error: ...``
line on stderr and exit status 1; bad usage (click's errors) is handled by the top-level
group, exit status 2.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import click

from ..core.cli import guarded, preset, read_input
from ..core.errors import EmulationError, FirmwareError

if TYPE_CHECKING:
    from .machine import Effect, Emulator
    from .regdb import RegDB

# The engines are imported by the commands that use them: start-up is part of every
# command's time, and disasm/asm need neither the debugger nor (a5xx) the emulator (numpy).

GPU_HELP = "firmware id in hex as Mesa's -g takes it (6dc) or a GPU name (a650); overrides the file"
# (file arguments are read by the commands: a missing file or a directory is bad input)
FILE = click.Path(allow_dash=True)


@click.group("afuc")
def afuc_cli() -> None:
    """Adreno afuc (CP/SQE microcode, a5xx-a7xx): Mesa-compatible asm and disasm."""


def _use_code_cache() -> None:
    """Keep the emulator's generated code between runs (the commands that run firmware on
    a stream call this; asm and disasm start without the emulator)."""
    from .machine import codecache

    codecache.enable()


@afuc_cli.command("disasm")
@click.argument("firmware", type=FILE)
@click.option("-v", "--verbose", is_flag=True, help="show each word's index and hex value")
@click.option("-r", "--raw", is_flag=True, help="every dword of the file, no jump-table analysis")
@click.option("-c", "--color", is_flag=True,
              help="register names in colour (ANSI escapes, as Mesa's afuc-disasm -c)")
@click.option("--gpu", "-g", metavar="ID", help=GPU_HELP)
@click.option("-o", "--output", type=FILE, help="write to a file")
@guarded
def disasm_cmd(firmware: str, verbose: bool, raw: bool, color: bool, gpu: str | None,
               output: str | None) -> None:
    """Disassemble FIRMWARE as Mesa's afuc-disasm -u does."""
    from .commands import disasm

    disasm(firmware, verbose, raw, color, gpu, output)


@afuc_cli.command("asm")
@click.argument("source", type=FILE)
@click.option("-o", "--output", required=True, type=FILE,
              help="firmware file to write")
@click.option("--gpu", "-g", metavar="ID", help=GPU_HELP + " (default: from the first [literal])")
@guarded
def asm_cmd(source: str, output: str, gpu: str | None) -> None:
    """Assemble SOURCE (Mesa afuc-asm syntax) into firmware."""
    from .commands import asm

    asm(source, output, gpu)


def _effect_text(e: Effect) -> str:
    if e.kind == "mem":
        return f"mem   0x{e.addr:016x} = 0x{e.value:08x}"
    width = {"reg": 4, "pipe": 2, "ctrl": 3}[e.kind]
    name = f" {e.name}" if e.name else ""
    return f"{e.kind:<5} 0x{e.addr:0{width}x}{name} = 0x{e.value:08x}"


def _effect_lines(emu: Emulator, start: int, hide_to: int) -> list[str]:
    """:func:`_effect_text` of the effects of ``emu.effect_log[start:]``, but the
    control-register ones of entries before ``hide_to`` (each register's name and text made
    once; a run of registers written in a row is printed from its values)."""
    from .machine import Effect

    prefix: dict[tuple[str, int], str] = {}
    gpu: dict[int, str] = {}  # (GPU registers, the bulk of most streams: by number)
    runs: dict[tuple[int, int], str] = {}  # (first register, count) -> lines' template

    def head(kind: str, addr: int) -> str:
        got = prefix.get((kind, addr))
        if got is None:
            text = _effect_text(Effect(kind, addr, emu.name_of(kind, addr), 0, ""))
            got = prefix[(kind, addr)] = text[:-10]  # without the value, 0x%08x
            if kind == "reg":
                gpu[addr] = got
        return got

    out: list[str] = []
    log = emu.effect_log
    for i in range(start, len(log)):
        e = log[i]
        if len(e) == 4:
            kind, addr, value, _ = e
            if kind == "ctrl" and i < hide_to:
                continue
            out.append(f"{head(kind, addr)}0x{value:08x}")
        else:  # a run of registers: its lines in one string, from a template per run
            o, values, _ = e
            key = (o, len(values))
            tmpl = runs.get(key)
            if tmpl is None:
                tmpl = runs[key] = "\n".join(
                    (gpu.get(k) or head("reg", k)).replace("%", "%%") + "0x%08x"
                    for k in range(o, o + len(values)))
            out.append(tmpl % tuple(values))
    return out


def _json_lines(emu: Emulator, start: int, hide_to: int) -> list[str]:
    """The effects of ``emu.effect_log[start:]`` as JSON lines (as :func:`_effect_lines`)."""
    out = []
    for i in range(start, len(emu.effect_log)):
        e = emu.effect_log[i]
        if len(e) == 4:
            kind, addr, value, proc = e
            if kind == "ctrl" and i < hide_to:
                continue
            items = [(kind, addr, value)]
        else:
            items = [("reg", e[0] + k, v) for k, v in enumerate(e[1])]
        out.extend(json.dumps({"kind": k, "addr": a, "name": emu.name_of(k, a), "value": v})
                   for k, a, v in items)
    return out


@afuc_cli.command("run")
@click.argument("firmware", type=FILE)
@click.argument("stream", type=FILE)
@click.option("--json", "as_json", is_flag=True, help="effects as JSON lines")
@click.option("--trace", is_flag=True, help="each executed instruction and what it changed "
              "(Mesa's afuc-disasm -e format, real pc), instead of the effect list")
@click.option("--max-steps", default=10_000_000, show_default=True, type=click.IntRange(1),
              help="stop a runaway firmware after this many steps")
@click.option("--gpu", "-g", metavar="ID", help=GPU_HELP)
@click.option("--me", "me_firmware", type=FILE,
              help="a5xx: the ME firmware (FIRMWARE is then the PFP, joined by the MEQ)")
@click.option("--boot", "show_boot", is_flag=True,
              help="also print boot-time control-register effects (of the boot code and of "
                   "a CP_ME_INIT that starts the stream)")
@guarded
def run_cmd(firmware: str, stream: str, as_json: bool, trace: bool, max_steps: int,
            gpu: str | None, me_firmware: str | None, show_boot: bool) -> None:
    """Run FIRMWARE on the command stream STREAM and print its effects.

    STREAM is binary little-endian dwords, or text with one packet a line as Mesa's emulator
    prompt takes them (CP_MEM_WRITE 0x1000 0 0xdead, RB_RENDER_CNTL 0x11), plus
    '@ADDR: w0 w1 ...' lines that place IBs in GPU memory.
    """
    from .boot import BOOT_MAX_STEPS, jumptable_offset
    from .machine import Emulator, StepLimitError, TraceState
    from .machine.stream import Stream, parse_stream

    _use_code_cache()

    me = read_input(me_firmware) if me_firmware else None
    emu = Emulator(read_input(firmware), gpu, me_firmware=me)
    data = read_input(stream)
    tracer = TraceState(None, jumptable_offset(emu.fw), sink=_echo) if trace else None
    if tracer is not None:
        emu.set_tracer(tracer)
    shown = 0

    hide_to = 0  # control-register effects of effect_log[:hide_to] are boot-time: not shown

    def flush() -> None:
        nonlocal shown
        n = len(emu.effect_log)
        if shown < n:
            lines = (_json_lines if as_json else _effect_lines)(emu, shown, hide_to)
            if lines:
                _echo(lines)
        shown = n

    # boot-time: the boot code (to its first waitin) and a CP_ME_INIT that starts the
    # stream; their control-register effects are shown only with --boot
    words = parse_stream(data, emu.db, stream)
    init = _me_init_words(words.rb, emu.db)
    try:
        try:
            emu.run(max_steps=min(max_steps, BOOT_MAX_STEPS))
        except StepLimitError:
            if max_steps <= BOOT_MAX_STEPS:
                raise
            raise FirmwareError(
                f"the boot code did not reach waitin in {BOOT_MAX_STEPS} steps: the firmware "
                f"id {emu.fw.fwid:03x} ({emu.fw.gpu_name}) may be wrong for this file; try "
                "another with --gpu") from None
        emu.feed(Stream(words.rb[:init], words.memory))
        emu.run(max_steps=max_steps - emu.steps)
        if not show_boot:
            hide_to = len(emu.effect_log)
        emu.feed(Stream(words.rb[init:]))
        emu.run(max_steps=max_steps - emu.steps)
    except EmulationError:
        if tracer is not None:
            tracer.flush()
        else:
            flush()
        click.echo(emu.state_dump(), err=True)
        raise
    finally:
        if tracer is not None:
            tracer.flush()
    if not trace:
        flush()
    reps = f" (+{emu.rep_iterations} (rep) iterations)" if emu.rep_iterations else ""
    n_hidden = sum(1 for e in emu.effect_log[:hide_to] if e[0] == "ctrl")
    hidden = (f" ({n_hidden} boot-time control-register effects not shown: --boot)"
              if n_hidden and not trace else "")
    summary = (f"{emu.instructions} instructions{reps}, {emu.packets} packets, "
               f"{emu.effect_count} effects{hidden}; idle, waiting for a packet")
    click.echo(("; " if trace else "") + summary, err=as_json)


def _echo(lines: list[str]) -> None:
    """Print lines at once (a line at a time through click costs more than making it; and
    they hold no ANSI escapes for click to look for)."""
    click.echo("\n".join(lines), color=True)


def _me_init_words(rb: list[int], db: RegDB) -> int:
    """How many of the words ``rb`` starts with are a CP_ME_INIT packet (0: none)."""
    from .machine.stream import BadPacketError, parse_header

    if not rb:
        return 0
    try:
        h = parse_header(rb[0])
    except BadPacketError:
        return 0
    if h.type == 7 and h.ident == db.pm4_packet_id("CP_ME_INIT"):
        return min(len(rb), 1 + h.count)
    return 0


afuc_cli.add_command(preset(
    run_cmd, "trace", help="Run FIRMWARE on STREAM and print every executed instruction and "
    "what it changed, in Mesa's afuc-disasm -e format (same as 'run --trace').",
    trace=True, as_json=False))


@afuc_cli.command("debug")
@click.argument("firmware", type=click.Path())
@click.option("--stream", "-s", "streams", multiple=True, type=click.Path(),
              help="queue a command stream file first (binary dwords, or text as 'afuc run' "
                   "takes it); may be repeated")
@click.option("--gpu", "-g", metavar="ID", help=GPU_HELP)
@click.option("--me", "me_firmware", type=click.Path(),
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
    import shutil

    from .boot import boot
    from .debug import Batched, Debugger, repl
    from .machine import Emulator

    _use_code_cache()

    me = read_input(me_firmware) if me_firmware else None
    emu = Emulator(read_input(firmware), gpu, me_firmware=me)
    if emu.gen >= 6:
        boot(emu.fw)  # boot code that never reaches waitin: say so (and --gpu) now
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
            break
    else:
        echo = click.echo if interactive else Batched(click.echo)
        try:
            repl(dbg, sys.stdin, echo, interactive, banner=False)
        finally:
            if isinstance(echo, Batched):
                echo.flush()
    if dbg.failed and not interactive:
        sys.exit(1)  # a script with a failed command: status 1
