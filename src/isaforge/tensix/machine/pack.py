"""The packer: PACR moves rows of Dst to L1, converting their format.

Blackhole has one packer (tt-isa-documentation, PACR). One PACR reads ``count`` datums,
``x_end + 1`` (8 or 16) per active Dst read interface (``ReadIntfSel``: 0 all four, else a
mask), row by row from the Dst row its input address generator names, converts them and
writes them to L1 after the previous PACR's output, until one with ``Last`` ends the tile.
Semantics follow the official simulator (tenstorrent/ttsim, Blackhole; its outputs are the
oracle of ``tests/tensix/test_pack_oracle.py``); where it has no model (general edge masks),
the ISA documentation's.

Per PACR (thread ``t``, its CFG_STATE_ID bank of Config):

* **input address** (the thread's packer ADCs, channel 0): the byte address
  ``y * Ystride + z * Zstride + w * Wstride`` (``PCK0_ADDR_CTRL_*_REG_0``) divided by the
  size of a datum of ``THCON_SEC0_REG1_In_data_format`` is a datum index; its row, plus
  ``DEST_TARGET_REG_CFG_PACK_SEC0_Offset``, is the first Dst row (Dst32b rows with
  ``PCK_DEST_RD_CTRL_Read_32b_data``, else Dst16b rows). Interface ``k`` reads the row ``k``
  further (``ReadIntfSel`` 5 and 10: every other row; ``DstAccessMode``: rows 16 apart). A Dst
  row marked invalid (ZEROACC) reads as 0;
* **edge masks**: a tile position generator counts datums (16 per row, ``pack_reads_per_xy_plane``
  rows per face); each row's position selects through ``TILE_ROW_SET_MAPPING_0/1`` (chosen by
  ``PCK_EDGE_TILE_ROW_SET_SELECT``) between the ``PCK_EDGE_OFFSET_SEC0`` and ``_SEC1`` column
  masks; a masked datum is written as 0, unconverted;
* **conversion** (:mod:`.l1formats`): the early conversion to the intermediate format
  ``ALU_FORMAT_SPEC_REG2_Dstacc`` (which must equal ``In_data_format``), ReLU
  (``STACC_RELU``), the late conversion to ``THCON_SEC0_REG1_Out_data_format``, BFP's shared
  exponent per 16 datums; ``Pack_L1_Acc`` adds FP32/FP16/BF16 results to what L1 holds;
* **output address**: the first PACR of a tile starts at ``(L1_Dest_addr + 1) * 16`` plus
  ``(ch1_y * PCK0_ADDR_CTRL_XY_REG_1_Ystride) >> 4`` 16-byte units; BFP (and 8-bit) formats
  put their exponents there and the datums ``Exp_section_size`` 16-byte units further; the
  next PACR continues where this one ended. ``Last`` zero-pads the datums and exponents to 16
  bytes and ends the tile;
* **counters**: ``ADDR_MOD_PACK_SEC[AddrMode]`` moves the thread's packer ADCs (Y source and
  destination increment/clear/carry-return, Z source and destination).

What the official simulator does not implement, the model refuses with
:class:`~.state.NotImplementedInstruction` naming it (``Flush``, ``CtxtCtrl``,
``OvrdThreadId``, ``ZeroWrite``, ``RowPadZero``, configuration contexts, downsampling,
exponent thresholding, tile headers, transposed Y/Z packing, ``ZOffset``, a non-zero
channel-0 X, output Y carry-return); configurations it calls undefined behaviour are reported
as such (then the model continues as described).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, fields
from itertools import islice
from typing import NamedTuple

import numpy as np

from ..isa import ops
from . import l1formats as L
from . import l1formats_jit
from .dispatch import Execute, Fields, Report, Unit
from .l1 import L1Access, L1Source, Refused
from .l1formats_jit import _LOADED
from .regfiles import Dst
from .state import (
    ADC_MASKS,
    PACK,
    ADCs,
    Config,
    NotImplementedInstruction,
    ThreadConfig,
    W,
    X,
    Y,
    Z,
    config_versions,
)

I64 = np.int64
PACR_OPCODE = 0x41

#: THCON_SEC0_REG1 fields the packer model requires to be 0 (unmodelled functionality)
_MUST_BE_ZERO = ("Row_start_section_size", "Dis_shared_exp_assembler", "Enable_out_fifo",
                 "Add_l1_dest_addr_offset", "Sub_l1_tile_header_size",
                 "Source_interface_selection", "Exp_threshold_en", "Add_tile_header_size",
                 "Downsample_mask", "Downsample_rate", "Auto_set_last_pacr_intf_sel",
                 "pack_start_intf_pos")


@dataclass(frozen=True)
class PackRegs:
    """What a PACR of one thread reads from Config and ThreadConfig (read once per
    configuration, see :meth:`Packer.regs`)."""

    read32: bool
    round10: bool
    read_unsigned: bool
    read_int8: bool
    inter: int
    in_fmt: int
    out: int
    strides: tuple[int, int, int, int]  # ch0 X, Y, Z, W (bytes)
    ch1_ystride: int
    base1: int
    dest_addr: int  # L1_Dest_addr
    exp_section: int
    l1_acc: bool
    e4m3: bool
    relu: int
    relu_threshold: int
    reads_per_plane: int
    yz_transposed: bool
    dst_offset: int
    zoffset: int
    row_set_select: int
    row_set_mapping: tuple[tuple[int, ...], tuple[int, ...]]
    edge_masks: tuple[int, int]
    edge_mode: int
    remap_addrs: bool
    swizzle_32b: bool
    unmodelled: tuple[str, ...]  # THCON fields set that the model does not implement
    addr_mods: tuple[tuple[int, ...], ...]  # ADDR_MOD_PACK_SEC0..3 (ThreadConfig words)

    def __hash__(self) -> int:
        """The fields' hash, computed once (each PACR's plan lookup hashes its PackRegs)."""
        h = self.__dict__.get("_hash")
        if h is None:
            h = hash(tuple(getattr(self, f.name) for f in fields(self)))
            object.__setattr__(self, "_hash", h)
        return h


def read_regs(config: Config, thread_config: ThreadConfig, t: int) -> PackRegs:
    """Thread ``t``'s :class:`PackRegs` (its CFG_STATE_ID bank)."""
    bank = thread_config.bank(t)

    def c(name: str) -> int:
        return config.get(name, bank)

    mapping = tuple(tuple(c(f"TILE_ROW_SET_MAPPING_{k}_row_set_mapping_{r}") for r in range(16))
                    for k in (0, 1))
    pack_mods = tuple(int(thread_config.regs[t, 37 + i]) for i in range(4))
    return PackRegs(
        read32=bool(c("PCK_DEST_RD_CTRL_Read_32b_data")),
        round10=bool(c("PCK_DEST_RD_CTRL_Round_10b_mant")),
        read_unsigned=bool(c("PCK_DEST_RD_CTRL_Read_unsigned")),
        read_int8=bool(c("PCK_DEST_RD_CTRL_Read_int8")),
        inter=c("ALU_FORMAT_SPEC_REG2_Dstacc"),
        in_fmt=c("THCON_SEC0_REG1_In_data_format"),
        out=c("THCON_SEC0_REG1_Out_data_format"),
        strides=(c("PCK0_ADDR_CTRL_XY_REG_0_Xstride"), c("PCK0_ADDR_CTRL_XY_REG_0_Ystride"),
                 c("PCK0_ADDR_CTRL_ZW_REG_0_Zstride"), c("PCK0_ADDR_CTRL_ZW_REG_0_Wstride")),
        ch1_ystride=c("PCK0_ADDR_CTRL_XY_REG_1_Ystride"),
        base1=c("PCK0_ADDR_BASE_REG_1_Base"),
        dest_addr=c("THCON_SEC0_REG1_L1_Dest_addr"),
        exp_section=c("THCON_SEC0_REG1_Exp_section_size"),
        l1_acc=bool(c("THCON_SEC0_REG1_Pack_L1_Acc")),
        e4m3=bool(c("THCON_SEC0_REG1_Pac_LF8_4b_exp")),
        relu=c("STACC_RELU_ApplyRelu"),
        relu_threshold=c("STACC_RELU_ReluThreshold"),
        reads_per_plane=c("PACK_COUNTERS_SEC0_pack_reads_per_xy_plane"),
        yz_transposed=bool(c("PACK_COUNTERS_SEC0_pack_yz_transposed")),
        dst_offset=c("DEST_TARGET_REG_CFG_PACK_SEC0_Offset"),
        zoffset=c("DEST_TARGET_REG_CFG_PACK_SEC0_ZOffset"),
        row_set_select=c("PCK_EDGE_TILE_ROW_SET_SELECT_select"),
        row_set_mapping=mapping,  # type: ignore[arg-type]
        edge_masks=(c("PCK_EDGE_OFFSET_SEC0_mask"), c("PCK_EDGE_OFFSET_SEC1_mask")),
        edge_mode=c("PCK_EDGE_MODE_mode"),
        remap_addrs=bool(c("DEST_ACCESS_CFG_remap_addrs")),
        swizzle_32b=bool(c("DEST_ACCESS_CFG_swizzle_32b")),
        unmodelled=tuple(n for n in _MUST_BE_ZERO if c(f"THCON_SEC0_REG1_{n}")),
        addr_mods=tuple((m & 0xF, m >> 4 & 1, m >> 5 & 1, m >> 6 & 0xF, m >> 10 & 1,
                         m >> 11 & 1, m >> 12 & 1, m >> 13 & 1, m >> 14 & 1, m >> 15 & 1)
                        for m in pack_mods),
    )


class PackerState:
    """What the packer carries from one PACR to the next within a tile: whether a tile is
    open (``active``; a PACR with ``Last`` closes it), the tile position generator
    (``x``, ``y``, ``z``) and the next output byte addresses of datums and exponents.

    They are kept as one tuple (:meth:`key`, what plans are found by), which
    :meth:`restore` replaces."""

    __slots__ = ("_key",)

    def __init__(self) -> None:
        self._key: tuple[int, ...] = (0, 0, 0, 0, 0, 0)

    def key(self) -> tuple[int, ...]:
        return self._key

    def restore(self, key: tuple[int, ...]) -> None:
        active, x, y, z, data_addr, exp_addr = key
        self._key = (int(bool(active)), x, y, z, data_addr, exp_addr)

    def _set(self, i: int, value: int) -> None:
        k = list(self._key)
        k[i] = int(value)
        self._key = tuple(k)

    active = property(lambda self: bool(self._key[0]), lambda self, v: self._set(0, bool(v)))
    x = property(lambda self: self._key[1], lambda self, v: self._set(1, v))
    y = property(lambda self: self._key[2], lambda self, v: self._set(2, v))
    z = property(lambda self: self._key[3], lambda self, v: self._set(3, v))
    data_addr = property(lambda self: self._key[4], lambda self, v: self._set(4, v))
    exp_addr = property(lambda self: self._key[5], lambda self, v: self._set(5, v))


class PackPlan(NamedTuple):
    """What a run of PACRs does, worked out once (see :meth:`Packer.plan`): where the datums
    come from and go, and the counters and packer state after them. Executing it
    (:meth:`Packer.execute`) converts all their datums at once."""

    n: int  # PACRs
    rows: np.ndarray  # Dst rows (of the view Read_32b_data selects) read, 16 datums each
    take: np.ndarray  # which of those datums are packed, in order
    keep: np.ndarray  # which packed datums the edge masks let through
    all_taken: bool
    all_kept: bool
    data: int  # output byte address of the first datum
    exp: int  # output byte address of the first BFP exponent
    exp_write: np.ndarray  # BFP: which exponents land (a later datum group wins)
    pads: tuple[tuple[int, int], ...]  # byte ranges the last PACR zero-pads
    adc_after: np.ndarray  # the thread's packer ADCs after the run
    state_after: tuple[int, ...]
    ub: tuple[str, ...]  # undefined behaviour to report


class Ready(NamedTuple):
    """A :class:`PackPlan` prepared for the compiled kernel (see :meth:`Packer.ready`): its
    indices and scalars in one array, and what to do after the kernel ran."""

    plan: PackPlan
    r: PackRegs
    prog: np.ndarray  # l1formats_jit._k_pack_prog's argument
    end: int  # the byte after the datums (the kernel runs only if L1 holds them)
    written: tuple[tuple[int, int], ...]  # the L1 ranges to tell watchers of, in order


class _LongWay:
    """What :meth:`Packer.ready` keeps for a plan that goes the long way (false; it keeps the
    regs its key names by identity alive)."""

    __slots__ = ("r",)

    def __init__(self, r: PackRegs) -> None:
        self.r = r

    def __bool__(self) -> bool:
        return False


class Packer(Unit):
    """The packer (PACR), on Dst, the packer ADCs, Config/ThreadConfig and L1."""

    #: PACRs (and runs of them) from prepared plans executed by one compiled call
    #: (:class:`Ready`; False: each goes the long way, :meth:`plan` then :meth:`execute`;
    #: tests compare)
    ready_plans = True

    def __init__(self, dst: Dst, adc: ADCs, config: Config, thread_config: ThreadConfig,
                 memory: Callable[[], object], report_ub: Report) -> None:
        self.dst = dst
        self.adc = adc
        self.config = config
        self.thread_config = thread_config
        self.report_ub = report_ub
        self.state = PackerState()
        self._cache: dict[int, tuple[tuple[int, int], PackRegs]] = {}
        #: (thread, its ThreadConfig row's bytes, its bank's Config words' bytes) -> PackRegs
        self._by_content: dict[tuple[int, bytes, bytes], PackRegs] = {}
        #: (thread, all ThreadConfig's bytes, all Config's bytes) -> PackRegs
        self._by_whole: dict[tuple[int, bytes, bytes], PackRegs] = {}
        self._plans: dict[tuple, PackPlan] = {}
        #: the same keys as ``_plans`` -> the plan prepared for the compiled kernel
        self._ready: dict[tuple, Ready | _LongWay] = {}
        #: the words of the last run of PACRs that ended with Last (pacr_run)
        self._last_run: tuple[int, ...] = ()
        #: PACR words by their decoded fields' id
        self._words: dict[int, tuple[Fields, tuple[int]]] = {}
        self._scratch = np.zeros(0, I64)
        self._l1 = L1Source(memory)

    def handlers(self) -> Mapping[str, Execute]:
        return {"PACR": self.pacr}

    def regs(self, t: int) -> PackRegs:
        """Thread ``t``'s :class:`PackRegs`, read again only after a configuration write."""
        key = config_versions(self.config, self.thread_config)
        hit = self._cache.get(t)
        if hit is not None and hit[0] == key:
            return hit[1]
        # a kernel rewriting the same values tile after tile finds its PackRegs by the bytes
        # of all of ThreadConfig and Config (two reads, no views), else by those read_regs
        # reads: the thread's ThreadConfig row and its bank's Config words (through plain
        # ndarray views: a WriteCountedArray's view costs a Python call)
        tregs, words = self.thread_config.regs, self.config.words
        whole = (t, tregs.tobytes(), words.tobytes())
        regs = self._by_whole.get(whole)  # type: ignore[assignment]
        if regs is None:
            row = tregs.view(np.ndarray)[t]
            bank = self.thread_config.bank(t)
            content = (t, row.tobytes(), words.view(np.ndarray)[bank].tobytes())
            regs = self._by_content.get(content)  # type: ignore[assignment]
            if regs is None:
                regs = read_regs(self.config, self.thread_config, t)
                if hit is not None and hit[1] == regs:
                    regs = hit[1]  # the same values again: the plans made with them stay valid
                if len(self._by_content) > 256:
                    self._by_content.clear()
                self._by_content[content] = regs
            if len(self._by_whole) > 256:
                self._by_whole.clear()
            self._by_whole[whole] = regs
        self._cache[t] = (key, regs)
        return regs

    # -- PACR -------------------------------------------------------------------------------

    def pacr(self, t: int, f: Fields) -> None:
        """PACR (see the module's documentation)."""
        hit = self._words.get(id(f))
        if hit is None or hit[0] is not f:  # (decoded fields are one object per word)
            if len(self._words) > 4096:
                self._words.clear()
            hit = self._words[id(f)] = (f, (_word(f),))
        try:
            r = self.regs(t)
            if self.ready_plans and self._from_ready(t, hit[1], r) is not None:
                return
            plan = self.plan(t, hit[1], r)
            for message in plan.ub:
                self.report_ub(message)  # (a hook may change the configuration)
            self.execute(t, plan, None if plan.ub else r)
        except Refused as e:
            raise NotImplementedInstruction(f"thread {t}: not implemented: PACR: {e}") from None

    def pacr_run(self, t: int, words: Collection[int], limit: int) -> int:
        """Execute the PACRs at the head of ``words`` (thread ``t``'s pending instructions,
        which the caller found alone, with nothing to trace) as one run, up to ``limit`` and
        through the first with ``Last``; returns how many ran (0: none, run them one by
        one). The result is that of :meth:`pacr` per instruction, bit for bit."""
        last = self._last_run  # (PACRs, the last alone with Last: the same head again?)
        if last and len(last) <= limit and tuple(islice(words, len(last))) == last:
            words = last
        else:
            head: list[int] = []
            for w in islice(words, limit if limit >= 0 else None):
                if w >> 24 != PACR_OPCODE:
                    break
                head.append(w)
                if w & 1:  # Last ends the tile, and the run
                    break
            if len(head) < 2:
                return 0
            words = tuple(head)
            if words[-1] & 1:
                self._last_run = words
        try:
            r = self.regs(t)
            if self.ready_plans:
                ready = self._from_ready(t, words, r)
                if ready is not None:
                    return ready.plan.n
            plan = self.plan(t, words, r)
        except Refused:
            return 0  # one by one: the one that is refused says so
        if plan.ub:
            return 0
        try:
            self.execute(t, plan)
        except Refused:
            return 0  # nothing was written: one by one, the refused one says so
        return plan.n

    def plan(self, t: int, words: tuple[int, ...], r: PackRegs | None = None) -> PackPlan:
        """The :class:`PackPlan` of PACR ``words`` from the current state (cached: a kernel
        packing tile after tile repeats the same plans); ``r``: :meth:`regs` already read."""
        if r is None:
            r = self.regs(t)
        key = (t, words, r, self.adc.v[t, PACK].tobytes(), self.state.key())
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plan(t, words, r)
            if len(self._plans) > 4096:
                self._plans.clear()
            self._plans[key] = plan
        return plan

    def ready(self, t: int, words: tuple[int, ...], r: PackRegs) -> Ready | bool:
        """The :class:`Ready` of PACR ``words`` from the current state (made once and kept
        under :meth:`plan`'s key), or False when the long way must run (undefined behaviour
        to report, Pack_L1_Acc, a conversion the compiled kernel does not refuse as numpy
        does, or the compiled kernel not loaded yet)."""
        plan = self.plan(t, words, r)
        if _LOADED.get("pack_prog") is None:
            return False  # (not loaded yet: the next PACR asks again)
        # (keyed by the identity of r, which a Ready keeps alive; _run_ready checks it)
        key = (t, words, id(r), self.adc.v[t, PACK].tobytes(), self.state.key())
        ready: Ready | bool = False
        if not plan.ub and _kernel_ok(r):
            dst = self.dst
            was = dst.remap_addrs, dst.swizzle_32b
            dst.remap_addrs, dst.swizzle_32b = r.remap_addrs, r.swizzle_32b
            table = dst.phys_table(r.read32)
            dst.remap_addrs, dst.swizzle_32b = was
            ready = prepare(t, plan, r, table)
        if len(self._ready) > 1024:  # (each holds a copy of its plan's indices)
            self._ready.clear()
        self._ready[key] = ready if ready else _LongWay(r)  # type: ignore[assignment]
        return ready

    def _from_ready(self, t: int, words: tuple[int, ...], r: PackRegs) -> Ready | None:
        """PACR ``words`` executed from their :class:`Ready` (made by :meth:`ready` the first
        time for this state): the Ready that ran, or None when the long way must run."""
        ready = self._ready.get((t, words, id(r), self.adc.v[t, PACK].tobytes(),
                                 self.state._key))
        if ready is None:
            ready = self.ready(t, words, r)
        if ready and self._run_ready(t, ready, r):  # type: ignore[arg-type]
            return ready  # type: ignore[return-value]
        return None

    def _run_ready(self, t: int, ready: Ready, r: PackRegs) -> bool:
        """Execute ``ready`` (made with regs ``r``) as :meth:`execute` would its plan: the
        compiled kernel, the L1 notifications, the zero-padding, the counters and the packer
        state; False (nothing done) when L1 does not hold its datums or the kernel is not
        loaded."""
        kernel = _LOADED.get("pack_prog") if USE_JIT else None
        mem = self._l1()
        l1 = mem.l1
        if kernel is None or ready.end > len(l1) or ready.r is not r:
            return False
        dst = self.dst
        dst.remap_addrs, dst.swizzle_32b = r.remap_addrs, r.swizzle_32b
        # (the kernel also sets the packer ADCs, which the long way sets after telling L1's
        # watchers: l1_written wakes cores, it does not read the coprocessor)
        kernel(dst.bits, dst.valid, l1, self.adc.v, ready.prog)
        for start, size in ready.written:
            mem.l1_written(start, size)
        plan = ready.plan
        for start, end in plan.pads:
            if start != end and end <= len(l1):
                l1[start:end] = 0
                mem.l1_written(start, end - start)
        self.state._key = plan.state_after  # (as restore() would keep it)
        return True

    def _plan(self, t: int, words: tuple[int, ...], r: PackRegs) -> PackPlan:
        ub: list[str] = []
        self._check(r, any(w >> 17 & 1 for w in words), ub)
        src_size = L.datum_bits(r.in_fmt)
        out_size = L.datum_bits(r.out)
        align = (src_size + 7) // 8
        for s in r.strides:
            if s % align:
                ub.append(f"packer stride {s} is not a multiple of the {align}-byte datum")
        a = self.adc.v[t, PACK].astype(np.int64)  # [channel, dim, (value, cr)]
        active, x, y, z, data_addr, exp_addr = self.state.key()
        rows: list[np.ndarray] = []
        takes: list[np.ndarray] = []
        keeps: list[np.ndarray] = []
        taken = 0
        data0 = exp0 = -1
        pads: tuple[tuple[int, int], ...] = ()
        mapping = np.array(r.row_set_mapping[r.row_set_select & 1])
        for word in words:
            f = decode_fields(word)
            for name in ("Flush", "CtxtCtrl", "OvrdThreadId", "ZeroWrite", "AddrCntContext",
                         "RowPadZero", "CfgContext"):
                if f[name]:
                    raise Refused(f"{name}={f[name]}")
            sel = f["ReadIntfSel"]
            if sel not in (0, 1, 3, 5, 10):
                raise Refused(f"ReadIntfSel={sel}")
            if a[0, X, 0]:
                raise Refused(f"packer ADC channel 0 X={int(a[0, X, 0])}")
            _, ys, zs, ws = r.strides
            src = (int(a[0, Y, 0]) * ys + int(a[0, Z, 0]) * zs + int(a[0, W, 0]) * ws) // align
            if src % 16:
                raise Refused(f"reading from datum {src}, not the start of a Dst row")
            count = int(a[1, X, 0]) - int(a[0, X, 0]) + 1
            if sel == 1:
                if count not in (8, 16):
                    raise Refused(f"{count} datums per interface (8 or 16 with one interface)")
            elif count != 16:
                raise Refused(f"{count} datums per interface (16)")
            total = count * (4 if sel == 0 else bin(sel).count("1"))
            x0, y0, z0 = (x, y, z) if active else (0, 0, 0)
            row0 = (src // 16 + r.dst_offset) & 0x3FF
            if row0 + (total + 15) // 16 > 1024:
                raise Refused(f"reading past the end of Dst (row {row0}, {total} datums)")
            if not active:
                if a[1, Z, 0] or a[1, W, 0]:
                    raise Refused("packer ADC channel 1 Z/W set")
                if r.base1:
                    raise Refused("PCK0_ADDR_BASE_REG_1_Base")
                addr = (r.dest_addr + 1 + ((int(a[1, Y, 0]) * r.ch1_ystride) >> 4)) & 0xFFFFFFF
                exp_addr = (addr << 4) & 0xFFFFFFFF
                if out_size <= 8:
                    addr += r.exp_section
                data_addr = (addr << 4) & 0xFFFFFFFF
            if out_size <= 8 and total % 16:
                raise Refused(f"packing {total} datums to an 8-bit or BFP format (a multiple "
                              f"of 16)")
            if data0 < 0:
                data0, exp0 = data_addr, exp_addr
            elif data_addr != data0 + taken * out_size // 8:
                raise Refused("a run of PACRs whose output is not contiguous")

            n_rows = (total + 15) // 16
            k = np.arange(n_rows)
            if f["DstAccessMode"]:
                rr = row0 + 16 * k
            elif sel == 5:
                rr = row0 + 2 * k
            elif sel == 10:
                rr = row0 + 2 * k + 1
            else:
                rr = row0 + k
            base = 16 * sum(len(v) for v in rows)
            rows.append(rr & 0x3FF)
            takes.append(base + np.arange(total))
            i = np.arange(total)
            y_at = (y0 + (x0 + i) // 16) % r.reads_per_plane
            chosen = mapping[y_at & 15]
            if (chosen > 1).any():
                raise Refused("TILE_ROW_SET_MAPPING values beyond 1 (PCK_EDGE_OFFSET_SEC2/3)")
            masks = np.where(chosen == 1, r.edge_masks[1], r.edge_masks[0])
            keeps.append(((masks >> (i % 16)) & 1).astype(bool))
            end = x0 + total
            x = end % 16
            y = (y0 + end // 16) % r.reads_per_plane
            z = (z0 + (y0 + end // 16) // r.reads_per_plane) & 0xFF
            data_addr += total * out_size // 8
            exp_addr += total // 16
            taken += total
            if word & 1:  # Last: zero-pad the datums and the exponents to 16 bytes
                pads = ((data_addr, (data_addr + 15) & ~15),)
                if r.out in L.BFP_FORMATS:
                    pads += ((exp_addr, (exp_addr + 15) & ~15),)
            active = not word & 1
            a = self._advance(r, f["AddrMode"], a)

        all_rows = np.concatenate(rows)
        take = np.concatenate(takes)
        keep = np.concatenate(keeps)
        g = np.arange(taken // 16)
        exp_write = np.ones(len(g), dtype=bool)
        if r.out in L.BFP_FORMATS:
            at = exp0 + g
            size_bytes = taken * out_size // 8
            inside = (at >= data0) & (at < data0 + size_bytes)
            exp_write = g > np.where(inside, (at - data0) // (2 * out_size), -1)
        return PackPlan(
            n=len(words), rows=all_rows, take=take, keep=keep,
            all_taken=len(take) == 16 * len(all_rows), all_kept=bool(keep.all()),
            data=data0, exp=exp0, exp_write=exp_write, pads=pads,
            adc_after=a.astype(np.uint32),
            state_after=(int(active), x, y, z, data_addr, exp_addr), ub=tuple(ub))

    def execute(self, t: int, plan: PackPlan, r: PackRegs | None = None) -> None:
        """Do what ``plan`` says: read, convert and write its datums, then set the counters
        and the packer state; ``r``: :meth:`regs` already read."""
        if r is None:
            r = self.regs(t)
        mem = self._l1()
        l1 = mem.l1
        dst = self.dst
        dst.remap_addrs, dst.swizzle_32b = r.remap_addrs, r.swizzle_32b
        phys = dst.phys_table(r.read32)[plan.rows]
        out_size = L.datum_bits(r.out)
        total = len(plan.take)
        size_bytes = total * out_size // 8
        kernel = _jit() if _kernel_ok(r) else None
        if kernel is not None and plan.data + size_bytes <= len(l1):
            values = self._scratch if len(self._scratch) >= total else np.zeros(total, I64)
            self._scratch = values
            kernel(dst.bits, dst.valid, phys, plan.take, plan.keep, r.read32, r.inter, r.out,
                   r.round10, r.read_unsigned, r.relu, r.relu_threshold, r.e4m3, out_size,
                   r.out in L.BFP_FORMATS, l1, plan.data, plan.exp, plan.exp_write, values)
            self._finish(t, plan, mem, size_bytes, r.out in L.BFP_FORMATS)
            return
        raw = dst.bits[phys].astype(I64)
        if r.read32:
            raw = (raw << 16) | dst.bits[phys + 8]
        valid = dst.valid[phys]
        if not valid.all():
            raw[~valid] = 0
        raw = raw.reshape(-1)
        if not plan.all_taken:
            raw = raw[plan.take]
        try:
            v = L.pack_read(raw, r.read32, r.inter, r.round10, r.read_unsigned)
            v = L.pack_relu(v, r.relu, r.relu_threshold, r.inter, r.read32)
            v = L.pack_late(v, r.read32, r.inter, r.out, r.e4m3)
        except L.PackError as e:
            if e.undefined:
                self.report_ub(e.message)
            raise Refused(e.message) from None
        if not plan.all_kept:
            v = np.where(plan.keep, v, 0)
        data = plan.data
        if data + size_bytes > len(l1):
            self.report_ub(f"PACR writes L1 [{data:#x}, +{size_bytes:#x}) beyond L1")
        elif r.out in L.BFP_FORMATS:
            shared, mags = L.bfp_pack(v, r.out)
            l1[data:data + size_bytes] = L.pack_datums_to_bytes(mags, out_size)
            # where the exponent and datum sections overlap (Exp_section_size too small) a
            # later group's datums win over an earlier exponent, and the other way round
            g = np.flatnonzero(plan.exp_write)
            l1[plan.exp + g] = shared[g].astype(np.uint8)
        else:
            if r.l1_acc:
                old = L.read_datums(l1, data * 8, total, out_size, total, 0)
                v = L.l1_accumulate(old, v, r.out)
            l1[data:data + size_bytes] = L.pack_datums_to_bytes(v, out_size)
        self._finish(t, plan, mem, size_bytes, r.out in L.BFP_FORMATS)

    def _finish(self, t: int, plan: PackPlan, mem: L1Access, size_bytes: int,
                bfp: bool) -> None:
        """Tell who watches L1 what was written, zero-pad after a Last, set the counters and
        the packer state."""
        l1 = mem.l1
        if plan.data + size_bytes <= len(l1):
            if bfp:
                mem.l1_written(plan.exp, len(plan.exp_write))
            mem.l1_written(plan.data, size_bytes)
        for start, end in plan.pads:
            if start != end and end <= len(l1):
                l1[start:end] = 0
                mem.l1_written(start, end - start)
        self.adc.v[t, PACK] = plan.adc_after
        self.state.restore(plan.state_after)


    def _check(self, r: PackRegs, strided: bool, ub: list[str]) -> None:
        """Refuse what the model does not implement; note undefined behaviour."""
        if r.unmodelled:
            raise Refused(f"THCON_SEC0_REG1_{r.unmodelled[0]} set")
        if strided and not (r.remap_addrs and r.swizzle_32b):
            raise Refused("DstAccessMode without DEST_ACCESS_CFG remap_addrs and swizzle_32b")
        if r.yz_transposed:
            raise Refused("pack_yz_transposed")
        if not 1 <= r.reads_per_plane <= 16:
            raise Refused(f"pack_reads_per_xy_plane={r.reads_per_plane} (1..16)")
        if r.zoffset:
            raise Refused("DEST_TARGET_REG_CFG_PACK_SEC0_ZOffset")
        if r.inter != r.in_fmt:
            ub.append(f"packer intermediate format {r.inter} (Dstacc) differs from "
                      f"In_data_format {r.in_fmt}")
        try:
            L.check_pack_mode(r.read32, r.inter, r.out, r.round10)
        except L.PackError as e:
            raise Refused(e.message) from None
        if r.read_int8 and r.inter in (1, 2, 5, 6):
            raise Refused("PCK_DEST_RD_CTRL_Read_int8 with a float format")
        if r.l1_acc and r.out not in (0, 1, 5):
            raise Refused(f"Pack_L1_Acc into format {r.out}")
        if r.row_set_select & 3 > 1:
            raise Refused("PCK_EDGE_TILE_ROW_SET_SELECT beyond TILE_ROW_SET_MAPPING_1")
        if r.edge_mode:
            raise Refused("PCK_EDGE_MODE_mode")
        if r.relu > 3:
            raise Refused(f"ApplyRelu={r.relu}")
        if r.relu and r.relu_threshold & 0x8000:
            ub.append(f"a negative ReLU threshold ({r.relu_threshold:#x})")

    @staticmethod
    def _advance(r: PackRegs, mode: int, a: np.ndarray) -> np.ndarray:
        """ADDR_MOD_PACK_SEC[mode] applied to the packer ADCs ``a`` ([channel, dim, (value,
        cr)]); returns the new counters."""
        (y0_incr, y0_cr, y0_clr, y1_incr, y1_cr, y1_clr, z0_incr, z0_clr, z1_incr,
         z1_clr) = r.addr_mods[mode & 3]
        if y1_cr:
            raise Refused("ADDR_MOD_PACK YdstCR")
        a = a.copy()
        ym, zm = ADC_MASKS[Y], ADC_MASKS[Z]
        if y0_clr:
            a[0, Y] = 0
        elif y0_cr:
            a[0, Y, 1] = (a[0, Y, 1] + y0_incr) & ym
            a[0, Y, 0] = a[0, Y, 1]
        else:
            a[0, Y, 0] = (a[0, Y, 0] + y0_incr) & ym
        if y1_clr:
            a[1, Y] = 0
        else:
            a[1, Y, 0] = (a[1, Y, 0] + y1_incr) & ym
        if z0_clr:
            a[0, Z] = 0
        else:
            a[0, Z, 0] = (a[0, Z, 0] + z0_incr) & zm
        if z1_clr:
            a[1, Z] = 0
        else:
            a[1, Z, 0] = (a[1, Z, 0] + z1_incr) & zm
        return a


#: use the compiled kernel (:mod:`.l1formats_jit`) once this many PACR runs have executed
#: (loading numba costs ~0.5 s of CPU per process, which a short program would not win back;
#: once something else imported numba, loading the cached kernels costs ~1 ms: at once)
USE_JIT = True
JIT_AFTER = 64
_JIT_STATE = {"calls": 0}


def _jit() -> Callable[..., None] | None:
    if not USE_JIT:
        return None
    kernel = l1formats_jit._LOADED.get("pack", False)
    if kernel is not False:
        return kernel  # type: ignore[return-value]
    _JIT_STATE["calls"] += 1
    if _JIT_STATE["calls"] <= JIT_AFTER and "numba" not in sys.modules:
        return None
    return l1formats_jit.load()  # type: ignore[return-value]


def _kernel_ok(r: PackRegs) -> bool:
    """Whether the compiled kernel packs with ``r`` as the numpy path does: the numpy path
    refuses ReLU with an INT32 mode other than 1 or with an intermediate format it does not
    know, and FP8 e5m2 (the kernel would pack them), and Pack_L1_Acc stays on numpy."""
    if r.l1_acc:
        return False
    if r.relu and not (r.inter in (0, 1, 2, 5, 6) or (r.inter == 8 and r.relu == 1)):
        return False
    return not (r.inter == 1 and r.out == 10 and not r.e4m3)


def prepare(t: int, plan: PackPlan, r: PackRegs, phys_table: np.ndarray) -> Ready:
    """``plan`` of thread ``t`` with regs ``r`` as a :class:`Ready`: the compiled kernel's
    ``prog`` (see :func:`.l1formats_jit._k_pack_prog`) and the L1 ranges
    :meth:`Packer.execute` tells watchers of; ``phys_table``: Dst's
    :meth:`~.regfiles.Dst.phys_table` under ``r``."""
    out_size = L.datum_bits(r.out)
    bfp = r.out in L.BFP_FORMATS
    n = len(plan.take)
    size_bytes = n * out_size // 8
    phys = phys_table[plan.rows]
    head = [n, len(phys), len(plan.exp_write), int(r.read32), r.inter, r.out, int(r.round10),
            int(r.read_unsigned), r.relu, r.relu_threshold, int(r.e4m3), out_size, int(bfp),
            plan.data, plan.exp, t] + [int(v) for v in plan.adc_after.reshape(-1)]
    prog = np.concatenate([np.array(head, I64), phys.astype(I64), plan.take.astype(I64),
                           plan.keep.astype(I64), plan.exp_write.astype(I64), np.zeros(n, I64)])
    written = ((plan.exp, len(plan.exp_write)),) if bfp else ()
    return Ready(plan=plan, r=r, prog=prog, end=plan.data + size_bytes,
                 written=written + ((plan.data, size_bytes),))


def _word(f: Fields) -> int:
    """The PACR word of decoded fields ``f``."""
    word = PACR_OPCODE << 24
    for fld in ops()["PACR"].fields:
        word |= (f[fld.name] & ((1 << (fld.high - fld.low + 1)) - 1)) << fld.low
    return word


def decode_fields(word: int) -> dict[str, int]:
    """The fields of a PACR word."""
    return {fld.name: (word >> fld.low) & ((1 << (fld.high - fld.low + 1)) - 1)
            for fld in ops()["PACR"].fields}


__all__ = ["PACR_OPCODE", "PackPlan", "PackRegs", "Packer", "PackerState", "Ready",
           "decode_fields", "prepare", "read_regs"]
