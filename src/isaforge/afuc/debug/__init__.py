"""The interactive afuc debugger (``isaforge afuc debug FW``), one job a module:
:mod:`.commands` (the command interpreter :class:`Debugger` and :func:`repl`), :mod:`.run`
(running until a breakpoint, a packet, the step limit), :mod:`.breakpoints`, :mod:`.view`
(code with labels, queues as packets, the rich view), :mod:`.args` (command arguments)."""

from .args import CommandError
from .commands import MESA_PROMPT, PROMPT, Batched, Debugger, repl

__all__ = ["MESA_PROMPT", "PROMPT", "Batched", "CommandError", "Debugger", "repl"]
