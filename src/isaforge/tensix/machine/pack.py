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

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from . import l1formats as L
from .dispatch import Execute, Fields, Report, Unit
from .l1 import Refused, l1_array
from .regfiles import Dst
from .state import PACK, ADCs, Config, NotImplementedInstruction, ThreadConfig, W, X, Y, Z

I64 = np.int64

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


def read_regs(config: Config, thread_config: ThreadConfig, t: int) -> PackRegs:
    """Thread ``t``'s :class:`PackRegs` (its CFG_STATE_ID bank)."""
    bank = thread_config.get(t, "CFG_STATE_ID_StateID")

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
    (``x``, ``y``, ``z``) and the next output byte addresses of datums and exponents."""

    def __init__(self) -> None:
        self.active = False
        self.x = self.y = self.z = 0
        self.data_addr = 0
        self.exp_addr = 0


class Packer(Unit):
    """The packer (PACR), on Dst, the packer ADCs, Config/ThreadConfig and L1."""

    def __init__(self, dst: Dst, adc: ADCs, config: Config, thread_config: ThreadConfig,
                 memory: Callable[[], object], report_ub: Report) -> None:
        self.dst = dst
        self.adc = adc
        self.config = config
        self.thread_config = thread_config
        self.memory = memory
        self.report_ub = report_ub
        self.state = PackerState()
        self._cache: dict[int, tuple[tuple[int, int], PackRegs]] = {}

    def handlers(self) -> Mapping[str, Execute]:
        return {"PACR": self.pacr}

    def regs(self, t: int) -> PackRegs:
        """Thread ``t``'s :class:`PackRegs`, read again only after a configuration write."""
        key = (self.config.version, self.thread_config.version)
        hit = self._cache.get(t)
        if hit is not None and hit[0] == key:
            return hit[1]
        regs = read_regs(self.config, self.thread_config, t)
        self._cache[t] = (key, regs)
        return regs

    # -- PACR -------------------------------------------------------------------------------

    def pacr(self, t: int, f: Fields) -> None:
        """PACR (see the module's documentation)."""
        try:
            self._pacr(t, f)
        except Refused as e:
            raise NotImplementedInstruction(f"thread {t}: not implemented: PACR: {e}") from None

    def _pacr(self, t: int, f: Fields) -> None:
        for name in ("Flush", "CtxtCtrl", "OvrdThreadId", "ZeroWrite", "AddrCntContext",
                     "RowPadZero", "CfgContext"):
            if f[name]:
                raise Refused(f"{name}={f[name]}")
        sel = f["ReadIntfSel"]
        if sel not in (0, 1, 3, 5, 10):
            raise Refused(f"ReadIntfSel={sel}")
        r = self.regs(t)
        self._check(r, bool(f["DstAccessMode"]))
        mem = l1_array(self.memory())
        l1 = mem.l1
        src_size = L.datum_bits(r.in_fmt)
        out_size = L.datum_bits(r.out)
        align = (src_size + 7) // 8
        for s in r.strides:
            if s % align:
                self.report_ub(f"packer stride {s} is not a multiple of the {align}-byte datum")
        a = self.adc.v[t, PACK]
        if a[0, X, 0]:
            raise Refused(f"packer ADC channel 0 X={int(a[0, X, 0])}")
        xs, ys, zs, ws = r.strides
        src = (int(a[0, Y, 0]) * ys + int(a[0, Z, 0]) * zs + int(a[0, W, 0]) * ws) // align
        if src % 16:
            raise Refused(f"reading from datum {src}, not the start of a Dst row")
        count = int(a[1, X, 0]) - int(a[0, X, 0]) + 1
        if sel == 1:
            if count not in (8, 16):
                raise Refused(f"{count} datums per interface (8 or 16 with one interface)")
        elif count != 16:
            raise Refused(f"{count} datums per interface (16)")
        n_intf = 4 if sel == 0 else bin(sel).count("1")
        total = count * n_intf
        st = self.state
        x0, y0, z0 = (st.x, st.y, st.z) if st.active else (0, 0, 0)
        row0 = (src // 16 + r.dst_offset) & 0x3FF
        if row0 + (total + 15) // 16 > 1024:
            raise Refused(f"reading past the end of Dst (row {row0}, {total} datums)")
        if not st.active:
            if a[1, Z, 0] or a[1, W, 0]:
                raise Refused("packer ADC channel 1 Z/W set")
            if r.base1:
                raise Refused("PCK0_ADDR_BASE_REG_1_Base")
            addr = (r.dest_addr + 1 + ((int(a[1, Y, 0]) * r.ch1_ystride) >> 4)) & 0xFFFFFFF
            st.exp_addr = (addr << 4) & 0xFFFFFFFF
            if out_size <= 8:
                addr += r.exp_section
            st.data_addr = (addr << 4) & 0xFFFFFFFF
        if out_size <= 8 and total % 16:
            raise Refused(f"packing {total} datums to an 8-bit or BFP format (a multiple of 16)")

        # Dst rows of the interfaces, and the raw datums (0 in invalid rows)
        n_rows = (total + 15) // 16
        k = np.arange(n_rows)
        if f["DstAccessMode"]:
            rows = row0 + 16 * k
        elif sel == 5:
            rows = row0 + 2 * k
        elif sel == 10:
            rows = row0 + 2 * k + 1
        else:
            rows = row0 + k
        dst = self.dst
        dst.remap_addrs, dst.swizzle_32b = r.remap_addrs, r.swizzle_32b
        phys = dst.phys_table(r.read32)[rows & 0x3FF]
        raw = dst.bits[phys].astype(I64)
        if r.read32:
            raw = (raw << 16) | dst.bits[phys + 8]
        raw = np.where(dst.valid[phys][:, None], raw, 0).reshape(-1)[:total]

        # the edge masks, per datum, from the tile position generator
        i = np.arange(total)
        pos = x0 + i
        line = y0 + pos // 16
        plane = r.reads_per_plane
        y_at = line % plane
        mask_sel = self._row_sets(r, y_at)
        masks = np.where(mask_sel, r.edge_masks[1], r.edge_masks[0])
        keep = ((masks >> (i % 16)) & 1).astype(bool)
        end = x0 + total
        st.x = end % 16
        st.y = (y0 + end // 16) % plane
        st.z = (z0 + (y0 + end // 16) // plane) & 0xFF

        try:
            v = L.pack_read(raw, r.read32, r.inter, r.round10, r.read_unsigned)
            v = L.pack_relu(v, r.relu, r.relu_threshold, r.inter, r.read32)
            v = L.pack_late(v, r.read32, r.inter, r.out, r.e4m3)
        except L.PackError as e:
            if e.undefined:
                self.report_ub(e.message)
            raise Refused(e.message) from None
        v = np.where(keep, v, 0)

        data = st.data_addr
        size_bytes = total * out_size // 8
        if data + size_bytes > len(l1):
            self.report_ub(f"PACR writes L1 [{data:#x}, +{size_bytes:#x}) beyond L1")
        elif r.out in L.BFP_FORMATS:
            shared, mags = L.bfp_pack(v, r.out)
            exp = st.exp_addr
            l1[data:data + size_bytes] = L.pack_datums_to_bytes(mags, out_size)
            # each group of 16 writes its exponent, then its datums: where the sections
            # overlap (Exp_section_size too small), a later group's exponent wins over an
            # earlier group's datums and a later group's datums over an earlier exponent
            g = np.arange(len(shared))
            at = exp + g
            group_bytes = 2 * out_size
            inside = (at >= data) & (at < data + size_bytes)
            over = np.where(inside, (at - data) // group_bytes, -1)
            last = g > over
            l1[at[last]] = shared[last].astype(np.uint8)
            mem.l1_written(exp, len(shared))
            mem.l1_written(data, size_bytes)
        else:
            if r.l1_acc:
                old = L.read_datums(l1, data * 8, total, out_size, total, 0)
                v = L.l1_accumulate(old, v, r.out)
            l1[data:data + size_bytes] = L.pack_datums_to_bytes(v, out_size)
            mem.l1_written(data, size_bytes)
        st.data_addr = data + size_bytes
        st.exp_addr += total // 16
        if f["Last"]:
            self._pad(l1, mem, st.data_addr)
            if r.out in L.BFP_FORMATS:
                self._pad(l1, mem, st.exp_addr)
        st.active = not f["Last"]
        self._advance(t, r, f["AddrMode"])

    def _check(self, r: PackRegs, strided: bool) -> None:
        """Refuse what the model does not implement; report undefined behaviour."""
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
            self.report_ub(f"packer intermediate format {r.inter} (Dstacc) differs from "
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

    def _row_sets(self, r: PackRegs, y: np.ndarray) -> np.ndarray:
        """Per datum, whether its row's mapping selects the SEC1 edge mask."""
        mapping = np.array(r.row_set_mapping[r.row_set_select & 1])
        chosen = mapping[y & 15]
        if (chosen > 1).any():
            raise Refused("TILE_ROW_SET_MAPPING values beyond 1 (PCK_EDGE_OFFSET_SEC2/3)")
        return chosen == 1

    @staticmethod
    def _pad(l1: np.ndarray, mem: object, end: int) -> None:
        pad = (end + 15) & ~15
        if pad != end and pad <= len(l1):
            l1[end:pad] = 0
            mem.l1_written(end, pad - end)  # type: ignore[attr-defined]

    def _advance(self, t: int, r: PackRegs, mode: int) -> None:
        """ADDR_MOD_PACK_SEC[mode] on the thread's packer ADCs."""
        (y0_incr, y0_cr, y0_clr, y1_incr, y1_cr, y1_clr, z0_incr, z0_clr, z1_incr,
         z1_clr) = r.addr_mods[mode & 3]
        if y1_cr:
            raise Refused("ADDR_MOD_PACK YdstCR")
        adc = self.adc
        if y0_clr:
            adc.set(t, PACK, 0, Y, 0)
        elif y0_cr:
            adc.set(t, PACK, 0, Y, adc.get(t, PACK, 0, Y, cr=True) + y0_incr)
        else:
            adc.set(t, PACK, 0, Y, adc.get(t, PACK, 0, Y) + y0_incr, cr=False)
        if y1_clr:
            adc.set(t, PACK, 1, Y, 0)
        else:
            adc.set(t, PACK, 1, Y, adc.get(t, PACK, 1, Y) + y1_incr, cr=False)
        if z0_clr:
            adc.set(t, PACK, 0, Z, 0)
        else:
            adc.set(t, PACK, 0, Z, adc.get(t, PACK, 0, Z) + z0_incr, cr=False)
        if z1_clr:
            adc.set(t, PACK, 1, Z, 0)
        else:
            adc.set(t, PACK, 1, Z, adc.get(t, PACK, 1, Z) + z1_incr, cr=False)


__all__ = ["PackRegs", "Packer", "PackerState", "read_regs"]
