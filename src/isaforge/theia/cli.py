"""``isaforge theia ...``: a thin layer over :mod:`isaforge.theia`.

``asm``/``disasm`` (the listing syntax and the ``.mem`` images), ``compile`` (the reference
driver ``theia_compile``), ``run``/``trace`` (the simulated test bench: CP and VPs at
instruction level, optionally the cycle model's trace) and ``check`` (a regression's pass
criteria). Every error is one line on stderr, ``isaforge: FILE:LINE:COL: error: ...`` or
``isaforge: error: ...``: exit status 1 for bad input, 2 for bad usage (an unknown option, a
missing argument).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..core.cli import guarded, read_input, write_output
from ..core.errors import EmulationError, IsaforgeError
from .machine.options import DEFAULT_MAX_STEPS, QUIRK_ALIASES, QUIRKS
from .machine.options import MAX_VPS as MAX_CORES

# Each command imports its engine when it runs: ``run --rtl`` on .mem images needs neither
# the compilers, the assembler nor the instruction-level simulator (and numpy).

CP_HELP = "the 32-bit control processor (control_code.mem / cp_code.list) instead of the VP"
# the simulator's quirks and the pipeline's (the cycle model's; see .cycle.runner)
PIPELINE_QUIRK_NAMES = ("branch-dep-reissue", "branch-next-cycle", "no-smu-stall",
                        "rtl-scoreboard", "rtl-structural")
QUIRK_CHOICES = sorted([*QUIRKS, *QUIRK_ALIASES, *PIPELINE_QUIRK_NAMES, "all"])
DEFAULT_MAX_CYCLES = 20_000_000
DIV_CHECK_CYCLES = 2_000_000  # a designed run's check of the RTL's DIV livelock

# --------------------------------------------------------------------------------------------
# One voice for usage errors too
# --------------------------------------------------------------------------------------------


class UsageError(click.UsageError):
    """click's usage error, said as ``isaforge: error: ...`` (exit status 2)."""

    def show(self, file: Any = None) -> None:
        msg = self.format_message().strip().rstrip(".")
        msg = msg[:1].lower() + msg[1:]
        hint = f" (see '{self.ctx.command_path} --help')" if self.ctx is not None else ""
        click.echo(f"isaforge: error: {msg}{hint}", file=file, err=file is None)


def _voiced(e: click.UsageError) -> click.UsageError:
    if isinstance(e, UsageError | click.exceptions.NoArgsIsHelpError):
        return e
    return UsageError(e.format_message(), e.ctx)


class Command(click.Command):
    """A command whose usage errors speak in isaforge's voice."""

    def make_context(self, info_name: str | None, args: list[str],
                     parent: click.Context | None = None, **extra: Any) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as e:
            raise _voiced(e) from None


class Group(click.Group):
    """The ``theia`` group: its commands are :class:`Command`, an unknown one is a usage
    error in isaforge's voice."""

    command_class = Command

    def make_context(self, info_name: str | None, args: list[str],
                     parent: click.Context | None = None, **extra: Any) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as e:
            raise _voiced(e) from None

    def resolve_command(self, ctx: click.Context, args: list[str]) -> Any:
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError as e:
            raise _voiced(e) from None


def _text(path: str) -> str:
    try:
        return read_input(path).decode("utf-8")
    except UnicodeDecodeError as e:
        raise IsaforgeError(f"{path}: not a text file ({e.reason})") from None


@click.group("theia", cls=Group)
def theia_cli() -> None:
    """THEIA GPU (VP and CP): asm and disasm compatible with the upstream compiler, the
    T-Language compilers, the simulated GPU and its cycle model."""


# --------------------------------------------------------------------------------------------
# asm, disasm, compile
# --------------------------------------------------------------------------------------------


@theia_cli.command("asm")
@click.argument("source", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, allow_dash=True),
              help=".mem file to write (code.mem, or control_code.mem with --cp)")
@click.option("--cp", is_flag=True, help=CP_HELP)
@guarded
def asm_cmd(source: str, output: str, cp: bool) -> None:
    """Assemble SOURCE (listing syntax, or a whole code.list / cp_code.list) to a .mem file."""
    from .asm import assemble
    from .image import write_mem

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
    from .decode import disassemble
    from .image import read_mem
    from .listing import listing

    words = read_mem(_text(mem), cp=cp, filename=mem)
    if plain:
        text = "".join(ins.detail.lossless_asm + "\n" for ins in disassemble(words, cp=cp))
    else:
        text = listing(words, cp=cp)
    write_output(output, text)


@theia_cli.command("compile")
@click.argument("sources", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("-o", "--output-dir", "out_dir", default=".", show_default=True,
              type=click.Path(file_okay=False),
              help="folder for code.mem, code.list, code_block_header.thh, control_code.mem "
                   "and cp_code.list")
@click.option("-I", "--include", "include_dirs", multiple=True,
              type=click.Path(file_okay=False), help="extra folder searched by a CP #include")
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
    from .compiler import compile_programs

    result = compile_programs(sources, out_dir, include_dirs)
    for warning in result.warnings:
        click.echo(f"isaforge: {warning}", err=True)
    if quiet:
        return
    if result.vp is not None:
        click.echo(f"CodeBlockSize: {result.vp.size}")
    for path in result.files:
        click.echo(f"wrote {path}")


# --------------------------------------------------------------------------------------------
# run, trace, check: the simulated test bench
# --------------------------------------------------------------------------------------------


@theia_cli.command("run")
@click.argument("prog", type=click.Path(path_type=Path))
@click.option("--tmem", type=click.Path(dir_okay=False, path_type=Path),
              help="TMEM image (hex words; default: tmem.mem beside the program)")
@click.option("-o", "--output-dir", "outdir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("."), show_default=True, help="where to write the dumps")
@click.option("--max-steps", type=click.IntRange(min=1), default=DEFAULT_MAX_STEPS,
              show_default=True, help="stop a runaway program after this many instructions")
@click.option("--cores", type=click.IntRange(1, MAX_CORES), default=4, show_default=True,
              help="number of VPs")
@click.option("--rtl", is_flag=True,
              help="run the RTL: the cycle model with every defect of the beta_2.0 RTL "
                   "decides what each VP issues and when; dumps (and, with trace, vp.N.log) "
                   "as its test bench writes them (same as --rtl-quirk all)")
@click.option("--rtl-quirk", "quirks", multiple=True, type=click.Choice(QUIRK_CHOICES),
              help="model one of the RTL's defects (repeatable; 'all' = --rtl). The pipeline's "
                   "(reissue-after-branch, mul-twice, div-reissue, branch-dep-reissue, "
                   "branch-next-cycle, no-smu-stall, rtl-scoreboard, rtl-structural) make the "
                   "cycle model run the VPs, as does mcu-lost")
@click.option("--max-cycles", type=click.IntRange(min=1), default=DEFAULT_MAX_CYCLES,
              show_default=True,
              help="with --rtl or a pipeline quirk: stop a VP that has not ended after this "
                   "many cycles of its own")
@click.option("--omem-image", type=click.Path(dir_okay=False, path_type=Path),
              help="also render each dumped VP's OMEM as RGBA pixels (PNG)")
@click.option("--image-width", type=click.IntRange(min=1), default=32, show_default=True,
              help="pixels per row of --omem-image")
@click.option("--cycles", is_flag=True,
              help="also run the cycle-level VP model and write vp.N.log (the RTL's "
                   "issue/commit trace, with cycle stamps)")
@click.option("--vcd", type=click.Path(dir_okay=False, path_type=Path),
              help="also write the cycle model's waveforms (issue, station busy, commit bus) "
                   "to this VCD file; implies --cycles")
@guarded
def run_cmd(prog: Path, tmem: Path | None, outdir: Path, max_steps: int, cores: int,
            rtl: bool, quirks: tuple[str, ...], max_cycles: int, omem_image: Path | None,
            image_width: int, cycles: bool = False, vcd: Path | None = None) -> None:
    """Run PROG (a .vp program, a code.mem, or a directory with code.mem and
    control_code.mem) on the simulated GPU and write the RTL-format dumps. A .vp program
    without its compiled images beside it is compiled in memory.

    By default the instruction-level simulator runs the machine as designed. With --rtl (or
    a pipeline quirk) the cycle model runs it instead, from reset, and decides what is
    issued when, as the RTL does."""
    from .machine.loader import load_program

    program = load_program(prog, tmem)
    for warning in program.warnings:
        click.echo(f"isaforge: {warning}", err=True)
    from .cycle.runner import is_timed

    if rtl or is_timed(quirks):
        _run_timed(program, ("all",) if rtl else quirks, outdir, cores, max_cycles,
                   trace=cycles or vcd is not None, vcd=vcd, omem_image=omem_image,
                   image_width=image_width)
        return
    from .machine.gpu import Gpu

    chosen = set(QUIRKS) if "all" in quirks else set(quirks)
    gpu = Gpu(cores=cores, quirks=chosen)
    gpu.load(program.code, program.control, program.tmem)
    result = gpu.run(max_steps=max_steps)
    outdir.mkdir(parents=True, exist_ok=True)
    for i in result.dumped:
        vp = gpu.vps[i]
        state = "finished" if i in result.finished else f"stopped at PC {vp.pc[0]}"
        _write_dumps(outdir, i, (vp.registers, vp.written), (vp.omem, vp.omem_written),
                     f"{vp.instructions} instructions, {state}", omem_image, image_width,
                     several=len(result.dumped) > 1)
    if cycles or vcd is not None:
        from .cycle.runner import quirks_from_names, write_cycle_outputs

        for line in write_cycle_outputs(program.code, program.tmem, result.dumped, outdir,
                                        quirks=quirks_from_names(quirks), vcd=vcd,
                                        control=program.control, cores=min(cores, 4)):
            click.echo(line)
    click.echo(f"CP: {result.cp_instructions} instructions; run ended: {result.ended}")
    notes = list(result.notes)
    if any(vp.divs for vp in gpu.vps) and "div-reissue" not in chosen:
        note = _rtl_div_note(program, cores, max_cycles)
        if note:
            notes.append(note)
    for note in notes:
        click.echo(f"note: {note}", err=True)


def _write_dumps(outdir: Path, i: int, rf: tuple[Any, Any], omem: tuple[Any, Any],
                 summary: str, omem_image: Path | None, image_width: int,
                 several: bool) -> None:
    """VP ``i``'s ``rf.vp.N.log`` and ``OMEM.vp.N.log`` from (values, written) pairs, its
    summary line, and its OMEM image (one per VP, numbered, when ``several`` are dumped)."""
    from .machine.dumps import format_omem, format_rf

    (outdir / f"rf.vp.{i}.log").write_text(format_rf(*rf))
    (outdir / f"OMEM.vp.{i}.log").write_text(format_omem(*omem))
    click.echo(f"VP{i}: {summary}; wrote rf.vp.{i}.log OMEM.vp.{i}.log")
    if omem_image is not None:
        from .machine.dumps import save_omem_image  # (numpy and Pillow: only for images)

        path = omem_image
        if several:
            path = omem_image.with_name(f"{omem_image.stem}.vp{i}{omem_image.suffix}")
        save_omem_image(path, *omem, image_width)
        click.echo(f"VP{i}: OMEM image {path}")


def _rtl_div_note(program: Any, cores: int, max_cycles: int) -> str | None:
    """Whether the RTL ends a program that divides: its issue unit re-issues an instruction
    that waited for a busy station, which livelocks some DIV loops. The timed run (untraced,
    every defect) says whether this program is one of them; a note only when it is."""
    from .cycle.runner import RTL_VPS, quirks_from_names, run_timed

    limit = min(max_cycles, DIV_CHECK_CYCLES)
    try:
        run = run_timed(program.code, program.control, program.tmem,
                        quirks=quirks_from_names(["all"]), cores=min(cores, RTL_VPS),
                        max_cycles=limit, trace=False)
    except IsaforgeError:
        return None  # (--rtl says why)
    where = run.still_running()
    if run.ended or "re-issuing the DIV" not in where:
        return None  # it ends, or it is just long: nothing to claim
    return f"the RTL does not end this program within {limit} cycles: {where} (--rtl)"


def _run_timed(program: Any, quirks: tuple[str, ...], outdir: Path, cores: int,
               max_cycles: int, *, trace: bool, vcd: Path | None, omem_image: Path | None,
               image_width: int) -> None:
    """``run``/``trace`` with the cycle model deciding what is issued (--rtl, or a pipeline
    quirk): the dumps of the VPs the test bench dumps, and with ``trace`` every VP's
    vp.N.log (the RTL's 4, empty for a VP never started)."""
    from .cycle.runner import RTL_VPS, lanes_written, quirks_from_names, run_timed
    from .cycle.vplog import LogFormatter

    if cores > RTL_VPS:
        raise IsaforgeError(f"the RTL has {RTL_VPS} VPs; --rtl and the pipeline quirks run at "
                            f"most {RTL_VPS} (--cores {cores})")
    unmodelled = sorted(set(quirks) & {"cp-exit-noop", "cp-not-noop"})
    q = quirks_from_names(quirks)
    if not program.control or not any(program.control):
        raise IsaforgeError("--rtl and the pipeline quirks run the test bench from reset: "
                            "the program needs its control program (control_code.mem)")
    outdir.mkdir(parents=True, exist_ok=True)
    logs = {}
    if trace:  # the test bench writes the 4 files, empty for a VP it never starts
        logs = {i: open(outdir / f"vp.{i}.log", "w") for i in range(cores)}  # noqa: SIM115
    formatters: dict[int, LogFormatter] = {}

    def sink(i: int, start_ns: int, events: list) -> None:
        fmt = formatters.get(i)
        if fmt is None:
            fmt = formatters[i] = LogFormatter(i, start_ns)
        logs[i].write("".join(fmt.lines(events)))

    try:
        run = run_timed(program.code, program.control, program.tmem, quirks=q, cores=cores,
                        max_cycles=max_cycles, trace=trace, sink=sink, blocks=True,
                        keep=range(cores) if vcd is not None else ())
    finally:
        for f in logs.values():
            f.close()
    for i in run.dumped:
        m = run.models[i]
        end = run.start_ns(i) + 20 * (m.finished_at or 0)
        _write_dumps(outdir, i, (m.rf, lanes_written(m.known)), (m.omem, m.omem_written),
                     f"{m.issues} issues, {m.commits} commits, ended at {end} ns "
                     f"(started at {run.start_ns(i)} ns)", omem_image, image_width,
                     several=len(run.dumped) > 1)
    if trace:
        click.echo(f"wrote {', '.join(f'vp.{i}.log' for i in range(cores))}")
    if vcd is not None and run.models:
        from .cycle.waves import write_vcd  # (pyvcd: imported only for waveforms)

        i = run.dumped[0] if run.dumped else min(run.models)
        with open(vcd, "w") as f:
            write_vcd(run.models[i], f, start_ns=run.start_ns(i))
        click.echo(f"VP{i}: waveforms {vcd} (time axis: the vp.{i}.log stamps)")
    for name in unmodelled:
        click.echo(f"note: --rtl-quirk {name}: the timed run's CP always runs the RTL's way "
                   "(EXIT and NOT doing nothing), and its MCU is the RTL's", err=True)
    if not run.ended:
        raise EmulationError(f"the run does not end within {max_cycles} cycles: "
                             f"{run.still_running()}; no dumps written (the RTL's test bench "
                             "dumps at the first EOF)")
    if run.end_ns is not None:
        click.echo(f"run ended at {run.end_ns} ns: the first EOF (VP{run.first_eof}) ends the "
                   "test bench's run")
    else:
        click.echo("run ended: every VP reached its end")


def _trace(**kwargs: Any) -> None:
    assert run_cmd.callback is not None
    run_cmd.callback(**kwargs, cycles=True)


theia_cli.add_command(Command(
    "trace", params=[p for p in run_cmd.params if p.name != "cycles"], callback=_trace,
    help="Run PROG and also write the cycle model's issue/commit trace vp.N.log, in the "
         "RTL's format with cycle stamps (same as 'run --cycles')."))


@theia_cli.command("check")
@click.argument("config", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--dir", "directory", type=click.Path(file_okay=False, path_type=Path),
              default=Path("."), show_default=True, help="directory holding the dumps")
@guarded
def check_cmd(config: Path, directory: Path) -> None:
    """Apply the pass criteria of a regression CONFIG to rf.vp.N.log / OMEM.vp.N.log."""
    from .check import check

    outcomes = check(config, directory)
    failed = sum(o.passed is False for o in outcomes)
    judged = sum(o.passed is not None for o in outcomes)
    for o in outcomes:
        word = "SKIP" if o.passed is None else "PASS" if o.passed else "FAIL"
        click.echo(f"{word}  {o.criterion}   ({'got ' if o.passed is not None else ''}"
                   f"{o.actual})")
    click.echo(f"{judged} criteria judged, {failed} failed")
    if failed or not judged:
        if not judged:
            click.echo(f"isaforge: error: {config}: no '==' criteria to judge", err=True)
        raise SystemExit(1)


__all__ = ["theia_cli"]
