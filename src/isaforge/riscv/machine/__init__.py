"""The hart engine: :class:`Hart` over an :class:`AddressSpace` (see :mod:`.hart`)."""

from .hart import Hart, IllegalInstruction, RiscvError, StopReason
from .memory import AddressSpace, MapError, MemoryAccessError

__all__ = ["AddressSpace", "Hart", "IllegalInstruction", "MapError", "MemoryAccessError",
           "RiscvError", "StopReason"]
