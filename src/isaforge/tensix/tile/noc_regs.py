"""The NOC interfaces' registers: NOC 0 at ``NOC_REGS_START_ADDR``, NOC 1 one
``NOC_INSTANCE_OFFSET`` further.

This is the functional minimum the firmware touches at boot (``noc_init``,
``noc_local_state_init``, ``risc_init``, ``noc_set_cfg_reg``, ``noc_clear_all_packet_tags``),
with no NOC traffic behind it:

* each of the four command buffers (``NOC_CMD_BUF_OFFSET`` apart) keeps the registers software
  fills before issuing a transaction (target/return addresses, packet tag, control, atomic
  length and data, ...) as plain storage; ``NOC_CMD_CTRL`` reads 0 (ready), and writing it
  (issuing a transaction) is not modelled;
* ``NOC_NODE_ID`` reads the tile's physical coordinates on that NOC (``y << 6 | x``; NOC 1
  counts from the opposite corner), ``NOC_CLEAR_OUTSTANDING_REQ_CNT`` accepts writes;
* the configuration registers from ``NOC_CFG(0)`` are plain storage (``NIU_CFG_0`` starts with
  coordinate translation enabled, as tt-metal runs Blackhole), except ``NOC_ID_LOGICAL``, which
  reads the tile's translated (virtual) coordinates, the same on both NOCs;
* the status counters from ``NOC_STATUS(0)`` read 0: no request was ever sent or received.

Anything else stops the run with the register's offset.
"""

from __future__ import annotations

from .memmap import CoreInfo, MemoryMap
from .mmio import Unmodelled, Window, word_offset

N_CMD_BUFS = 4
N_CFG = 0x40
N_STATUS = 0x80
_CMD_BUF_REGS = ("NOC_TARG_ADDR_LO", "NOC_TARG_ADDR_MID", "NOC_TARG_ADDR_HI", "NOC_RET_ADDR_LO",
                 "NOC_RET_ADDR_MID", "NOC_RET_ADDR_HI", "NOC_PACKET_TAG", "NOC_CTRL",
                 "NOC_AT_LEN_BE", "NOC_AT_LEN_BE_1", "NOC_AT_DATA", "NOC_BRCST_EXCLUDE",
                 "NOC_L1_ACC_AT_INSTRN", "NOC_SEC_CTRL")


class NocRegs(Window):
    def __init__(self, tile: object, mm: MemoryMap, noc: int) -> None:
        start = mm.noc("NOC_REGS_START_ADDR")
        inst = mm.noc("NOC_INSTANCE_OFFSET")
        super().__init__(tile, start + noc * inst, inst)
        self.noc = noc
        self.name = f"NOC {noc} registers"
        self.cmd_buf_size = mm.noc("NOC_CMD_BUF_OFFSET")

        def word(name: str) -> int:
            return (mm.noc(name) - start) >> 2
        self.cmd_regs = {word(n): n for n in _CMD_BUF_REGS}
        self.cmd_ctrl = word("NOC_CMD_CTRL")
        self.node_id = word("NOC_NODE_ID")
        self.clear_outstanding = word("NOC_CLEAR_OUTSTANDING_REQ_CNT")
        self.cfg_base = word("NOC_CFG_BASE")
        self.status_base = word("NOC_STATUS_BASE")
        self.id_logical = mm.noc("NOC_ID_LOGICAL")
        self.storage = [dict.fromkeys(self.cmd_regs, 0) for _ in range(N_CMD_BUFS)]
        self.cfg = [0] * N_CFG
        self.cfg[mm.noc("NIU_CFG_0")] = 1 << mm.noc("NIU_CFG_0_NOC_ID_TRANSLATE_EN")

    def _split(self, addr: int, size: int) -> tuple[int, int]:
        w = word_offset(self, addr, size)
        per = self.cmd_buf_size >> 2
        return divmod(w, per)

    def read(self, core: CoreInfo, addr: int, size: int) -> int:
        buf, w = self._split(addr, size)
        if buf < N_CMD_BUFS and w in self.cmd_regs:
            return self.storage[buf][w]
        if buf < N_CMD_BUFS and w == self.cmd_ctrl:
            return 0  # ready: nothing is ever in flight
        if buf == 0:
            if w == self.node_id:
                x, y = self.tile.noc_physical_xy(self.noc)
                return (y << 6) | x
            if self.cfg_base <= w < self.cfg_base + N_CFG:
                k = w - self.cfg_base
                if k == self.id_logical:
                    x, y = self.tile.noc_virtual_xy
                    return (y << 6) | x
                return self.cfg[k]
            if self.status_base <= w < self.status_base + N_STATUS:
                return 0
        raise Unmodelled(f"{self.name}: register at offset {(addr - self.base):#x} is not "
                         f"modelled")

    def write(self, core: CoreInfo, addr: int, size: int, value: int) -> None:
        buf, w = self._split(addr, size)
        value &= 0xFFFFFFFF
        if buf < N_CMD_BUFS and w in self.cmd_regs:
            self.storage[buf][w] = value
            return
        if buf < N_CMD_BUFS and w == self.cmd_ctrl:
            raise Unmodelled(f"{self.name}: command buffer {buf}: issuing a NOC transaction "
                             f"(NOC_CMD_CTRL = {value:#x}) is not modelled")
        if buf == 0:
            if w == self.clear_outstanding:
                return
            if self.cfg_base <= w < self.cfg_base + N_CFG and w - self.cfg_base != self.id_logical:
                self.cfg[w - self.cfg_base] = value
                return
        raise Unmodelled(f"{self.name}: register at offset {(addr - self.base):#x} is not "
                         f"modelled")


__all__ = ["NocRegs"]
