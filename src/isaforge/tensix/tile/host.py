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
* :meth:`Host.launch`: a program (:mod:`.program`): any kernel images for BRISC, NCRISC and
  TRISC0-2, their runtime arguments and the local circular buffers, laid out in the kernel
  config area and described by the launch message; :meth:`Host.run_program` also sends the go
  and waits for done (with a step limit).

Every host write wakes the cores polling what it changed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .errors import CircularBufferError, TileError, TileStepLimit
from .loader import Firmware, Symbols, jal_to
from .memmap import CORE_NAMES
from .program import CircularBuffer, Kernel
from .scheduler import RunResult
from .soc import DeviceTables, device_tables
from .tile import Tile

#: tt-metal's NUM_CIRCULAR_BUFFERS when the launch message does not say (see
#: :meth:`Host.num_circular_buffers`; ``min_remote_cb_start_index`` = this: no remote CBs)
NUM_CIRCULAR_BUFFERS = 32
ALIGN = 16


class Host:
    def __init__(self, tile: Tile) -> None:
        self.tile = tile
        self.mm = tile.mm
        self.msgs = tile.msgs
        self._fw_symbols: dict[str, Symbols] = {}

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
            self._fw_symbols[core] = fw.symbols
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
        self.reset_messages()
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

    def reset_messages(self) -> None:
        """Launch messages zeroed, their read pointer and the go-message index 0, go signal
        ``RUN_MSG_INIT``: what the host writes before releasing BRISC, for any dev_msgs
        layout."""
        c = self.msgs.const
        launch = self.msgs.field("mailboxes_t", "launch")
        self.write_l1(self.msgs.mailbox_base + launch.offset, bytes(launch.size))
        self.write_mailbox("launch_msg_rd_ptr", 0)
        self.write_mailbox("go_message_index", 0)
        for i in range(c("go_message_num_entries")):
            self.write_mailbox(f"go_messages[{i}].all", 0)
        self.write_mailbox("go_messages[0].signal", c("RUN_MSG_INIT"))

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

    def launch(self, kernels: Iterable[Kernel], cbs: Iterable[CircularBuffer],
               config_base: int, enables: int | None = None, index: int = 0,
               **fields: int) -> int:
        """Lay a program out in L1 from ``config_base`` and write launch message ``index``
        for it, as tt-metal's host does; returns the end of the area used.

        The area holds, each 16-byte aligned: the runtime arguments of each core (its
        ``rta_offset``; no common arguments), the local CB configuration (four words per CB
        index up to the highest used: address, size, pages, page size; ``local_cb_offset``
        and ``local_cb_mask``), a zeroed semaphore block (``sem_offset``) and each kernel's
        text (``kernel_text_offset``). ``enables`` defaults to tt-metal's kernel bits: DM0
        (BRISC), DM1 (NCRISC), compute (any TRISC). Other launch fields can be given by
        name."""
        ks = {}
        for k in kernels:
            if k.core in ks:
                raise TileError(f"two kernels for {k.core}")
            ks[k.core] = k
        cb_list = sorted(cbs, key=lambda c: c.index)
        blob = bytearray()

        def put(data: bytes) -> int:
            blob.extend(bytes(-len(blob) % ALIGN))
            off = len(blob)
            blob.extend(data)
            return off

        c = self.msgs.const
        base = f"launch[{index}].kernel_config"
        vals: dict[str, int] = {}
        for proc, core in enumerate(CORE_NAMES):
            args = ks[core].runtime_args if core in ks else []
            off = put(b"".join((a & 0xFFFFFFFF).to_bytes(4, "little") for a in args))
            vals[f"rta_offset[{proc}].rta_offset"] = off
            vals[f"rta_offset[{proc}].crta_offset"] = put(b"")
        mask = 0
        n_cbs = self.num_circular_buffers()
        if cb_list:
            cfg = bytearray(16 * (cb_list[-1].index + 1))
            for cb in cb_list:
                if not 0 <= cb.index < n_cbs:
                    raise CircularBufferError(f"circular buffer index {cb.index} "
                                              f"(0..{n_cbs - 1})")
                if cb.addr + cb.size > self.mm.l1_size or cb.addr < config_base:
                    raise CircularBufferError(f"circular buffer {cb.index} [{cb.addr:#x}, "
                                              f"+{cb.size:#x}) is not in free L1")
                if mask >> cb.index & 1:
                    raise CircularBufferError(f"circular buffer {cb.index} configured twice")
                for other in cb_list:
                    if other.index != cb.index and other.addr < cb.addr + cb.size \
                            and cb.addr < other.addr + other.size:
                        raise CircularBufferError(f"circular buffers {other.index} and "
                                                  f"{cb.index} overlap in L1")
                mask |= 1 << cb.index
                cfg[16 * cb.index:16 * cb.index + 16] = b"".join(
                    v.to_bytes(4, "little") for v in (cb.addr, cb.size, cb.num_pages,
                                                      cb.page_size))
            vals["local_cb_offset"] = put(bytes(cfg))
        else:
            vals["local_cb_offset"] = put(b"")
        vals["remote_cb_offset"] = put(b"")
        sem = put(bytes(64))
        for i in range(self.msgs.field("kernel_config_msg_t", "sem_offset").count):
            vals[f"sem_offset[{i}]"] = sem
        for core, k in ks.items():
            proc = CORE_NAMES.index(core)
            vals[f"kernel_text_offset[{proc}]"] = put(k.text)
        end = config_base + len(blob) + (-len(blob) % ALIGN)
        lowest_cb = min((cb.addr for cb in cb_list), default=end)
        if lowest_cb < end or end > self.mm.l1_size:
            raise TileError(f"the kernel config area [{config_base:#x}, {end:#x}) overlaps a "
                            f"circular buffer or leaves L1")
        self.write_l1(config_base, bytes(blob))
        if enables is None:
            enables = ((1 if "brisc" in ks else 0) | (2 if "ncrisc" in ks else 0)
                       | (4 if any(n.startswith("trisc") for n in ks) else 0))
        self.write_launch(index, enables=enables, mode="host")
        self.write_mailbox(f"{base}.kernel_config_base[{c('ProgrammableCoreType_TENSIX')}]",
                           config_base)
        if "min_remote_cb_start_index" in self.msgs.structs["kernel_config_msg_t"][1]:
            self.write_mailbox(f"{base}.min_remote_cb_start_index", n_cbs)
        self.write_mailbox(f"{base}.local_cb_mask", mask)
        for name, value in {**vals, **fields}.items():
            self.write_mailbox(f"{base}.{name}", value)
        # symbols: each core's firmware plus its kernel at the address it is loaded at
        for core, k in ks.items():
            fw = self._fw_symbols.get(core)
            shift = config_base + vals[f"kernel_text_offset[{CORE_NAMES.index(core)}]"] \
                - k.link_base
            extra = [(a + shift, 0, f"{k.name}:{n}") for a, n in k.symbols]
            self.tile.symbols[core] = Symbols((fw.entries if fw else []) + extra,
                                              dict(fw.by_name) if fw else {})
        return end

    def num_circular_buffers(self) -> int:
        """The firmware's NUM_CIRCULAR_BUFFERS: one bit each in the launch message's
        ``local_cb_mask`` (32 in the add1 build, 64 in the bundled firmware's)."""
        fields = self.msgs.structs["kernel_config_msg_t"][1]
        mask = fields.get("local_cb_mask")
        return 8 * mask.size if mask is not None else NUM_CIRCULAR_BUFFERS

    def run_program(self, max_steps: int | None = 50_000_000, index: int = 0) -> RunResult:
        """Send the go for launch message ``index`` and run until the go signal reads
        ``RUN_MSG_DONE`` (BRISC writes it once every enabled core is done; ``tile.run()``
        afterwards lets the cores settle into waiting for the next go). A core that never
        finishes raises
        :class:`~.errors.TileStepLimit` (or a deadlock) naming each core's pc and symbol."""
        done = self.msgs.const("RUN_MSG_DONE")
        self.send_go(index)
        result = self.tile.run(max_steps, lambda: self.go_signal() == done)
        if self.go_signal() != done:
            raise TileStepLimit(f"the program did not finish; "
                                f"{self.tile.scheduler.describe_cores()}")
        return result

    def send_go(self, index: int = 0, signal: str = "RUN_MSG_GO") -> None:
        self.write_mailbox(f"go_messages[{index}].signal", self.msgs.const(signal))

    def go_signal(self, index: int = 0) -> int:
        return self.read_mailbox(f"go_messages[{index}].signal")


__all__ = ["Host"]
