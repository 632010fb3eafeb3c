"""The ``isaforge`` console script and ``python -m isaforge``.

Every command is :mod:`isaforge.cli`'s click group, but a few that are run once per file, in
loops, where start-up is most of the time (``afuc disasm``, ``afuc asm``) start without
importing click when their command line is plain: only options they declare, each once,
with its value; their one argument. Anything else (``--help``, a usage error, combined short
flags, ``--opt=value``) goes to click, which gives the answer it always gave.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable, Sequence

TYPE_CHECKING = False  # (typing imports re: a few ms of a quick command's start-up)
if TYPE_CHECKING:
    from typing import Any

# (arch, command) -> the module whose QUICK[command] describes it
QUICK_MODULES = {("afuc", "disasm"): "isaforge.afuc.commands",
                 ("afuc", "asm"): "isaforge.afuc.commands"}


class Quick:
    """A command the quick start can run: ``run(**kwargs)`` with one positional argument
    (``positional``), boolean ``flags`` (option string -> keyword) and ``options`` with a
    value (option string -> keyword; ``required`` ones must be given)."""

    def __init__(self, run: Callable[..., Any], positional: str,
                 flags: dict[str, str] | None = None, options: dict[str, str] | None = None,
                 required: Sequence[str] = ()) -> None:
        self.run = run
        self.positional = positional
        self.flags = dict(flags or {})
        self.options = dict(options or {})
        self.required = tuple(required)

    def parse(self, args: Sequence[str]) -> dict[str, Any] | None:
        """The keyword arguments of ``args``, or None if click should read them."""
        kw: dict[str, Any] = {k: False for k in self.flags.values()}
        kw.update((k, None) for k in self.options.values())
        seen: set[str] = set()
        pos: list[str] = []
        i = 0
        while i < len(args):
            a = args[i]
            i += 1
            if a == "-" or not a.startswith("-"):
                pos.append(a)
                continue
            key = self.flags.get(a)
            if key is not None:
                value: Any = True
            else:
                key = self.options.get(a)
                if key is None or i == len(args):
                    return None  # --help, --, -vr, --gpu=x, unknown: click's
                value = args[i]
                i += 1
                if value.startswith("-") and value != "-":
                    return None
            if key in seen:
                return None
            seen.add(key)
            kw[key] = value
        if len(pos) != 1 or any(kw[k] is None for k in self.required):
            return None
        kw[self.positional] = pos[0]
        return kw


def quick_start(args: Sequence[str]) -> bool:
    """Run ``isaforge ARGS`` without click if it is a plain command line of a quick
    command; False if it is not (nothing was run)."""
    where = QUICK_MODULES.get(tuple(args[:2]))  # type: ignore[call-overload]
    if where is None or "_ISAFORGE_COMPLETE" in os.environ or os.name == "nt":
        return False  # (shell completion; Windows, where click expands wildcards itself)
    cmd: Quick = importlib.import_module(where).QUICK[args[1]]
    kw = cmd.parse(args[2:])
    if kw is None:
        return False
    from .core.guard import guarded

    guarded(cmd.run)(**kw)
    return True


def _exit_now() -> None:
    """End the process with status 0 once stdout and stderr are flushed (status 120, as
    Python's own exit, if that fails), without the interpreter's teardown."""
    code = 0
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            code = 120
    os._exit(code)


def main() -> None:
    """``isaforge``: the quick start, or click's command group.

    A quick command runs with the cyclic garbage collector off (its imports and tables
    are objects that live to the end, which the collector would walk again and again) and
    ends without the interpreter's teardown (freeing every module and object, a tenth of a
    small listing's process): its output is written and flushed by then, its files closed.
    """
    import gc

    gc.disable()
    if quick_start(sys.argv[1:]):
        _exit_now()
    gc.enable()
    from .cli import main as cli_main

    cli_main(prog_name="isaforge")
