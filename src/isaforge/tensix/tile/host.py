"""What the host does to a tile, as tt-metal's host does it.

* :meth:`Host.load_firmware`: write each core's firmware spans (relocated, see
  :mod:`.loader`) into L1 and, at BRISC's reset address (``MEM_BOOT_CODE_BASE``), a ``jal`` to
  BRISC's firmware base; the ELF symbols become the tile's symbols for traces.
* :meth:`Host.init_mailboxes`: the boot-time mailbox state (launch messages zeroed, read
  pointer and go-message index 0, go signal ``RUN_MSG_INIT``), the core-info message (this
  tile's logical coordinate, the NOC grid, ``CoreMagicNumber::WORKER``) and the tables the
  firmware copies at boot (bank -> NOC coordinates, logical -> virtual coordinates).
* :meth:`Host.release` / :meth:`Host.hold`: clear or set cores' bits of
  ``RISCV_DEBUG_REG_SOFT_RESET_0`` (tt-metal releases BRISC only; BRISC brings up the others).
* :meth:`Host.write_launch`, :meth:`Host.send_go`, :meth:`Host.go_signal`: the launch and go
  messages of ``dev_msgs.h``.
* :meth:`Host.read_mailbox` / :meth:`Host.write_mailbox` for any ``mailboxes_t`` member by path,
  :meth:`Host.write_l1` / :meth:`Host.read_l1` for L1.

Every host write wakes the cores polling what it changed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .errors import TileError
from .loader import Firmware, jal_to
from .memmap import CORE_NAMES
from .soc import DeviceTables, device_tables
from .tile import Tile


class Host:
    def __init__(self, tile: Tile) -> None:
        self.tile = tile
        self.mm = tile.mm
        self.msgs = tile.msgs

    # -- L1 and the mailboxes -----------------------------------------------------------------

    def write_l1(self, addr: int, data: bytes) -> None:
        self.tile.l1.write(addr, data)
        self.tile.scheduler.wrote(addr, len(data), by=None)

    def read_l1(self, addr: int, n: int) -> bytes:
        return self.tile.l1.read(addr, n)

    def write_mailbox(self, path: str, value: int) -> None:
        off, size = self.msgs.locate(path)
        self.write_l1(self.msgs.mailbox_base + off,
                      (value & ((1 << (8 * size)) - 1)).to_bytes(size, "little"))

    def read_mailbox(self, path: str) -> int:
        off, size = self.msgs.locate(path)
        return int.from_bytes(self.read_l1(self.msgs.mailbox_base + off, size), "little")

    # -- firmware -----------------------------------------------------------------------------

    def load_firmware(self, firmware: Mapping[str, Firmware]) -> None:
        for core, fw in firmware.items():
            for addr, data in fw.spans(self.mm):
                self.write_l1(addr, data)
            self.tile.symbols[core] = fw.symbols
        if "brisc" in firmware:
            boot = self.mm.mem("BOOT_CODE_BASE")
            self.write_l1(boot, jal_to(firmware["brisc"].info.fw_base, boot).to_bytes(4,
                                                                                     "little"))

    def init_mailboxes(self, logical_xy: tuple[int, int] = (0, 0),
                       grid: tuple[int, int] = (1, 1), brisc: Firmware | None = None,
                       tables: DeviceTables | None = None) -> None:
        """The mailbox state tt-metal's host writes before releasing BRISC; with BRISC's
        firmware, also the tables it copies at boot, sized as its symbols say (``tables``:
        those of a ``grid`` (columns, rows) of workers by default)."""
        c = self.msgs.const
        launch = self.msgs.field("mailboxes_t", "launch")
        self.write_l1(self.msgs.mailbox_base + launch.offset, bytes(launch.size))
        self.write_mailbox("launch_msg_rd_ptr", 0)
        self.write_mailbox("go_message_index", 0)
        for i in range(c("go_message_num_entries")):
            self.write_mailbox(f"go_messages[{i}].all", 0)
        self.write_mailbox("go_messages[0].signal", c("RUN_MSG_INIT"))
        info = self.msgs.field("mailboxes_t", "core_info")
        self.write_l1(self.msgs.mailbox_base + info.offset, bytes(info.size))
        self.write_mailbox("core_info.noc_size_x", c("noc_size_x"))
        self.write_mailbox("core_info.noc_size_y", c("noc_size_y"))
        self.write_mailbox("core_info.worker_grid_size_x", grid[0])
        self.write_mailbox("core_info.worker_grid_size_y", grid[1])
        self.write_mailbox("core_info.absolute_logical_x", logical_xy[0])
        self.write_mailbox("core_info.absolute_logical_y", logical_xy[1])
        self.write_mailbox("core_info.l1_unreserved_start", self.mm.mem("MAP_END"))
        self.write_mailbox("core_info.core_magic_number", c("CoreMagicNumber_WORKER"))
        if brisc is not None:
            self._write_tables(brisc, tables or device_tables(*grid))

    def _write_tables(self, brisc: Firmware, tables: DeviceTables) -> None:
        """The bank tables (``noc_bank_table_init``: DRAM and L1 bank -> NOC coordinate per
        NOC, then the banks' address offsets) and the logical -> virtual coordinate tables
        (``noc_worker_logical_to_virtual_map_init``), laid out as BRISC's symbols size them."""
        syms = brisc.symbols
        names = ("dram_bank_to_noc_xy", "l1_bank_to_noc_xy", "bank_to_dram_offset",
                 "bank_to_l1_offset", "worker_logical_col_to_virtual_col",
                 "worker_logical_row_to_virtual_row")
        try:
            sizes = {n: syms.size(n) for n in names}
        except KeyError as e:
            raise TileError(f"{brisc.path}: no symbol {e} to size the boot tables") from None
        banks, coords = tables.image(sizes)
        self.write_l1(self.mm.mem("BANK_TO_NOC_SCRATCH"), banks)
        self.write_l1(self.mm.mem("LOGICAL_TO_VIRTUAL_SCRATCH"), coords)

    # -- resets -------------------------------------------------------------------------------

    def _bits(self, cores: Iterable[str] | str) -> int:
        names = [cores] if isinstance(cores, str) else list(cores)
        bits = 0
        for n in names:
            if n not in CORE_NAMES:
                raise TileError(f"unknown core {n!r} (one of {', '.join(CORE_NAMES)})")
            bits |= self.mm.core(n).reset_bit
        return bits

    def hold(self, cores: Iterable[str] | str = CORE_NAMES) -> None:
        """Put ``cores`` in soft reset."""
        self.tile.set_soft_reset(self.tile.soft_reset | self._bits(cores))

    def release(self, cores: Iterable[str] | str = "brisc") -> None:
        """Take ``cores`` out of soft reset (they start at their reset PC)."""
        self.tile.set_soft_reset(self.tile.soft_reset & ~self._bits(cores))

    # -- launch and go ------------------------------------------------------------------------

    def write_launch(self, index: int = 0, enables: int = 0, mode: str = "host",
                     **fields: int) -> None:
        """Launch message ``index``: ``enables`` (bit *i*: processor *i* runs its kernel),
        dispatch ``mode`` ("host" or "dev") and any other ``kernel_config`` field by name."""
        c = self.msgs.const
        base = f"launch[{index}].kernel_config"
        off, size = self.msgs.locate(base)
        self.write_l1(self.msgs.mailbox_base + off, bytes(size))
        self.write_mailbox(f"{base}.enables", enables)
        self.write_mailbox(f"{base}.mode", c(f"DISPATCH_MODE_{mode.upper()}"))
        for name, value in fields.items():
            self.write_mailbox(f"{base}.{name}", value)

    def send_go(self, index: int = 0, signal: str = "RUN_MSG_GO") -> None:
        self.write_mailbox(f"go_messages[{index}].signal", self.msgs.const(signal))

    def go_signal(self, index: int = 0) -> int:
        return self.read_mailbox(f"go_messages[{index}].signal")


__all__ = ["Host"]
