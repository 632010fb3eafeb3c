"""The two unpackers: UNPACR moves datums from L1 to SrcA (unpacker 0), SrcB (unpacker 1) or
Dst (unpacker 0), converting their format.

One UNPACR (thread ``t``, ``Unpack_block_selection`` = which unpacker) reads
``ch1.X - ch0.X + 1`` consecutive datums of its input tile and writes them to consecutive
positions of the unpacker's Src bank (or of Dst). The model follows the ISA documentation's
functional model of UNPACR (Wormhole; Blackhole's instruction has the same fields) where the
official simulator (tenstorrent/ttsim, Blackhole) agrees, and the simulator where they differ
on Blackhole (rows of 32 datums for 16- and 32-bit formats in tileize mode, SrcA rows wrapping
at 64, the conversions of :mod:`.l1formats`):

* **context** (``OvrdThreadId``, the documentation's MultiContextMode): context
  ``CfgContextId + UNPACK_MISC_CFG_CfgContextOffset`` selects the per-context base and offset
  addresses, X dimension (unpacker 0), output address (unpacker 0), unpack-to-Dst bit and,
  with ``Ovrd_data_format``, formats; the address counters are the ``AddrCntContextId``
  thread's (X, Y) and the issuing thread's (Z, W). Without it: context 0, the thread's own
  counters, the tile descriptor's X dimension and formats;
* **input address**: ``(Base + (Offset & 0xFFFF) + 1) * 16`` bytes, then (BFP formats without
  ``Force_shared_exp``) the exponent section (one byte per 16 datums of the whole tile, padded
  to 16 bytes), then the datums; the first datum is ``((W * ZDim + Z) * YDim + Y) * XDim + X``
  (tile descriptor dimensions, ``THCON_SECn_REG0`` words 0..2; a 0 Z or W dimension means 1);
  tileize mode (``Tileize_mode``) starts a new L1 row of 16 datums (8-bit and smaller
  formats) or 32 datums (wider ones) every ``Shift_amount`` row stride;
* **output address**: ``Y * Ystride + Z * Zstride + W * Wstride`` bytes (``UNPn_ADDR_CTRL_*_REG_1``,
  channel 1 counters) over the output datum size, plus (unpacker 0, MultiContextMode) the
  context's ``Dest_cntx`` address, which replaces it unless unpacking to Dst or
  ``add_dest_addr_cntr``. Unpacker 0's first four rows do not exist: datums addressed there
  are dropped; the rest land 4 rows lower (SrcA rows wrap at 64; with
  ``SRCA_SET_SetOvrdWithAddr`` clear, rows 0..15 relative to the unpacker's row cursor).
  SrcB rows add the unpacker's row cursor. Unpacking to Dst (``Unpack_If_Sel``) writes Dst32b
  rows for 32-bit output formats, Dst16b rows otherwise, and marks them valid;
* the unpacker writes its current Src bank, waiting at the Wait Gate until that bank belongs to
  the unpackers; ``SetDatValid`` then hands the bank to the Matrix Unit, latches the output
  format as the bank's implied format and moves to the other bank (the row cursor restarts at
  ``SRC?_SET_Base * 16``); without it ``Unpack_Src_Reg_Set_Upd`` advances the cursor by 16 +
  that base; ``AddrMode`` then adds to channel 0 Z/Y and channel 1 Z/Y (2 bits each).

Not modelled (:class:`~.state.NotImplementedInstruction`): decompression, row search,
context counters (``AutoIncContextID``, ``CfgContextCntInc``), upsampling, column shifts,
``srcb_bcast``, the Blackhole L1 FIFO wrap (``Unpack_limit_address``), SrcA burst write drops.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from ..isa import thread_config_fields
from . import fpu, fpu_jit
from . import l1formats as L
from .dispatch import Changes, Execute, Fields, Report, Unit, Wait
from .l1 import L1Source, Refused
from .regfiles import Dst, SrcClient, SrcRegs
from .state import (
    UNP0,
    ADCs,
    Config,
    NotImplementedInstruction,
    ThreadConfig,
    W,
    X,
    Y,
    Z,
    config_versions,
    field_bits,
)

I64 = np.int64

#: THCON_SECn words of each unpacker (tile descriptor at word 0 of the section)
_SECTION = (64, 112)


_CONTEXT_OFFSET = tuple(
    field_bits(thread_config_fields()[f"UNPACK_MISC_CFG_CfgContextOffset_{k}"]) for k in (0, 1))


@functools.cache
def _unpacr_reason(name: str, bank: int) -> str:
    """UNPACR's wait reason for Src ``name``'s bank ``bank`` (formatted once)."""
    return f"UNPACR waiting for {name} bank {bank} to belong to the unpackers"


@dataclass(frozen=True)
class UnpackRegs:
    """What an UNPACR of one unpacker reads from Config and ThreadConfig, for one context
    (read once per configuration, see :meth:`Unpackers.regs`)."""

    in_fmt: int
    out_fmt: int
    uncompressed: bool
    no_bfp_exp_section: bool
    x_dim: int
    y_dim: int
    z_dim: int
    w_dim: int
    base: int
    offset: int
    force_shared_exp: bool
    shared_exp: int
    tileize: bool
    row_stride: int
    haloize: bool
    to_dst: bool
    dest_cntx: int
    add_dest_addr_cntr: bool
    ch1_strides: tuple[int, int, int]
    base1: int
    unsigned: bool
    e4m3: bool
    upsample: int
    col_shift: int
    src_reg_set_upd: bool
    set_ovrd_with_addr: bool
    set_base: int


def read_regs(config: Config, thread_config: ThreadConfig, t: int, which: int, multi: bool,
              context: int) -> UnpackRegs:
    """The :class:`UnpackRegs` of unpacker ``which`` for thread ``t`` in ``context``."""
    bank = thread_config.bank(t)
    sec = f"THCON_SEC{which}_"
    words = config.words[bank]
    w0 = int(words[_SECTION[which]])
    w1 = int(words[_SECTION[which] + 1])
    w2 = int(words[_SECTION[which] + 2])

    def c(name: str) -> int:
        return config.get(name, bank)

    in_fmt = w0 & 0xF
    out_fmt = c(f"{sec}REG2_Out_data_format")
    uncompressed = bool(w0 >> 4 & 1)
    x_dim = w0 >> 16
    if multi:
        uncompressed = bool(c(f"{sec}REG2_Disable_zero_compress_cntx{context}"))
        if which == 0:
            x_dim = c(f"{sec}REG5_Tile_x_dim_cntx{context & 3}")
        if c(f"{sec}REG2_Ovrd_data_format"):
            in_fmt = c(f"{sec}REG7_Unpack_data_format_cntx{context}")
            out_fmt = c(f"{sec}REG7_Unpack_out_data_format_cntx{context}")
    if multi and context:
        reg = 3 if context < 4 else 4
        base = c(f"{sec}REG{reg}_Base_cntx{context}_address")
        offset = c(f"{sec}REG7_Offset_cntx{context & 3}_address")
    else:
        base = c(f"{sec}REG3_Base_address")
        offset = c(f"{sec}REG7_Offset_address")
    if which == 0 and multi:
        to_dst = bool(c(f"{sec}REG2_Unpack_if_sel_cntx{context}"))
        dest_cntx = c(f"{sec}REG5_Dest_cntx{context & 3}_address")
    else:
        to_dst = bool(c(f"{sec}REG2_Unpack_If_Sel")) if which == 0 else False
        dest_cntx = 0
    unp = f"UNP{which}_"
    shifts = [c(f"{sec}REG2_Shift_amount_cntx{k}") for k in range(4)]
    side = "SrcB" if which else "SrcA"
    return UnpackRegs(
        in_fmt=in_fmt, out_fmt=out_fmt, uncompressed=uncompressed,
        no_bfp_exp_section=bool(w0 >> 5 & 1),
        x_dim=x_dim, y_dim=w1 & 0xFF, z_dim=(w1 >> 16 & 0xFF) or 1, w_dim=(w2 & 0xFF) or 1,
        base=base, offset=offset,
        force_shared_exp=bool(c(f"{sec}REG2_Force_shared_exp")),
        shared_exp=c(f"{unp}FORCED_SHARED_EXP_shared_exp"),
        tileize=bool(c(f"{sec}REG2_Tileize_mode")),
        row_stride=(shifts[0] << 4) | (shifts[1] << 8) | (shifts[2] << 12),
        haloize=bool(c(f"{sec}REG2_Haloize_mode")),
        to_dst=to_dst, dest_cntx=dest_cntx,
        add_dest_addr_cntr=bool(c(f"{unp}ADD_DEST_ADDR_CNTR_add_dest_addr_cntr")),
        ch1_strides=(c(f"{unp}ADDR_CTRL_XY_REG_1_Ystride"), c(f"{unp}ADDR_CTRL_ZW_REG_1_Zstride"),
                     c(f"{unp}ADDR_CTRL_ZW_REG_1_Wstride")),
        base1=c(f"{unp}ADDR_BASE_REG_1_Base"),
        unsigned=bool(c(f"ALU_FORMAT_SPEC_REG0_{side}Unsigned")),
        e4m3=bool(c(f"{sec}REG1_Unp_LF8_4b_exp")),
        upsample=c(f"{sec}REG2_Upsample_rate"),
        col_shift=0 if which or c(f"{sec}REG2_Tileize_mode") else shifts[context & 3],
        src_reg_set_upd=bool(c(f"{sec}REG2_Unpack_Src_Reg_Set_Upd")),
        set_ovrd_with_addr=bool(thread_config.get(t, "SRCA_SET_SetOvrdWithAddr")),
        set_base=thread_config.get(t, "SRCB_SET_Base" if which else "SRCA_SET_Base"),
    )


@dataclass(frozen=True)
class UnpackPlan:
    """What one UNPACR does, worked out once for its word, thread, :class:`UnpackRegs`,
    address counters and row cursor (made and used by :meth:`Unpackers.unpacr`): read L1
    bytes ``start..end`` as ``dtype`` datums, turn each into its Src cell by ``table`` (the
    datum's conversion, :func:`~.l1formats.unpack_to_src` then
    :func:`~.l1formats.src_cells`, for every value of its width), write them to rows
    ``row0..row0 + n`` of the unpacker's Src bank, set the counters to ``adc_after`` (the
    issuing thread's; ``adc_other_after``: the ``AddrCntContextId`` thread's when another).
    Only for what needs nothing else: no undefined behaviour, no exponents (BFP), not to
    Dst, whole rows from contiguous bytes, no ``ZeroWrite2``."""

    f: Fields
    regs: UnpackRegs
    start: int
    end: int
    dtype: str
    table: np.ndarray
    row0: int
    n: int
    adc_after: np.ndarray
    adc_other_after: np.ndarray | None


def _flat_rows(cells: np.ndarray, row0: int, n: int, dtype: np.dtype
               ) -> tuple[np.ndarray | None, ...]:
    """Rows ``row0..row0 + n`` of each bank of ``cells`` as a flat view that ``take(out=)``
    can fill (None for a bank where it cannot: not contiguous, another dtype)."""
    views: list[np.ndarray | None] = []
    for bank in range(len(cells)):
        rows = cells[bank, row0:row0 + n]
        views.append(rows.reshape(-1) if rows.flags.c_contiguous and rows.dtype == dtype
                     else None)
    return tuple(views)


_SPLITS: dict[int, tuple[np.ndarray, tuple[np.ndarray, np.ndarray] | None]] = {}


def _split_table(table: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """``(hi, lo)``, 256 entries each, with ``table[d] == hi[d >> 8] | lo[d & 0xFF]`` for
    every one of the 65,536 datums ``d`` (checked), or None when no such split exists (made
    once per table of :func:`_cells_by_datum`)."""
    hit = _SPLITS.get(id(table))
    if hit is not None and hit[0] is table:
        return hit[1]
    hi = table[np.arange(256) << 8]
    lo = table[:256]
    split: tuple[np.ndarray, np.ndarray] | None = (hi.copy(), lo.copy())
    if len(table) != 1 << 16 or table.dtype != np.uint32 \
            or not np.array_equal((hi[:, None] | lo[None, :]).reshape(-1), table):
        split = None
    _SPLITS[id(table)] = (table, split)
    return split


@functools.cache
def _cells_by_datum(bits: int, in_fmt: int, out_fmt: int, unsigned: bool, e4m3: bool
                    ) -> np.ndarray | None:
    """The Src cell of every ``bits``-wide datum of ``in_fmt`` unpacked as ``out_fmt``
    (the conversion UNPACR applies, made once per format pair); None when some datum does
    not convert."""
    datums = np.arange(1 << bits, dtype=I64)
    try:
        table = L.src_cells(L.unpack_to_src(datums, None, in_fmt, out_fmt, unsigned, e4m3))
    except L.UnpackError:
        return None
    table.flags.writeable = False
    return table


class Unpackers(Unit):
    """Unpacker 0 (SrcA, Dst) and unpacker 1 (SrcB): UNPACR."""

    #: UNPACRs from plans (:class:`UnpackPlan`; False: each worked out again; tests compare)
    plans = True
    #: a plan of 16-bit datums converts them in one compiled call with its table split by
    #: bytes (:func:`~.fpu_jit._k_cells16`) when the kernels are loaded (False: numpy's take
    #: with the whole table; tests compare)
    compiled = True

    def __init__(self, dst: Dst, srca: SrcRegs, srcb: SrcRegs, adc: ADCs, config: Config,
                 thread_config: ThreadConfig, memory: Callable[[], object],
                 report_ub: Report) -> None:
        self.dst = dst
        self.src = (srca, srcb)
        self.adc = adc
        self.config = config
        self.thread_config = thread_config
        self._report = report_ub
        self._ubs = 0  # undefined behaviour reported so far (a plan is made only without)
        #: (fields' id, thread, UnpackRegs' id, counters' bytes, row cursor) -> (UnpackPlan,
        #: [the L1 array, its datums' view, the Src cells array, each bank's rows as the flat
        #: view take() fills, or None; the table split by bytes (_split_table) or None])
        self._plans: dict[tuple[int, int, int, bytes, bytes, int],
                          tuple[UnpackPlan, list]] = {}
        #: (fields' id, thread) -> (fields, (Config, ThreadConfig) versions, unpacker,
        #: MultiContextMode, context, AddrCntContextId thread, UnpackRegs): what
        #: :meth:`_context` and :meth:`regs` gave for them under those versions (kept only
        #: when :meth:`_context` reported nothing)
        self._resolved: dict[tuple[int, int], tuple[Fields, tuple[int, int], int, bool, int,
                                                    int, UnpackRegs]] = {}
        #: UnpackRegs -> the one object with its values (regs() returns it)
        self._canonical: dict[UnpackRegs, UnpackRegs] = {}
        #: what _worked_out found a plan needs (see UnpackPlan), or None
        self._plan: tuple[int, int, str, np.ndarray, int, int] | None = None
        self._cache: dict[tuple[int, int, bool, int], tuple[tuple[int, int], UnpackRegs]] = {}
        self._by_content: dict[tuple[object, bytes, bytes], UnpackRegs] = {}
        #: regs()' key -> the last (ThreadConfig row's bytes, Config words' bytes, UnpackRegs)
        self._last: dict[tuple[int, int, bool, int], tuple[bytes, bytes, UnpackRegs]] = {}
        self._l1 = L1Source(memory)


    def report_ub(self, message: str) -> None:
        self._ubs += 1
        self._report(message)

    def handlers(self) -> Mapping[str, Execute]:
        return {"UNPACR": self.unpacr}

    def waits(self) -> Mapping[str, Wait]:
        return {"UNPACR": self.unpacr_wait}

    def wait_reads(self) -> Mapping[str, Changes]:
        # unpacr_wait reads its Src bank's owner and the unpacker's bank index only
        a, b = self.src
        return {"UNPACR": a.owners} if a.owners is b.owners else {}

    def regs(self, t: int, which: int, multi: bool, context: int) -> UnpackRegs:
        """The :class:`UnpackRegs`, read again only after a configuration write."""
        key = (t, which, multi, context)
        version = config_versions(self.config, self.thread_config)
        hit = self._cache.get(key)
        if hit is not None and hit[0] == version:
            return hit[1]
        # read_regs reads only the thread's ThreadConfig row and its bank's Config words: a
        # kernel rewriting its configuration tile after tile finds them by their bytes (first
        # those of the last call with this key, compared, not hashed)
        tc = self.thread_config
        # (through plain ndarray views: a WriteCountedArray's view costs a Python call)
        row_bytes = tc.regs.view(np.ndarray)[t].tobytes()
        words_bytes = self.config.words.view(np.ndarray)[tc.bank(t)].tobytes()
        last = self._last.get(key)
        if last is not None and last[0] == row_bytes and last[1] == words_bytes:
            self._cache[key] = (version, last[2])
            return last[2]
        content = (key, row_bytes, words_bytes)
        regs = self._by_content.get(content)
        if regs is None:
            regs = read_regs(self.config, tc, t, which, multi, context)
            # the same values are the same object (plans are found by its identity)
            regs = self._canonical.setdefault(regs, regs)
            if len(self._by_content) > 256:
                self._by_content.clear()
                self._canonical.clear()
            self._by_content[content] = regs
        self._last[key] = (row_bytes, words_bytes, regs)
        self._cache[key] = (version, regs)
        return regs

    def unpacr_wait(self, t: int, f: Fields) -> str | None:
        """UNPACR waits for its Src bank to belong to the unpackers."""
        src = self.src[f["Unpack_block_selection"]]
        bank = src.unpacker_bank
        if src.allowed_client[bank] == _UNPACKERS:
            return None
        # (a retry gets the same string: Coprocessor keeps its blocked object)
        return _unpacr_reason(src.name, bank)

    def _context(self, t: int, f: Fields, which: int) -> tuple[bool, int, int]:
        """(MultiContextMode, context, the thread whose X/Y counters are used)."""
        for name in ("RowSearch", "SearchCacheFlush", "AutoIncContextID", "CfgContextCntInc",
                     "srcb_bcast"):
            if f[name]:
                raise Refused(f"{name}={f[name]}")
        if not f["OvrdThreadId"]:
            return False, 0, t
        index, shift, mask = _CONTEXT_OFFSET[which]
        offset = self.thread_config.regs.item(t, index) >> shift & mask
        context = (f["CfgContextId"] + offset) & 7
        if which == 1 and context >= 2:
            self.report_ub(f"unpacker 1 context {context} (it has 2)")
            context &= 1
        adc_thread = f["AddrCntContextId"]
        if adc_thread == 3:
            self.report_ub("UNPACR AddrCntContextId 3")
            adc_thread = t
        return True, context, adc_thread

    def _resolve(self, t: int, f: Fields) -> tuple[int, bool, int, int, UnpackRegs]:
        """(unpacker, MultiContextMode, context, AddrCntContextId thread, UnpackRegs) of an
        UNPACR; from :attr:`_resolved` while the configuration's versions stay (with
        :attr:`plans`)."""
        version = config_versions(self.config, self.thread_config)
        hit = self._resolved.get((id(f), t)) if self.plans else None
        if hit is not None and hit[0] is f and hit[1] == version:
            return hit[2:]  # type: ignore[return-value]
        which = f["Unpack_block_selection"]
        ubs = self._ubs
        multi, context, adc_t = self._context(t, f, which)
        r = self.regs(t, which, multi, context)
        if self._ubs == ubs and self.plans:
            if len(self._resolved) > 256:
                self._resolved.clear()
            self._resolved[id(f), t] = (f, version, which, multi, context, adc_t, r)
        return which, multi, context, adc_t, r

    def unpacr(self, t: int, f: Fields) -> None:
        """UNPACR (see the module's documentation): from a plan when one was made for the
        same fields, thread, registers, counters and row cursor, else the long way
        (:meth:`_worked_out`, which leaves what makes a plan when it reported nothing)."""
        try:
            which, multi, _, adc_t, r = self._resolve(t, f)
            adc = self.adc.v
            src = self.src[which]
            unit = UNP0 + which
            key = (id(f), t, id(r), adc[t, unit].tobytes(),
                   adc[adc_t, unit].tobytes() if adc_t != t else b"", src.unpacker_row.item(t))
            entry = self._plans.get(key) if self.plans else None
            if entry is not None and entry[0].f is f and entry[0].regs is r:
                plan, hot = entry
                l1 = self._l1().l1
                if hot[0] is not l1:  # (the datums' view of this L1, made once)
                    hot[0], hot[1] = l1, l1[plan.start:plan.end].view(plan.dtype)
                cells = src.cells
                if hot[2] is not cells:  # (the rows of each bank as the flat array take fills)
                    hot[2], hot[3] = cells, _flat_rows(cells, plan.row0, plan.n, plan.table.dtype)
                out = hot[3][src.unpacker_bank]
                split = hot[4]
                if out is not None:
                    kernels = fpu_jit._LOADED.get("kernels") if split is not None \
                        and self.compiled and fpu.USE_JIT else None
                    if kernels:
                        kernels.cells16(l1, plan.start, split[0], split[1], out)
                    else:  # (every datum is in range)
                        plan.table.take(hot[1], out=out, mode="clip")
                else:
                    cells[src.unpacker_bank, plan.row0:plan.row0 + plan.n] = \
                        plan.table.take(hot[1]).reshape(-1, 16)
                adc[t, unit] = plan.adc_after
                if plan.adc_other_after is not None:
                    adc[adc_t, unit] = plan.adc_other_after
                if f["SetDatValid"]:  # (_finish_src)
                    src.implied_fmt[src.unpacker_bank] = r.out_fmt
                    src.give_to_matrix_unit(t, r.set_base)
                elif r.src_reg_set_upd:
                    src.unpacker_row[t] = (int(src.unpacker_row[t]) + 16 + (r.set_base << 4)) & 0x3F
                return
            self._long_way(t, f, which, r, multi, adc_t, key)
        except Refused as e:
            raise NotImplementedInstruction(f"thread {t}: not implemented: UNPACR: {e}"
                                            ) from None

    def _long_way(self, t: int, f: Fields, which: int, r: UnpackRegs, multi: bool,
                  adc_t: int, key: tuple[int, int, int, bytes, bytes, int]) -> None:
        """UNPACR by :meth:`_worked_out`; then, when it reported nothing and found a plan
        can do the same, its plan under ``key``."""
        ubs = self._ubs
        self._plan = None
        self._worked_out(t, f, which, r, multi, adc_t)
        plan = self._plan
        if plan is not None and self._ubs == ubs and self.plans:
            adc = self.adc.v
            made = UnpackPlan(f, r, *plan, adc[t, UNP0 + which].copy(),
                              adc[adc_t, UNP0 + which].copy() if adc_t != t else None)
            if len(self._plans) > 1024:
                self._plans.clear()
            split = _split_table(made.table) if made.dtype == "<u2" else None
            self._plans[key] = (made, [None, None, None, (None, None), split])

    def _worked_out(self, t: int, f: Fields, which: int, r: UnpackRegs, multi: bool,
                    adc_t: int) -> None:
        """UNPACR from its registers; leaves in ``_plan`` what makes an :class:`UnpackPlan`
        (without its counters) when one can do the same."""
        self._check(r, which)
        l1 = self._l1().l1
        in_bits = L.datum_bits(r.in_fmt)
        out_bits = L.datum_bits(r.out_fmt)
        bfp = r.in_fmt in L.BFP_FORMATS

        # input address
        addr = (((r.base + (r.offset & 0xFFFF) + 1) & 0xFFFFFFF) << 4)
        exp_addr = addr
        if bfp and not r.force_shared_exp:
            if r.in_fmt in (2, 6) or not r.no_bfp_exp_section:
                n = r.x_dim * r.y_dim * r.z_dim * r.w_dim
                addr += ((n + 15) // 16 + 15) // 16 * 16
        xy = self.adc.v[adc_t, UNP0 + which, 0]
        zw = self.adc.v[t, UNP0 + which, 0]
        x_pos, y_pos = int(xy[X, 0]), int(xy[Y, 0])
        x_end = int(self.adc.v[adc_t, UNP0 + which, 1, X, 0]) + 1
        first = ((int(zw[W, 0]) * r.z_dim + int(zw[Z, 0])) * r.y_dim + y_pos) * r.x_dim + x_pos
        count = x_end - x_pos
        if count <= 0:
            raise Refused(f"unpacker ADC channel 0 X {x_pos} beyond channel 1 X {x_end - 1}")
        if r.tileize:
            width = 16 if in_bits <= 8 else 32
            stride = r.row_stride
        else:
            width, stride = 16, 2 * in_bits
        start = addr * 8 + first * in_bits
        if (r.tileize or r.haloize) and start % 128:
            self.report_ub("tileize/transpose input not at a 16-byte boundary")
        last = start + in_bits * (min(count, width) - 1) + 8 * stride * ((count - 1) // width)
        if last + in_bits > len(l1) * 8 or start < 0:
            self.report_ub(f"UNPACR reads beyond L1 ({start // 8:#x}..{last // 8:#x})")
            return
        bits = L.read_datums(l1, start, count, in_bits, width, stride)
        exps = None
        if bfp:
            if r.force_shared_exp:
                exps = np.full(count, r.shared_exp, dtype=I64)
            else:
                e_index = (exp_addr * 16 + first + np.arange(count)) >> 4
                if int(e_index[-1]) >= len(l1):
                    self.report_ub("UNPACR reads exponents beyond L1")
                    return
                exps = l1[e_index].astype(I64)

        # output address (in datums)
        out_bytes = (out_bits + 7) // 8 if out_bits >= 8 else 1
        ch1 = self.adc.v[t, UNP0 + which, 1]
        ys, zs, ws = r.ch1_strides
        out = r.base1 + int(ch1[Y, 0]) * ys + int(ch1[Z, 0]) * zs + int(ch1[W, 0]) * ws
        if out % out_bytes:
            self.report_ub(f"unpacker output address {out} is not aligned to {out_bytes} bytes")
        out //= out_bytes
        if multi and which == 0:
            out = out + r.dest_cntx if (r.to_dst or r.add_dest_addr_cntr) else r.dest_cntx

        try:
            if r.to_dst:
                values, is32 = L.unpack_to_dst(bits, exps, r.in_fmt, r.out_fmt, r.unsigned,
                                               r.e4m3)
            else:
                values = L.unpack_to_src(bits, exps, r.in_fmt, r.out_fmt, r.unsigned, r.e4m3)
        except L.UnpackError as e:
            if e.undefined:
                self.report_ub(e.message)
            raise Refused(e.message) from None
        if f["ZeroWrite2"]:
            values = np.zeros_like(values)
        if r.to_dst:
            self._to_dst(t, values, out + np.arange(count), is32, r)
        else:
            row0 = self._to_src(t, which, values, out, r)
            if row0 >= 0 and not bfp and not f["ZeroWrite2"] and in_bits in (8, 16) \
                    and start % 8 == 0 and 8 * stride == in_bits * width:
                table = _cells_by_datum(in_bits, r.in_fmt, r.out_fmt, r.unsigned, r.e4m3)
                if table is not None:
                    self._plan = (start // 8, start // 8 + count * in_bits // 8,
                                  "u1" if in_bits == 8 else "<u2", table, row0, count // 16)
        self._finish(t, adc_t, which, f, r)

    def _check(self, r: UnpackRegs, which: int) -> None:
        if not r.uncompressed:
            raise Refused("compressed data (decompression)")
        if r.upsample:
            raise Refused("unpacker upsampling")
        if r.col_shift:
            raise Refused("unpacker column shift (Shift_amount outside tileize mode)")
        if r.tileize and L.datum_bits(r.in_fmt) < 8:
            self.report_ub("tileize mode with a datum narrower than 8 bits")
        if r.tileize and which == 1:
            raise Refused("tileize mode on unpacker 1")
        if r.to_dst and r.haloize:
            self.report_ub("unpack to Dst with transpose (Haloize_mode)")
        if which == 1 and r.haloize:
            self.report_ub("transpose (Haloize_mode) on unpacker 1")

    def _to_src(self, t: int, which: int, logical: np.ndarray, first: int,
                r: UnpackRegs) -> int:
        """Write the logical values to the unpacker's Src bank from output datum ``first``
        on; returns the first row when they were whole rows written as one slice (else
        -1)."""
        src = self.src[which]
        bank = src.unpacker_bank
        count = len(logical)
        cursor = int(src.unpacker_row[t])
        if first % 16 == 0 and count % 16 == 0 and not r.haloize:
            # whole rows: one slice (what a tile's unpack is)
            row0 = first // 16
            if which == 1:
                row0 += cursor
            elif row0 >= 4:
                row0 -= 4
                if not r.set_ovrd_with_addr:
                    row0 = row0 + cursor if row0 + count // 16 <= 16 else -1
            else:
                row0 = -1
            if 0 <= row0 and row0 + count // 16 <= 64:
                src.cells[bank, row0:row0 + count // 16] = \
                    L.src_cells(logical).reshape(-1, 16)
                return row0
        pos = first + np.arange(count)
        row, col = pos // 16, pos % 16
        if which == 1:
            if (row >= 64).any():
                self.report_ub(f"SrcB row {int(row.max())} (the bank has 64)")
            row = (row + int(src.unpacker_row[t])) & 0x3F
        else:
            keep = row >= 4
            if not keep.all():
                logical, row, col = logical[keep], row[keep], col[keep]
            row = row - 4
            if r.set_ovrd_with_addr:
                row = row & 0x3F
            else:
                if (row >= 16).any():
                    self.report_ub("SrcA row beyond 16 rows of the row cursor "
                                   "(SRCA_SET_SetOvrdWithAddr clear)")
                row = (row + int(src.unpacker_row[t])) & 0x3F
            if r.haloize:
                row, col = (row & ~15) | col, row & 15
        src.cells[bank, row, col] = L.src_cells(logical)
        return -1

    def _to_dst(self, t: int, values: np.ndarray, pos: np.ndarray, is32: bool,
                r: UnpackRegs) -> None:
        row = pos // 16 - 4
        col = pos % 16
        if r.set_ovrd_with_addr:
            self.report_ub("unpack to Dst with SRCA_SET_SetOvrdWithAddr set")
            row = row & 15
        else:
            row = row & 0x3FF
        dst = self.dst
        config = self.config
        bank = self.thread_config.bank(t)
        dst.remap_addrs = bool(config.get("DEST_ACCESS_CFG_remap_addrs", bank))
        dst.swizzle_32b = bool(config.get("DEST_ACCESS_CFG_swizzle_32b", bank))
        phys = dst.phys_table(is32)[row & 0x3FF]
        v = values.astype(I64)
        if is32:
            dst.bits[phys, col] = (v >> 16) & 0xFFFF
            dst.bits[phys + 8, col] = v & 0xFFFF
        else:
            dst.bits[phys, col] = v & 0xFFFF
        dst.valid[phys] = True

    def _finish(self, t: int, adc_t: int, which: int, f: Fields, r: UnpackRegs) -> None:
        mode = f["AddrMode"]
        incs = ((0, Z, mode & 3), (0, Y, mode >> 2 & 3), (1, Z, mode >> 4 & 3),
                (1, Y, mode >> 6 & 3))
        adc = self.adc
        for thread in {t, adc_t}:
            for ch, dim, inc in incs:
                adc.set(thread, UNP0 + which, ch, dim,
                        adc.get(thread, UNP0 + which, ch, dim) + inc, cr=False)
        self._finish_src(t, which, f, r)

    def _finish_src(self, t: int, which: int, f: Fields, r: UnpackRegs) -> None:
        """``SetDatValid``: hand the bank over; else ``Unpack_Src_Reg_Set_Upd`` moves the
        row cursor."""
        src = self.src[which]
        if f["SetDatValid"]:
            src.implied_fmt[src.unpacker_bank] = r.out_fmt
            src.give_to_matrix_unit(t, r.set_base)
        elif r.src_reg_set_upd:
            src.unpacker_row[t] = (int(src.unpacker_row[t]) + 16 + (r.set_base << 4)) & 0x3F


_UNPACKERS = SrcClient.UNPACKERS

__all__ = ["UnpackPlan", "UnpackRegs", "Unpackers", "read_regs"]
