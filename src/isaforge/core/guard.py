"""What a command does around its work, without click: clean one-line errors, input and
output files.

:mod:`isaforge.core.cli` (click's side: command groups, usage errors) re-exports these; they
live here so that a command run without click (the quick start of :mod:`isaforge.entry`)
behaves as the same command run through click. Any
:class:`~isaforge.core.errors.IsaforgeError` ends the command with its one-line message on
stderr and exit status 1; an unexpected exception is reported as an internal error (status
2), never as a traceback.
"""

from __future__ import annotations

import functools
import os
import sys

from .errors import IsaforgeError

TYPE_CHECKING = False  # (typing imports re: a few ms of every quick command's start-up)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    F = TypeVar("F", bound=Callable[..., Any])


def _say(msg: str) -> None:
    """One line on stderr (as ``click.echo(msg, err=True)`` writes it)."""
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


def _is_click_exit(e: BaseException) -> bool:
    """Whether ``e`` is click's way of ending a command (exit, abort, usage error): those
    go on to click. Without click imported there are none."""
    click = sys.modules.get("click")
    return click is not None and isinstance(
        e, (click.exceptions.Exit, click.exceptions.Abort, click.ClickException))


def guarded(fn: F) -> F:
    """Turn errors into one clear line on stderr and a non-zero exit."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except IsaforgeError as e:
            _say(f"isaforge: {e}")
            sys.exit(1)
        except BrokenPipeError:
            # the reader went away (``| head``): stop quietly with status 1, as Python's docs
            # on SIGPIPE advise and rich does for its output
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(1)
        except OSError as e:
            _say(f"isaforge: error: {e.strerror or e}: {e.filename or ''}".rstrip(": "))
            sys.exit(1)
        except KeyboardInterrupt:
            _say("isaforge: interrupted")
            sys.exit(130)
        except Exception as e:  # noqa: BLE001 - the promise is: no tracebacks
            if _is_click_exit(e):
                raise
            _say(f"isaforge: internal error: {type(e).__name__}: {e}")
            sys.exit(2)

    return wrapper  # type: ignore[return-value]


def read_input(path: str) -> bytes:
    """Bytes of a file, or of stdin for ``-``."""
    if path == "-":
        return sys.stdin.buffer.read()
    with open(path, "rb") as f:  # (not pathlib: its import is a few ms of every start-up)
        return f.read()


def write_output(path: str | None, data: bytes | str) -> None:
    """Write to a file, or to stdout when ``path`` is None or ``-``."""
    raw = data.encode() if isinstance(data, str) else data
    if path is None or path == "-":
        sys.stdout.buffer.write(raw)
        sys.stdout.flush()
    else:
        with open(path, "wb") as f:
            f.write(raw)


__all__ = ["guarded", "read_input", "write_output"]
