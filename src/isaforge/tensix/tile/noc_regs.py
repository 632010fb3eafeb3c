"""The NOC interfaces' registers: NOC 0 at ``NOC_REGS_START_ADDR``, NOC 1 one
``NOC_INSTANCE_OFFSET`` further.

What the firmware touches at boot (``noc_init``, ``noc_local_state_init``, ``risc_init``,
``noc_set_cfg_reg``, ``noc_clear_all_packet_tags``) and what the dataflow API issues:

* each of the four command buffers (``NOC_CMD_BUF_OFFSET`` apart) keeps the registers software
  fills before issuing a transaction (target/return addresses, packet tag, control, atomic
  length and data, ...); ``NOC_CMD_CTRL`` reads 0 (ready: nothing is ever in flight), and
  writing ``NOC_CTRL_SEND_REQ`` to it issues the transaction ``NOC_CTRL`` describes, carried
  at once by the tile's :class:`~.noc.Noc`:

  - a read (``NOC_CMD_WR`` clear): ``NOC_AT_LEN_BE`` bytes from the target (``NOC_TARG_ADDR_*``,
    coordinate in ``_HI``) to this tile's L1 at ``NOC_RET_ADDR_LO``;
  - a write: from this tile's L1 at ``NOC_TARG_ADDR_LO`` to the return address
    (``NOC_RET_ADDR_*``), to every tile of the rectangle for a multicast
    (``NOC_CMD_BRCST_PACKET``; the source tile too with ``NOC_CMD_BRCST_SRC_INCLUDE``); an
    inline write (``NOC_CMD_WR_INLINE``) writes ``NOC_AT_DATA`` under the byte enables of
    ``NOC_AT_LEN_BE`` at the target address;
  - an atomic (``NOC_CMD_AT``): ``NOC_AT_INS_INCR_GET`` adds ``NOC_AT_DATA`` to the 32-bit word
    at the target (``NOC_AT_IND_32`` selects the word of the 16-byte line, ``NOC_AT_WRAP`` the
    wrap), as semaphore increments do;

  and the status counters the barriers poll count it at once: ``NIU_MST_CMD_ACCEPTED``; reads
  ``NIU_MST_RD_REQ_SENT`` and ``NIU_MST_RD_RESP_RECEIVED``; non-posted writes
  (``NOC_CMD_RESP_MARKED``) ``NIU_MST_NONPOSTED_WR_REQ_SENT`` and ``NIU_MST_WR_ACK_RECEIVED``
  (one ack per destination), posted ones ``NIU_MST_POSTED_WR_REQ_SENT``; atomics
  ``NIU_MST_NONPOSTED_ATOMIC_SENT`` and ``NIU_MST_ATOMIC_RESP_RECEIVED``, or
  ``NIU_MST_POSTED_ATOMIC_SENT``. A transaction the NOC cannot carry raises
  :class:`~.noc.NocFault` (the tile names the issuing core, pc and symbol);
* ``NOC_NODE_ID`` reads the tile's physical coordinates on that NOC (``y << 6 | x``; NOC 1
  counts from the opposite corner), ``NOC_CLEAR_OUTSTANDING_REQ_CNT`` accepts writes;
* the configuration registers from ``NOC_CFG(0)`` are plain storage (``NIU_CFG_0`` starts with
  coordinate translation enabled, as tt-metal runs Blackhole), except ``NOC_ID_LOGICAL``, which
  reads the tile's translated (virtual) coordinates, the same on both NOCs;
* the status counters from ``NOC_STATUS(0)`` count the transactions above (32 bits, wrapping).

Anything else stops the run with the register's offset.
"""

from __future__ import annotations

import numpy as np

from .memmap import CoreInfo, MemoryMap
from .mmio import MASK32, Unmodelled, Window, word_offset
from .noc import NocFault

N_CMD_BUFS = 4
N_CFG = 0x40
N_STATUS = 0x80
_CMD_BUF_REGS = ("NOC_TARG_ADDR_LO", "NOC_TARG_ADDR_MID", "NOC_TARG_ADDR_HI", "NOC_RET_ADDR_LO",
                 "NOC_RET_ADDR_MID", "NOC_RET_ADDR_HI", "NOC_PACKET_TAG", "NOC_CTRL",
                 "NOC_AT_LEN_BE", "NOC_AT_LEN_BE_1", "NOC_AT_DATA", "NOC_BRCST_EXCLUDE",
                 "NOC_L1_ACC_AT_INSTRN", "NOC_SEC_CTRL")

# NOC_CTRL bits and atomic fields (noc_parameters.h)
CMD_AT = 1 << 0
CMD_WR = 1 << 1
CMD_WR_INLINE = 1 << 3
CMD_RESP_MARKED = 1 << 4
CMD_BRCST_PACKET = 1 << 5
CMD_BRCST_SRC_INCLUDE = 1 << 17
CMD_L1_ACC_AT_EN = 1 << 31
AT_INS_INCR_GET = 1
NODE_MASK = 0x3F
#: words of a command buffer's registers (the latches), the array a NocRegs keeps them in
LATCH_WORDS = len(_CMD_BUF_REGS)
STORAGE_WORDS = N_CMD_BUFS * LATCH_WORDS


class NocRegs(Window):
    #: words of the tile's latch array a NocRegs keeps its registers in: the command buffers,
    #: the status counters, a word that stays 0 (what NOC_CMD_CTRL reads)
    WORDS = STORAGE_WORDS + N_STATUS + 1

    def __init__(self, tile: object, mm: MemoryMap, noc: int, words: np.ndarray | None = None,
                 at: int = 0) -> None:
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
        if sorted(self.cmd_regs) != list(range(LATCH_WORDS)):
            raise ValueError("the NOC command buffer registers are not words 0.. of a buffer")
        #: the registers live in ``words[at:at + WORDS]`` (the tile's latch array: the RISC-V
        #: compiled path stores and loads some of them itself, see :meth:`latch_ranges`)
        if words is None:
            words, at = np.zeros(self.WORDS, np.uint32), 0
        self.at = at
        #: the command buffers' registers (word w of buffer b at ``storage[b, w]``)
        self.storage = words[at:at + STORAGE_WORDS].reshape(N_CMD_BUFS, LATCH_WORDS)
        self.status = words[at + STORAGE_WORDS:at + STORAGE_WORDS + N_STATUS]
        self.zero = at + STORAGE_WORDS + N_STATUS  # (never written)
        self.reg = {n: word(n) for n in _CMD_BUF_REGS}
        self.cfg = [0] * N_CFG
        self.cfg[mm.noc("NIU_CFG_0")] = 1 << mm.noc("NIU_CFG_0_NOC_ID_TRANSLATE_EN")
        self.st = {n: mm.noc(n) for n in (
            "NIU_MST_ATOMIC_RESP_RECEIVED", "NIU_MST_WR_ACK_RECEIVED", "NIU_MST_RD_RESP_RECEIVED",
            "NIU_MST_CMD_ACCEPTED", "NIU_MST_RD_REQ_SENT", "NIU_MST_NONPOSTED_ATOMIC_SENT",
            "NIU_MST_POSTED_ATOMIC_SENT", "NIU_MST_NONPOSTED_WR_REQ_SENT",
            "NIU_MST_POSTED_WR_REQ_SENT")}
        #: transactions issued, by kind (for reports and benchmarks)
        self.issued = {"read": 0, "write": 0, "multicast": 0, "atomic": 0, "inline": 0}

    def _split(self, addr: int, size: int) -> tuple[int, int]:
        w = word_offset(self, addr, size)
        per = self.cmd_buf_size >> 2
        return divmod(w, per)

    def read(self, core: CoreInfo, addr: int, size: int) -> int:
        buf, w = self._split(addr, size)
        if buf < N_CMD_BUFS and w in self.cmd_regs:
            return int(self.storage[buf, w])
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
                return int(self.status[w - self.status_base])
        raise Unmodelled(f"{self.name}: register at offset {(addr - self.base):#x} is not "
                         f"modelled")

    def write(self, core: CoreInfo, addr: int, size: int, value: int) -> None:
        buf, w = self._split(addr, size)
        value &= 0xFFFFFFFF
        if buf < N_CMD_BUFS and w in self.cmd_regs:
            self.storage[buf, w] = value  # (what the compiled path does itself: latches)
            return
        if buf < N_CMD_BUFS and w == self.cmd_ctrl:
            if value & 1:
                self.tile.noc.issue(self, buf, core)
            return
        if buf == 0:
            if w == self.clear_outstanding:
                return
            if self.cfg_base <= w < self.cfg_base + N_CFG and w - self.cfg_base != self.id_logical:
                self.cfg[w - self.cfg_base] = value
                return
        raise Unmodelled(f"{self.name}: register at offset {(addr - self.base):#x} is not "
                         f"modelled")

    def latch_ranges(self) -> list[tuple[int, int, int]]:
        """The command buffers' registers as store latches (:meth:`AddressSpace.map_latches`
        ranges: address, bytes, word of the tile's latch array). A store there only keeps
        the value (NOC_CMD_CTRL, which issues, is outside)."""
        return [(self.base + b * self.cmd_buf_size, 4 * LATCH_WORDS, self.at + b * LATCH_WORDS)
                for b in range(N_CMD_BUFS)]

    def load_word(self, addr: int, size: int) -> int | None:
        """The word of the tile's latch array an aligned 32-bit read at ``addr`` returns, when
        that is all the read does (command buffer registers, NOC_CMD_CTRL, status counters),
        else None."""
        off = addr - self.base
        if size != 4 or off & 3:
            return None
        buf, w = divmod(off >> 2, self.cmd_buf_size >> 2)
        if buf < N_CMD_BUFS and w in self.cmd_regs:
            return self.at + buf * LATCH_WORDS + w
        if buf < N_CMD_BUFS and w == self.cmd_ctrl:
            return self.zero
        if buf == 0 and self.status_base <= w < self.status_base + N_STATUS:
            return self.at + STORAGE_WORDS + w - self.status_base
        return None

    def snapshot(self, buf: int) -> list[int]:
        """Command buffer ``buf``'s registers now, by word (what :meth:`issue` takes)."""
        return self.storage[buf].tolist()

    # -- transactions -------------------------------------------------------------------------

    def _count(self, name: str, n: int = 1) -> None:
        k = self.st[name]
        self.status[k] = (int(self.status[k]) + n) & MASK32

    def issue(self, buf: int, regs: list[int] | None = None) -> None:
        """Carry out the transaction command buffer ``buf`` describes (see the module text);
        ``regs``: the buffer's registers as they were when it was issued (a grid carries
        transactions out at the end of the scheduler round)."""
        regs = self.snapshot(buf) if regs is None else regs
        r = self.reg
        ctrl = regs[r["NOC_CTRL"]]
        noc = self.tile.noc
        me = self.tile.noc_endpoint
        targ = ((regs[r["NOC_TARG_ADDR_MID"]] & 0xF) << 32) | regs[r["NOC_TARG_ADDR_LO"]]
        targ_hi = regs[r["NOC_TARG_ADDR_HI"]]
        targ_xy = (targ_hi & NODE_MASK, (targ_hi >> 6) & NODE_MASK)
        length = regs[r["NOC_AT_LEN_BE"]]
        self._count("NIU_MST_CMD_ACCEPTED")
        if ctrl & CMD_L1_ACC_AT_EN:
            raise NocFault(f"{self.name}: command buffer {buf}: L1 accumulate "
                           f"(NOC_CMD_L1_ACC_AT_EN) is not modelled")
        if ctrl & CMD_AT:
            ins = (length >> 12) & 0xF
            if ins != AT_INS_INCR_GET:
                raise NocFault(f"{self.name}: command buffer {buf}: atomic instruction {ins} "
                               f"(only NOC_AT_INS_INCR_GET is modelled)")
            addr = (targ & ~0xF) + 4 * (length & 3)
            wrap = (length >> 2) & 0x1F
            incr = regs[r["NOC_AT_DATA"]]
            if ctrl & CMD_BRCST_PACKET:
                for ep in noc.rectangle(((targ_hi >> 12) & NODE_MASK, (targ_hi >> 18) & NODE_MASK),
                                        targ_xy):
                    if ep is not me or ctrl & CMD_BRCST_SRC_INCLUDE:
                        ep.noc_atomic_add(addr, incr, wrap)
            else:
                noc.at(targ_xy).noc_atomic_add(addr, incr, wrap)
            self.issued["atomic"] += 1
            if ctrl & CMD_RESP_MARKED:
                self._count("NIU_MST_NONPOSTED_ATOMIC_SENT")
                self._count("NIU_MST_ATOMIC_RESP_RECEIVED")
            else:
                self._count("NIU_MST_POSTED_ATOMIC_SENT")
            return
        if not ctrl & CMD_WR:
            dst = regs[r["NOC_RET_ADDR_LO"]]
            noc.read(targ_xy, targ, me, dst, length)
            self.issued["read"] += 1
            self._count("NIU_MST_RD_REQ_SENT")
            self._count("NIU_MST_RD_RESP_RECEIVED")
            return
        dests = 1
        if ctrl & CMD_WR_INLINE:
            value = regs[r["NOC_AT_DATA"]]
            base, shift = targ & ~0xF, targ & 0xF
            dst_ep = noc.at(targ_xy)
            for k in range(16):
                if length >> k & 1:
                    byte = (value >> (8 * ((k - shift) & 3))) & 0xFF
                    dst_ep.noc_write(base + k, bytes([byte]))
            self.issued["inline"] += 1
        else:
            ret = ((regs[r["NOC_RET_ADDR_MID"]] & 0xF) << 32) | regs[r["NOC_RET_ADDR_LO"]]
            ret_hi = regs[r["NOC_RET_ADDR_HI"]]
            ret_xy = (ret_hi & NODE_MASK, (ret_hi >> 6) & NODE_MASK)
            src = regs[r["NOC_TARG_ADDR_LO"]]
            if ctrl & CMD_BRCST_PACKET:
                start = ((ret_hi >> 12) & NODE_MASK, (ret_hi >> 18) & NODE_MASK)
                dests = noc.multicast(me, src, start, ret_xy, ret, length,
                                      bool(ctrl & CMD_BRCST_SRC_INCLUDE))
                self.issued["multicast"] += 1
            else:
                noc.write(me, src, ret_xy, ret, length)
                self.issued["write"] += 1
        if ctrl & CMD_RESP_MARKED:
            self._count("NIU_MST_NONPOSTED_WR_REQ_SENT")
            self._count("NIU_MST_WR_ACK_RECEIVED", dests)
        else:
            self._count("NIU_MST_POSTED_WR_REQ_SENT")


__all__ = ["LATCH_WORDS", "STORAGE_WORDS", "NocRegs"]
