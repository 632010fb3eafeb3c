"""The Blackhole Tensix tile: five RISC-V cores (BRISC, NCRISC, TRISC0..2), L1, the
memory-mapped units they use, and the Tensix coprocessor, running real tt-metal firmware.

Python API::

    from isaforge.tensix.tile import Tile, Host, boot, load_firmware_dir
    result = boot("firmware/bh-10503743232459396191")       # init handshake + an empty go
    result.init_done, result.go_done, result.cores["brisc"]

    tile = Tile()                                             # or step by step
    host = Host(tile)
    fw = load_firmware_dir("firmware/...")
    host.hold(); host.load_firmware(fw); host.init_mailboxes(brisc=fw["brisc"])
    host.release("brisc")
    tile.run(until=lambda: host.go_signal() == 0)             # RUN_MSG_DONE
    host.read_mailbox("go_messages[0].signal"), host.read_l1(0x3ae0, 16)

Programs: :class:`Noc` (DRAM banks and tiles by NOC coordinate, :mod:`.noc`), the program
pieces of :mod:`.program` (:class:`Kernel`, :class:`CircularBuffer`, interleaved DRAM
buffers) and :meth:`Host.launch` / :meth:`Host.run_program`; tt-metal's add1 build is
:mod:`.add1_build` (run it with :func:`isaforge.tensix.examples.add1`).

Grids: :class:`Grid` (:mod:`.grid`): R x C tiles at Blackhole's coordinates (:mod:`.soc`), DRAM,
one NOC and one deterministic scheduler; host-side layout helpers are :mod:`.layout`.

The memory map and the ``dev_msgs.h`` layout are generated tables (:mod:`.memmap`,
:mod:`.devmsgs`); each hardware unit is one module with one window (:mod:`.instr_push`,
:mod:`.pc_buf`, :mod:`.mailboxes`, ...); scheduling is :mod:`.scheduler`.
"""

from .boot import BootResult, boot
from .devmsgs import DevMsgs, dev_msgs
from .errors import (
    BadFirmware,
    CircularBufferError,
    NocError,
    TileDeadlock,
    TileError,
    TileStepLimit,
    UnmappedAccess,
)
from .grid import Grid, GridDeadlock, boot_grid
from .host import Host
from .loader import Firmware, Symbols, load_elf, load_firmware_dir
from .memmap import CORE_NAMES, MemoryMap, memory_map
from .noc import DramBank, Noc, NocFault, TileL1
from .program import CircularBuffer, DramBuffer, Kernel, tilize, untilize
from .tile import Tile

__all__ = ["CORE_NAMES", "BadFirmware", "BootResult", "CircularBuffer", "CircularBufferError",
           "DevMsgs", "DramBank", "DramBuffer", "Firmware", "Grid", "GridDeadlock", "Host",
           "Kernel", "MemoryMap", "Noc", "NocError", "NocFault", "Symbols", "Tile",
           "TileDeadlock", "TileError", "TileL1", "TileStepLimit", "UnmappedAccess", "boot",
           "boot_grid", "dev_msgs", "load_elf", "load_firmware_dir", "memory_map", "tilize",
           "untilize"]
