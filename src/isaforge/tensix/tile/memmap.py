"""The tile's memory map and register layout, as one table of facts.

Everything comes from ``data/memmap.json``, which ``tools/gen_tensix_tile.py`` generates from
the tt-metal headers of the ``ttnn`` wheel (``dev_mem_map.h``, ``tensix.h``,
``noc_parameters.h``, ``noc_overlay_parameters.h``, ``cfg_defines.h``) and tt-llk: no address
is typed in by hand. :func:`memory_map` loads it once; :class:`MemoryMap` answers by name
(``mm.mem("MAILBOX_BASE")``, ``mm.tensix("PC_BUF_BASE")``) and derives the per-core table
(:class:`CoreInfo`: firmware base, local memory, where the host stages local data, how the
core leaves reset).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources

from .errors import TileError

#: the five RISC-V cores of a Tensix tile, in tt-metal's processor order (DM0, DM1, MATH0..2)
CORE_NAMES = ("brisc", "ncrisc", "trisc0", "trisc1", "trisc2")


@dataclass(frozen=True)
class CoreInfo:
    """Where one core's firmware and data live and how it comes out of reset."""

    name: str
    index: int  # tt-metal's processor index (TensixProcessorTypes)
    fw_base: int  # MEM_<CORE>_FIRMWARE_BASE: the firmware's text in L1
    fw_size: int
    local_size: int  # bytes of core-local data memory at MEM_LOCAL_BASE
    local_init: int  # MEM_<CORE>_INIT_LOCAL_L1_BASE_SCRATCH: the host stages local data here
    reset_bit: int  # its bit in RISCV_DEBUG_REG_SOFT_RESET_0
    reset_pc_reg: int | None  # RISCV_DEBUG_REG_<CORE>_RESET_PC (None: BRISC, fixed reset PC)
    reset_pc_override_reg: int | None
    reset_pc_override_bit: int
    thread: int | None  # the Tensix thread a TRISC feeds (None for BRISC/NCRISC)


class MemoryMap:
    """The generated table: groups of named values, and what follows from them."""

    def __init__(self, table: dict) -> None:
        self.table = table

    def _get(self, group: str, name: str) -> int:
        try:
            return int(self.table[group][name])
        except KeyError:
            raise TileError(f"the tile's memory map has no {group} value {name!r}") from None

    def mem(self, name: str) -> int:
        """A ``dev_mem_map.h`` value, named without its ``MEM_`` prefix."""
        return self._get("dev_mem_map", "MEM_" + name)

    def tensix(self, name: str) -> int:
        """A ``tensix.h`` value (``PC_BUF_BASE``, ``RISCV_DEBUG_REG_SOFT_RESET_0``, ...)."""
        return self._get("tensix", name)

    def noc(self, name: str) -> int:
        return self._get("noc", name)

    def stream(self, name: str) -> int:
        return self._get("stream", name)

    def cfg(self, name: str) -> int:
        return self._get("cfg", name)

    def llk(self, name: str) -> int:
        return self._get("llk", name)

    def group(self, name: str) -> dict[str, int]:
        return dict(self.table[name])

    @property
    def l1_size(self) -> int:
        return self.mem("L1_SIZE")

    @property
    def local_base(self) -> int:
        return self.mem("LOCAL_BASE")

    @property
    def mailbox(self) -> tuple[int, int]:
        """(base, size) of the mailbox area in L1."""
        return self.mem("MAILBOX_BASE"), self.mem("MAILBOX_SIZE")

    def core(self, name: str) -> CoreInfo:
        return self.cores()[name]

    @cache  # noqa: B019 - one MemoryMap per process (memory_map() is cached)
    def cores(self) -> dict[str, CoreInfo]:
        out = {}
        trisc_bits = self.tensix("RISCV_SOFT_RESET_0_TRISCS")
        low = trisc_bits & -trisc_bits
        for index, name in enumerate(CORE_NAMES):
            up = name.upper()
            if name.startswith("trisc"):
                k = int(name[-1])
                local = self.mem("TRISC_LOCAL_SIZE")
                bit = low << k
                reg = self.tensix(f"RISCV_DEBUG_REG_{up}_RESET_PC")
                override = self.tensix("RISCV_DEBUG_REG_TRISC_RESET_PC_OVERRIDE")
                obit, thread = 1 << k, k
            else:
                local = self.mem(f"{up}_LOCAL_SIZE")
                bit = self.tensix(f"RISCV_SOFT_RESET_0_{up}")
                thread = None
                if name == "ncrisc":
                    reg = self.tensix("RISCV_DEBUG_REG_NCRISC_RESET_PC")
                    override = self.tensix("RISCV_DEBUG_REG_NCRISC_RESET_PC_OVERRIDE")
                    obit = 1
                else:
                    reg = override = None
                    obit = 0
            out[name] = CoreInfo(name, index, self.mem(f"{up}_FIRMWARE_BASE"),
                                 self.mem(f"{up}_FIRMWARE_SIZE"), local,
                                 self.mem(f"{up}_INIT_LOCAL_L1_BASE_SCRATCH"), bit, reg,
                                 override, obit, thread)
        return out


@cache
def memory_map() -> MemoryMap:
    """The bundled Blackhole tile memory map."""
    text = (resources.files(__package__) / "data" / "memmap.json").read_text("utf-8")
    return MemoryMap(json.loads(text))


__all__ = ["CORE_NAMES", "CoreInfo", "MemoryMap", "memory_map"]
