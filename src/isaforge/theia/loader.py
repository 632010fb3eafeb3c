"""Finding and reading a THEIA program the way the RTL test bench is given one.

A program is ``code.mem`` (the VP image) plus ``control_code.mem`` (the CP image), and
optionally ``tmem.mem`` (TMEM words, one hex word per line). :func:`locate` accepts a
directory holding them, a ``code.mem`` path, or a T-Language ``PROG.vp``: its compiled
outputs beside it are used, and if they are missing the program is compiled (as
``isaforge theia compile`` does) into a scratch directory.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ..core.errors import IsaforgeError, SourceLoc
from .disasm import read_mem

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


def read_tmem(path: Path) -> list[int]:
    words = []
    for lineno, line in enumerate(_text(path).splitlines(), 1):
        body = line.split("//", 1)[0].split()
        for col_word in body:
            try:
                v = int(col_word, 16)
            except ValueError:
                raise ProgramError(f"expected a hex word, found '{col_word}'",
                                   SourceLoc(str(path), lineno, line.index(col_word) + 1)
                                   ) from None
            if v >> 32:
                raise ProgramError(f"'{col_word}' does not fit in 32 bits",
                                   SourceLoc(str(path), lineno, line.index(col_word) + 1))
            words.append(v)
    return words


def _compile(source: Path, out: Path) -> list[str]:
    """Compile ``source`` (.vp, and the .cp beside it) into ``out`` as ``isaforge theia
    compile`` does; a compile error propagates with its file:line:col. Returns the
    compiler's warnings."""
    from .compiler import compile_program

    return compile_program(source, out).warnings


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
        with tempfile.TemporaryDirectory(prefix="isaforge-theia-") as scratch:
            warnings = _compile(prog, Path(scratch))
            program = _read(Path(scratch), Path(scratch) / CODE, tmem)
            program.warnings = warnings
            return program
    directory = locate(prog)
    code_path = prog if prog.suffix == ".mem" and prog.is_file() else directory / CODE
    return _read(directory, code_path, tmem)


def _read(directory: Path, code_path: Path, tmem: Path | None) -> Program:
    code = read_mem(_text(code_path), filename=str(code_path))
    control = read_mem(_text(directory / CONTROL), cp=True, filename=str(directory / CONTROL))
    if not code:
        raise ProgramError(f"{code_path}: empty program")
    return Program(code, control, read_tmem(tmem) if tmem is not None else None, directory)


__all__ = ["Program", "ProgramError", "load_program", "locate", "read_tmem"]
