"""What every architecture's command line shares: clean one-line errors and output files.

Commands are thin: they call the architecture's Python API and print. Any
:class:`~isaforge.core.errors.IsaforgeError` ends the command with its one-line message on
stderr and exit status 1; an unexpected exception is reported as an internal error (status
2), never as a traceback (:func:`guarded`, with the input and output helpers, is in
:mod:`isaforge.core.guard`, which does not need click; it is re-exported here).
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from .guard import guarded, read_input, write_output

_NO_ARGS_IS_HELP: Any = getattr(click.exceptions, "NoArgsIsHelpError", ())


def usage_line(e: click.ClickException) -> str:
    """Click's error as one line in isaforge's voice: ``isaforge: error: no such option
    '--frob' (see 'isaforge tensix disasm --help')``."""
    msg = e.format_message().rstrip(".")
    if msg[:1].isupper() and msg[1:2].islower():
        msg = msg[0].lower() + msg[1:]  # "No such option" -> "no such option"
    ctx = getattr(e, "ctx", None)
    hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
    return f"isaforge: error: {msg}{hint}"


class VoiceGroup(click.Group):
    """The top-level command group: click's own errors (bad usage, a missing file argument)
    as one line in isaforge's voice on stderr (:func:`usage_line`), with click's exit status
    (2 for bad usage, 1 for other errors). A group called without a command prints its help
    (status 2)."""

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: Any = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            return super().main(args, prog_name, complete_var, False, **extra)
        except click.exceptions.Exit as e:
            sys.exit(e.exit_code)
        except click.exceptions.Abort:
            click.echo("isaforge: interrupted", err=True)
            sys.exit(1)
        except _NO_ARGS_IS_HELP as e:
            click.echo(e.format_message(), err=True)
            sys.exit(e.exit_code)
        except click.ClickException as e:
            click.echo(usage_line(e), err=True)
            sys.exit(e.exit_code)


class LazyGroup(VoiceGroup):
    """A :class:`VoiceGroup` whose subcommands named in ``lazy`` (name -> "module:attr") are
    imported only when used, so that ``isaforge tensix boot`` loads neither afuc nor THEIA."""

    def __init__(self, *args: Any, lazy: dict[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy and cmd_name not in self.commands:
            module, _, attr = self.lazy[cmd_name].partition(":")
            self.add_command(getattr(importlib.import_module(module), attr), cmd_name)
        return super().get_command(ctx, cmd_name)


def preset(cmd: click.Command, name: str, help: str, **fixed: Any) -> click.Command:
    """A command that is ``cmd`` with some of its options fixed (``isaforge <arch> trace`` is
    ``run`` with tracing on): the same arguments and options, minus the fixed ones."""
    callback = cmd.callback
    assert callback is not None

    def run(**kwargs: Any) -> Any:
        return callback(**kwargs, **fixed)

    params = [p for p in cmd.params if p.name not in fixed]
    return click.Command(name, params=params, callback=run, help=help)


__all__ = ["LazyGroup", "VoiceGroup", "guarded", "preset", "read_input", "usage_line",
           "write_output"]
