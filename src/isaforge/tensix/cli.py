"""``isaforge tensix ...``: a thin layer over :mod:`isaforge.tensix`.

``disasm`` and ``asm`` convert words and text; ``run`` (and ``trace``, which is ``run
--trace all``) runs a PROG.s on the Coprocessor's three threads. Register files are filled
from and written to ``.npy`` files with SPECs:

* ``srca:BANK:FMT[:ROW]`` / ``srcb:BANK:FMT[:ROW]``: a SrcA/SrcB bank, ``(n, 16)`` values of
  FMT (tf32, fp32, bf16, fp16, int8, int16, raw) from row ROW (default 0). Loading acts as an
  unpacker would: the bank's implied format becomes FMT's and the bank is handed to the
  Matrix Unit.
* ``dst:FMT[:ROW]``: Dst through the view FMT selects (fp32, int32, raw32: Dst32b, 512 rows;
  bf16, fp16, int8, int16, raw: Dst16b, 1024 rows). Loading marks the rows valid.
* ``gpr:THREAD``: the 64 GPRs of a thread (uint32).
* ``l1:ADDR:FORMAT`` (load) / ``l1:ADDR:FORMAT:COUNT`` (dump): L1 from byte ADDR, datums of
  an L1 format (fp32, tf32, fp16, bf16, bfp8_b, bfp4_b, bfp2_b, fp8, int8, uint8, int32,
  uint16; :mod:`.machine.l1formats`) in L1 order: the file's values flattened, COUNT datums
  out (float32, or the integer type). BFP formats hold their exponent section first (one
  byte per 16 datums, padded to 16 bytes), as the unpackers read it and the packers write it.
  ``l1formats.tilize`` / ``untilize`` convert a 32x32 matrix to and from tile order.

The trace (``--trace``) prints one line per executed instruction: ``rwc`` gives the thread,
the disassembly and the thread's RWCs afterwards (``rwc_a=16(cr=0) rwc_b=8(cr=0)
rwc_d=24(cr=0) fid=0``); ``insn`` the thread, the word and the disassembly; ``all`` both.

Every error is one line on stderr: ``isaforge: FILE:LINE:COL: error: ...`` or ``isaforge:
error: ...``, with exit status 1 for bad input and 2 for bad usage (options, arguments).
"""

from __future__ import annotations

from pathlib import Path

import click
import ml_dtypes
import numpy as np

from ..core.cli import guarded, preset, read_input, write_output
from ..core.errors import EmulationError, FirmwareError
from .asm import assemble_bytes
from .decode import disassemble
from .example_cli import example_cli
from .isa import N_GPRS, N_MOPCFG, N_THREADS
from .listing import listing, looks_like_listing, relist
from .machine import Coprocessor, Executed, UBEvent
from .machine import formats as F
from .machine import l1formats as L
from .machine.l1 import L1_SIZE
from .program import load_file
from .tile.cli import boot_cmd

SYNTAX = click.Choice(["objdump", "llk"])


@click.group("tensix")
def tensix_cli() -> None:
    """Tenstorrent Blackhole Tensix coprocessor: asm and disasm (objdump and LLK syntax), run."""


def _text(path: str) -> str:
    try:
        return read_input(path).decode("utf-8")
    except UnicodeDecodeError as e:
        raise FirmwareError(f"{path}: not a text file ({e.reason})") from None


# --------------------------------------------------------------------------------------------
# disasm, asm
# --------------------------------------------------------------------------------------------


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
    write_output(output, assemble_bytes(_text(source), rotated=rotated, filename=source))


# --------------------------------------------------------------------------------------------
# run, trace: register-file SPECs
# --------------------------------------------------------------------------------------------


class SpecError(EmulationError):
    """A malformed --load/--dump SPEC."""


def _split_assignment(text: str, option: str) -> tuple[str, str]:
    spec, eq, path = text.partition("=")
    if not eq or not spec or not path:
        raise SpecError(f"{option} expects SPEC=FILE.npy, not '{text}'")
    return spec, path


def _int_part(part: str, what: str, spec: str, limit: int) -> int:
    try:
        v = int(part, 0)
    except ValueError:
        raise SpecError(f"SPEC '{spec}': {what} must be a number, not '{part}'") from None
    if not 0 <= v < limit:
        raise SpecError(f"SPEC '{spec}': {what} {v} is out of range (0..{limit - 1})")
    return v


def _check_fmt(spec: str, fmt: str, table: dict, what: str) -> None:
    if fmt not in table:
        raise SpecError(f"SPEC '{spec}': unknown {what} format '{fmt}' "
                        f"(expected one of {', '.join(table)})")


def parse_spec(spec: str) -> tuple[str, dict]:
    """``"srca:0:bf16"`` -> ("srca", {bank, fmt, row}); ``"dst:fp32"`` -> ("dst", {...})."""
    parts = spec.split(":")
    kind = parts[0].lower()
    if kind in ("srca", "srcb"):
        if len(parts) not in (3, 4):
            raise SpecError(f"SPEC '{spec}': expected {kind}:BANK:FMT[:ROW]")
        row = _int_part(parts[3], "row", spec, 64) if len(parts) == 4 else 0
        _check_fmt(spec, parts[2], F.SRC_FORMATS, "Src")
        return kind, {"bank": _int_part(parts[1], "bank", spec, 2), "fmt": parts[2],
                      "row": row}
    if kind == "dst":
        if len(parts) not in (2, 3):
            raise SpecError(f"SPEC '{spec}': expected dst:FMT[:ROW]")
        row = _int_part(parts[2], "row", spec, 1024) if len(parts) == 3 else 0
        _check_fmt(spec, parts[1], F.DST_FORMATS, "Dst")
        return kind, {"fmt": parts[1], "row": row}
    if kind == "gpr":
        if len(parts) != 2:
            raise SpecError(f"SPEC '{spec}': expected gpr:THREAD")
        return kind, {"thread": _int_part(parts[1], "thread", spec, N_THREADS)}
    if kind == "l1":
        if len(parts) not in (3, 4):
            raise SpecError(f"SPEC '{spec}': expected l1:ADDR:FORMAT (load) or "
                            f"l1:ADDR:FORMAT:COUNT (dump)")
        if parts[2].lower() not in L.FORMAT_NAMES:
            raise SpecError(f"SPEC '{spec}': unknown L1 format '{parts[2]}' "
                            f"(expected one of {', '.join(sorted(L.FORMAT_NAMES))})")
        count = _int_part(parts[3], "count", spec, L1_SIZE * 4 + 1) if len(parts) == 4 else None
        return kind, {"addr": _int_part(parts[1], "address", spec, L1_SIZE),
                      "fmt": parts[2].lower(), "count": count}
    raise SpecError(f"SPEC '{spec}': unknown register file '{parts[0]}' "
                    f"(srca:BANK:FMT, srcb:BANK:FMT, dst:FMT, gpr:THREAD, l1:ADDR:FORMAT)")


def _l1_span(cp: Coprocessor, spec: str, addr: int, size: int) -> np.ndarray:
    l1 = cp.memory.l1  # type: ignore[attr-defined]
    if addr + size > len(l1):
        raise SpecError(f"SPEC '{spec}': {size} bytes at {addr:#x} go beyond L1 "
                        f"({len(l1):#x} bytes)")
    return l1[addr:addr + size]


def load_spec(cp: Coprocessor, spec: str, values: np.ndarray) -> None:
    """Fill the register file ``spec`` names with ``values``."""
    kind, p = parse_spec(spec)
    v = np.asarray(values)
    if kind in ("srca", "srcb"):
        cp.load_src(kind[-1], p["bank"], v, p["fmt"], p["row"])
    elif kind == "dst":
        if v.ndim != 2:
            raise SpecError(f"SPEC '{spec}': Dst values must be 2-D (rows, 16), not {v.shape}")
        cp.dst.write(p["fmt"], v, np.arange(p["row"], p["row"] + v.shape[0]))
    elif kind == "l1":
        code, unsigned = L.format_code(p["fmt"])
        data = L.encode(v.reshape(-1), code, unsigned)
        _l1_span(cp, spec, p["addr"], len(data))[:] = data
    else:
        if v.shape != (N_GPRS,):
            raise SpecError(f"SPEC '{spec}': GPR values must have shape ({N_GPRS},), "
                            f"not {v.shape}")
        cp.gpr.v[p["thread"]] = v.astype(np.uint64) & 0xFFFFFFFF


def dump_spec(cp: Coprocessor, spec: str) -> np.ndarray:
    """The contents of the register file ``spec`` names."""
    kind, p = parse_spec(spec)
    if kind in ("srca", "srcb"):
        src = cp.srca if kind == "srca" else cp.srcb
        return src.dump(p["bank"], p["fmt"], np.arange(p["row"], 64))
    if kind == "dst":
        full = cp.dst.read(p["fmt"])
        return full[p["row"]:]
    if kind == "l1":
        code, unsigned = L.format_code(p["fmt"])
        count = p["count"]
        if count is None:
            raise SpecError(f"SPEC '{spec}': a dump of L1 needs a count (l1:ADDR:FORMAT:COUNT)")
        data = _l1_span(cp, spec, p["addr"], L.l1_size(code, count))
        return L.decode(data, code, count, unsigned)
    return cp.gpr.v[p["thread"]].copy()


def _mopcfg_write(item: str) -> tuple[int, int, int]:
    """``THREAD:INDEX=VALUE`` of ``--mopcfg``."""
    where, eq, value = item.partition("=")
    thread, colon, index = where.partition(":")
    if not eq or not colon:
        raise SpecError(f"--mopcfg expects THREAD:INDEX=VALUE, not '{item}'")
    out = []
    for part, what, limit in ((thread, "thread", N_THREADS), (index, "index", N_MOPCFG),
                              (value, "value", 1 << 32)):
        try:
            v = int(part, 0)
        except ValueError:
            raise SpecError(f"--mopcfg '{item}': the {what} must be a number, not "
                            f"'{part}'") from None
        if not 0 <= v < limit:
            raise SpecError(f"--mopcfg '{item}': the {what} {v} is out of range "
                            f"(0..{limit - 1})")
        out.append(v)
    return out[0], out[1], out[2]


def _read_npy(path: str) -> np.ndarray:
    try:
        arr = np.load(path, allow_pickle=False)
    except (ValueError, EOFError) as e:
        raise EmulationError(f"{path}: not a numpy .npy file ({e})") from None
    if arr.dtype.kind == "V" and arr.dtype.itemsize == 2:
        arr = arr.view(ml_dtypes.bfloat16)  # how numpy stores an ml_dtypes bfloat16 array
    if arr.dtype.kind not in "fiub" and arr.dtype != ml_dtypes.bfloat16:
        raise EmulationError(f"{path}: holds {arr.dtype} data, not numbers")
    return arr


@tensix_cli.command("run")
@click.argument("program", type=click.Path(dir_okay=False))
@click.option("--load", "loads", multiple=True, metavar="SPEC=FILE.npy",
              help="fill a register file or L1 before running (srca:0:bf16, dst:fp32, gpr:1, "
                   "l1:0x1000:bf16, ...)")
@click.option("--dump", "dumps", multiple=True, metavar="SPEC=OUT.npy",
              help="write a register file after running (same SPECs; dst:raw for the bits; "
                   "l1:ADDR:FORMAT:COUNT)")
@click.option("--trace", type=click.Choice(["rwc", "insn", "all"]),
              help="print each executed instruction (with the RWCs, the word, or both)")
@click.option("--max-steps", type=click.IntRange(min=1), default=1_000_000, show_default=True,
              help="stop with an error after this many executed instructions")
@click.option("--ub", type=click.Choice(["stop", "continue"]), default="stop",
              show_default=True, help="on undefined behaviour: stop, or report and continue")
@click.option("--mopcfg", "mopcfgs", multiple=True, metavar="THREAD:INDEX=VALUE",
              help="write a thread's MopCfg register after the program's own .mopcfg "
                   "directives, as its RISC-V core would (e.g. 1:1=2: two fidelity phases "
                   "for the bundled matmul kernel)")
@click.option("--thread", type=click.IntRange(0, N_THREADS - 1),
              help="for an objdump listing: keep only TRISC<K>'s sections (all the words of a "
                   "listing without sections) as thread K's stream (default: each TRISC<k> "
                   "section is thread k's)")
@guarded
def run_cmd(program: str, loads: tuple[str, ...], dumps: tuple[str, ...], trace: str | None,
            max_steps: int, ub: str, mopcfgs: tuple[str, ...], thread: int | None) -> None:
    """Run PROG.s (.thread sections of instructions plus .mopcfg/.gpr/.semaphore/.config/
    .threadconfig/.include directives) on the Tensix coprocessor's three threads. PROG may
    also be an objdump listing of TRISC compute kernels (as 'disasm' reads them): the Tensix
    words it shows, in listing order, are the stream of the thread its TRISC section names."""
    writes = [_mopcfg_write(item) for item in mopcfgs]
    cp = Coprocessor(ub=ub)
    cp.load_program(load_file(program, thread))
    for t, index, value in writes:
        cp.threads[t].mop.cfg[index] = value
    load_targets = [_split_assignment(item, "--load") for item in loads]
    for spec, _ in load_targets:
        parse_spec(spec)
    for spec, path in load_targets:
        load_spec(cp, spec, _read_npy(path))
    dump_targets = [_split_assignment(item, "--dump") for item in dumps]
    for spec, _ in dump_targets:  # a bad SPEC fails before the run, not after it
        kind, p = parse_spec(spec)
        if kind == "l1" and p["count"] is None:
            raise SpecError(f"SPEC '{spec}': a dump of L1 needs a count (l1:ADDR:FORMAT:COUNT)")

    if trace is not None:
        def show(machine: Coprocessor, address: int, size: int, ev: Executed) -> None:
            text = ev.insn.text.expandtabs(1)
            if trace == "rwc":
                click.echo(f"T{ev.thread}  {text:<28} {ev.rwc}")
            elif trace == "insn":
                click.echo(f"T{ev.thread}  {ev.insn.word:08x}  {text}")
            else:
                click.echo(f"{ev.step:6d} T{ev.thread}  {ev.insn.word:08x}  {text:<28} {ev.rwc}")
        cp.hook_add("insn", show)
    if ub == "continue":
        def warn(machine: Coprocessor, address: int, message: str, ev: UBEvent) -> None:
            click.echo(f"isaforge: warning: thread {ev.thread}: {ev.instruction.expandtabs(1)}: "
                       f"undefined behaviour: {message}", err=True)
        cp.hook_add("ub", warn)

    result = cp.run(max_steps=max_steps)
    for spec, path in dump_targets:
        np.save(Path(path), dump_spec(cp, spec), allow_pickle=False)
    per = ", ".join(f"T{t} {n}" for t, n in enumerate(result.per_thread))
    click.echo(f"done: {result.steps} instructions ({per}) in {result.rounds} rounds", err=True)


tensix_cli.add_command(preset(
    run_cmd, "trace", help="Run PROG.s and print every executed instruction: thread, "
    "word, disassembly and the RWCs after it (same as 'run --trace all').", trace="all"))

tensix_cli.add_command(boot_cmd)  # isaforge tensix boot: the tile (tensix/tile/cli.py)
tensix_cli.add_command(example_cli)  # isaforge tensix example ...: tensix/example_cli.py


__all__ = ["dump_spec", "load_spec", "parse_spec", "tensix_cli"]
