"""Names kept for an old import only: boot code runs on the emulator's
:class:`~isaforge.afuc.machine.Processor` (see :func:`isaforge.afuc.emu.run_boot_code`), so each
instruction's semantics is written once. ``trace.py`` still imports ``PROC_SQE`` from here;
once it imports it from ``disasm``, delete this module."""

from .disasm import PROC_BV, PROC_LPAC, PROC_SQE

__all__ = ["PROC_BV", "PROC_LPAC", "PROC_SQE"]
