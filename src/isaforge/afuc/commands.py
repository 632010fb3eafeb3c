"""The work of ``isaforge afuc disasm`` and ``afuc asm``, without click.

:mod:`isaforge.afuc.cli` declares these commands (options, help) for click and calls these
functions; :mod:`isaforge.entry` calls them directly when the command line is one
:data:`QUICK` describes fully (no ``--help``, no error to report), so that a disassembly
does not pay for importing click (about as long as disassembling a small firmware). Both
ways run the same function under the same :func:`~isaforge.core.guard.guarded`.
"""

from __future__ import annotations

from .. import entry
from ..core.errors import AsmError
from ..core.guard import read_input, write_output


def disasm(firmware: str, verbose: bool, raw: bool, color: bool, gpu: str | None,
           output: str | None) -> None:
    """Disassemble FIRMWARE as Mesa's afuc-disasm -u does."""
    from . import bootcache
    from .listing import listing

    bootcache.enable()  # a6xx/a7xx: the boot code's tables, kept from the last run

    write_output(output, listing(read_input(firmware), gpu=gpu, verbose=verbose, raw=raw,
                                 color=color))


def asm(source: str, output: str, gpu: str | None) -> None:
    """Assemble SOURCE (Mesa afuc-asm syntax) into firmware."""
    from . import bootcache
    from .asm import assemble

    bootcache.enable()  # the register database, decoded in an earlier run

    try:
        text = read_input(source).decode("utf-8")
    except UnicodeDecodeError as e:
        raise AsmError(f"{source} is not a text file ({e.reason} at byte {e.start})") from None
    write_output(output, assemble(text, gpu=gpu, filename=source))


# the command lines the quick start takes: the options of afuc/cli.py's commands
# (tests/test_entry.py checks that they agree)
QUICK = {
    "disasm": entry.Quick(
        disasm, "firmware",
        flags={"-v": "verbose", "--verbose": "verbose", "-r": "raw", "--raw": "raw",
               "-c": "color", "--color": "color"},
        options={"-g": "gpu", "--gpu": "gpu", "-o": "output", "--output": "output"}),
    "asm": entry.Quick(
        asm, "source", options={"-g": "gpu", "--gpu": "gpu", "-o": "output",
                                "--output": "output"},
        required=("output",)),
}
