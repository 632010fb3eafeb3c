"""``isaforge theia run`` and ``isaforge theia check``: the simulated test bench.

``run`` loads a program as the RTL test bench does (VP image into main memory, CP image into
the CP, ``tmem.mem`` into TMEM), runs CP and VPs at instruction level, and writes
``rf.vp.N.log`` / ``OMEM.vp.N.log`` for every VP the CP started (or, with the ``first-eof``
quirk, for the VP that ended the run) into ``-o DIR``. ``check`` applies a regression's
``.config`` criteria to such dumps.
"""

from __future__ import annotations

from pathlib import Path

import click

from ..core.cli import guarded
from .check import check
from .dumps import format_omem, format_rf
from .gpu import DEFAULT_MAX_STEPS, MAX_CORES, QUIRK_ALIASES, QUIRKS, Gpu
from .loader import load_program

QUIRK_CHOICES = sorted([*QUIRKS, *QUIRK_ALIASES, "all"])


@click.command("run")
@click.argument("prog", type=click.Path(path_type=Path))
@click.option("--tmem", type=click.Path(dir_okay=False, path_type=Path),
              help="TMEM image (hex words; default: tmem.mem beside the program)")
@click.option("-o", "--output-dir", "outdir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("."), show_default=True, help="where to write the dumps")
@click.option("--max-steps", type=click.IntRange(min=1), default=DEFAULT_MAX_STEPS,
              show_default=True, help="stop a runaway program after this many instructions")
@click.option("--cores", type=click.IntRange(1, MAX_CORES), default=4, show_default=True,
              help="number of VPs")
@click.option("--rtl-quirk", "quirks", multiple=True, type=click.Choice(QUIRK_CHOICES),
              help="model one of the RTL's defects (repeatable; 'all' for every one)")
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
            quirks: tuple[str, ...], omem_image: Path | None, image_width: int,
            cycles: bool = False, vcd: Path | None = None) -> None:
    """Run PROG (a .vp program, a code.mem, or a directory with code.mem and
    control_code.mem) on the simulated GPU and write the RTL-format dumps."""
    program = load_program(prog, tmem)
    for warning in program.warnings:
        click.echo(f"isaforge: {warning}", err=True)
    chosen = set(QUIRKS) if "all" in quirks else set(quirks)
    gpu = Gpu(cores=cores, quirks=chosen)
    gpu.load(program.code, program.control, program.tmem)
    result = gpu.run(max_steps=max_steps)
    outdir.mkdir(parents=True, exist_ok=True)
    for i in result.dumped:
        vp = gpu.vps[i]
        (outdir / f"rf.vp.{i}.log").write_text(format_rf(vp.registers, vp.written))
        (outdir / f"OMEM.vp.{i}.log").write_text(format_omem(vp.omem, vp.omem_written))
        state = "finished" if i in result.finished else f"stopped at PC {vp.pc[0]}"
        click.echo(f"VP{i}: {vp.instructions} instructions, {state}; "
                   f"wrote rf.vp.{i}.log OMEM.vp.{i}.log")
        if omem_image is not None:
            from .image import save_omem_image

            path = omem_image
            if len(result.dumped) > 1:
                path = omem_image.with_name(f"{omem_image.stem}.vp{i}{omem_image.suffix}")
            save_omem_image(path, vp.omem, vp.omem_written, image_width)
            click.echo(f"VP{i}: OMEM image {path}")
    if cycles or vcd is not None:
        from .cycle.runner import quirks_from_names, write_cycle_outputs

        for line in write_cycle_outputs(program.code, program.tmem, result.dumped, outdir,
                                        quirks=quirks_from_names(quirks), vcd=vcd,
                                        control=program.control, cores=min(cores, 4)):
            click.echo(line)
    click.echo(f"CP: {result.cp_instructions} instructions; run ended: {result.ended}")
    for note in result.notes:
        click.echo(f"note: {note}", err=True)


@click.command("check")
@click.argument("config", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.option("--dir", "directory", type=click.Path(file_okay=False, path_type=Path),
              default=Path("."), show_default=True, help="directory holding the dumps")
@guarded
def check_cmd(config: Path, directory: Path) -> None:
    """Apply the pass criteria of a regression CONFIG to rf.vp.N.log / OMEM.vp.N.log."""
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


__all__ = ["check_cmd", "run_cmd"]
