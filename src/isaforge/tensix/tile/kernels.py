"""Running kernels on a booted tile, as tt-metal's host launches a program.

A kernel is an ELF linked at the L1 address it runs from (:func:`load_kernel`). To launch a
program the host writes, into the *kernel config buffer* at ``kernel_config_base`` (L1):

* each processor's runtime arguments (``RTA_SLOT`` bytes apart, from offset 0),
* the local circular-buffer table, 4 words per CB (address, size, pages, page size; bytes),
  at ``CB_TABLE_OFFSET``,

and the kernels' segments at their link addresses; then launch message 0 (``kernel_config_base``,
``rta_offset[i]``, ``local_cb_offset``, ``local_cb_mask``, ``kernel_text_offset[i]`` = entry -
``kernel_config_base``, ``enables``; dispatch mode "host"), the CB page counters zeroed (the
stream registers), and the go signal. The firmware calls each enabled kernel and writes
``RUN_MSG_DONE`` when all have returned (:func:`launch` waits for it).

``enables`` follows ``dev_msgs.h``'s dispatch classes: bit 0 BRISC (DM0), bit 1 NCRISC (DM1),
bit 2 the three TRISCs (compute).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

from .errors import BadFirmware, TileError
from .host import Host
from .loader import Symbols
from .memmap import CORE_NAMES

RTA_SLOT = 0x100
CB_TABLE_OFFSET = 0x600
N_CBS = 64
#: dispatch class of each processor (bit of ``enables``)
ENABLE_BIT = {"brisc": 1, "ncrisc": 2, "trisc0": 4, "trisc1": 4, "trisc2": 4}


@dataclass(frozen=True)
class Kernel:
    """A kernel ELF: its loadable bytes at their addresses, its entry and symbols."""

    path: str
    entry: int
    spans: tuple[tuple[int, bytes], ...]
    symbols: Symbols


@dataclass(frozen=True)
class CircularBuffer:
    addr: int
    pages: int
    page_size: int

    @property
    def size(self) -> int:
        return self.pages * self.page_size


def load_kernel(path: str | Path) -> Kernel:
    """Read a kernel ELF (32-bit RISC-V, linked where it runs)."""
    try:
        with open(path, "rb") as f:
            elf = ELFFile(f)
            if elf.elfclass != 32 or elf["e_machine"] != "EM_RISCV":
                raise BadFirmware(f"{path}: not a 32-bit RISC-V ELF")
            spans = []
            for seg in elf.iter_segments():
                if seg["p_type"] == "PT_LOAD" and seg["p_filesz"]:
                    spans.append((seg["p_paddr"], seg.data()))
            entries = []
            symtab = elf.get_section_by_name(".symtab")
            if symtab is not None:
                for s in symtab.iter_symbols():
                    if s["st_info"]["type"] in ("STT_FUNC", "STT_OBJECT") and s.name:
                        entries.append((s["st_value"], s["st_size"], s.name))
            entry = elf["e_entry"]
    except (ELFError, OSError) as e:
        raise BadFirmware(f"{path}: {e}") from None
    if not spans:
        raise BadFirmware(f"{path}: no loadable segment")
    return Kernel(str(path), entry, tuple(spans), Symbols(entries))


def launch(host: Host, kernels: Mapping[str, Kernel], runtime_args: Mapping[str, Sequence[int]],
           cbs: Mapping[int, CircularBuffer], kernel_config_base: int,
           max_steps: int | None = 50_000_000) -> None:
    """Launch ``kernels`` (core name -> kernel) with their runtime arguments and the CBs on a
    tile whose firmware has booted, and run until the firmware reports done. A kernel error
    (a bad access, a deadlock, the step limit) raises with core, pc and symbol."""
    tile = host.tile
    msgs = host.msgs
    for core in kernels:
        if core not in CORE_NAMES:
            raise TileError(f"unknown core {core!r} (one of {', '.join(CORE_NAMES)})")
    kcb = kernel_config_base
    cb_table = bytearray(N_CBS * 16)
    mask = 0
    for i, cb in cbs.items():
        cb_table[i * 16:(i + 1) * 16] = b"".join(
            v.to_bytes(4, "little") for v in (cb.addr, cb.size, cb.pages, cb.page_size))
        mask |= 1 << i
    host.write_l1(kcb + CB_TABLE_OFFSET, bytes(cb_table))
    # min_remote_cb_start_index = N_CBS: no remote CB (the firmware sets up CBs from that
    # index to the last as remote ones, reading their configuration at remote_cb_offset)
    fields: dict[str, int] = {"kernel_config_base[0]": kcb,
                              "local_cb_offset": CB_TABLE_OFFSET, "local_cb_mask": mask,
                              "min_remote_cb_start_index": N_CBS}
    enables = 0
    for core, kernel in kernels.items():
        i = CORE_NAMES.index(core)
        args = list(runtime_args.get(core, ()))
        if len(args) * 4 > RTA_SLOT:
            raise TileError(f"{core}: {len(args)} runtime arguments (at most {RTA_SLOT // 4})")
        host.write_l1(kcb + i * RTA_SLOT, b"".join(
            (a & 0xFFFFFFFF).to_bytes(4, "little") for a in args))
        fields[f"rta_offset[{i}].rta_offset"] = i * RTA_SLOT
        fields[f"rta_offset[{i}].crta_offset"] = i * RTA_SLOT
        fields[f"kernel_text_offset[{i}]"] = (kernel.entry - kcb) & 0xFFFFFFFF
        for addr, data in kernel.spans:
            host.write_l1(addr, data)
        tile.symbols[core] = kernel.symbols
        enables |= ENABLE_BIT[core]
    for i in cbs:
        tile.streams.values.pop((i, _reg(tile, "STREAM_REMOTE_DEST_BUF_SIZE")), None)
        tile.streams.values.pop((i, _reg(tile, "STREAM_REMOTE_DEST_BUF_START")), None)
    # the firmware reads the launch message at launch_msg_rd_ptr (it moves on after each go)
    host.write_launch(host.read_mailbox("launch_msg_rd_ptr"), enables=enables, mode="host",
                      **fields)
    done = msgs.const("RUN_MSG_DONE")
    host.send_go(0)
    tile.run(max_steps, lambda: host.go_signal() == done)
    tile.run(max_steps)  # until every core waits again


def _reg(tile: object, name: str) -> int:
    return tile.mm.stream(f"{name}_REG_INDEX")  # type: ignore[attr-defined]


__all__ = ["CB_TABLE_OFFSET", "ENABLE_BIT", "RTA_SLOT", "CircularBuffer", "Kernel", "launch",
           "load_kernel"]
