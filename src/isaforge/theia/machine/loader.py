"""Finding and reading a THEIA program the way the RTL test bench is given one.

A program is ``code.mem`` (the VP image) plus ``control_code.mem`` (the CP image), and
optionally ``tmem.mem`` (TMEM words, one hex word per line). :func:`load_program` accepts a
directory holding them, a ``code.mem`` path, or a T-Language ``PROG.vp``: its compiled
outputs beside it are used, and if they are missing the program (with the ``PROG.cp``
beside it) is compiled in memory, as ``isaforge theia compile`` would compile it, and its
words go straight to the machine.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ...core.errors import IsaforgeError
from ..image import read_mem, read_tmem

CODE = "code.mem"
CONTROL = "control_code.mem"
TMEM = "tmem.mem"


class ProgramError(IsaforgeError):
    """A program that cannot be found, compiled or read."""


@dataclass
class Program:
    code: list[int]
    control: list[int]
    tmem: list[int] | None
    directory: Path
    warnings: list[str] = field(default_factory=list)  # the compiler's, if it was compiled


def _text(path: Path) -> str:
    try:
        return path.read_text()
    except FileNotFoundError:
        raise ProgramError(f"{path}: no such file") from None
    except UnicodeDecodeError:
        raise ProgramError(f"{path}: not a text file") from None


def _needs_compiling(prog: Path) -> bool:
    return prog.suffix == ".vp" and prog.is_file() and not (
        (prog.parent / CODE).is_file() and (prog.parent / CONTROL).is_file())


def locate(prog: Path) -> Path:
    """The directory holding ``code.mem`` and ``control_code.mem`` for ``prog`` (which
    must not need compiling)."""
    if prog.is_dir():
        directory = prog
    elif not prog.exists():
        raise ProgramError(f"{prog}: no such file or directory")
    elif prog.suffix in (".vp", ".mem"):
        directory = prog.parent
    else:
        raise ProgramError(f"{prog}: expected a .vp program, a code.mem or a directory "
                           f"holding {CODE} and {CONTROL}")
    for name in (CODE, CONTROL):
        if not (directory / name).is_file():
            raise ProgramError(f"{directory}: no {name}")
    return directory


def load_program(prog: Path, tmem: Path | None = None) -> Program:
    """Read the images of ``prog`` (compiling a .vp whose outputs are not beside it);
    ``tmem`` defaults to ``tmem.mem`` beside the program."""
    home = prog if prog.is_dir() else prog.parent
    if tmem is None and (home / TMEM).is_file():
        tmem = home / TMEM
    if _needs_compiling(prog):
        from ..compiler import compile_files  # (only for a .vp program to compile)

        compiled = compile_files(prog)  # a compile error keeps its file:line:col
        assert compiled.vp is not None and compiled.cp is not None
        program = Program(compiled.vp.words, compiled.cp.words, None, home,
                          compiled.warnings)
        where = prog
    else:
        directory = locate(prog)
        where = prog if prog.suffix == ".mem" and prog.is_file() else directory / CODE
        program = Program(read_mem(_text(where), filename=str(where)),
                          read_mem(_text(directory / CONTROL), cp=True,
                                   filename=str(directory / CONTROL)), None, directory)
    if not program.code:
        raise ProgramError(f"{where}: empty program")
    if tmem is not None:
        program.tmem = read_tmem(_text(tmem), str(tmem))
    return program


__all__ = ["Program", "ProgramError", "load_program", "locate"]
