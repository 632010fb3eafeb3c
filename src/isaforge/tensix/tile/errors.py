"""The tile's errors: each names what stopped and where (core, pc, instruction, address)."""

from __future__ import annotations

from ...core.errors import EmulationError, FirmwareError


class TileError(EmulationError):
    """Something the tile model cannot do or was asked wrongly."""


class UnmappedAccess(TileError):
    """A core touched an address no window maps, or a register the model does not cover."""


class NocError(TileError):
    """A NOC transaction a kernel issued that cannot be carried (bad coordinate or address)."""


class CircularBufferError(TileError):
    """A kernel's circular buffer use that breaks its configuration (overflow)."""


class TileDeadlock(TileError):
    """Every core and Tensix thread is waiting and nothing can wake any of them."""

    def __init__(self, message: str, waits: dict[str, str]) -> None:
        super().__init__(message)
        self.waits = waits


class TileStepLimit(TileError):
    """The run went beyond its step limit."""


class BadFirmware(FirmwareError):
    """A firmware file that is not a Blackhole Tensix ELF (or is damaged)."""


__all__ = ["BadFirmware", "CircularBufferError", "NocError", "TileDeadlock", "TileError",
           "TileStepLimit", "UnmappedAccess"]
