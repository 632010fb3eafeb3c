"""The Vector Unit (SFPU): the LReg file and every Blackhole SFP instruction, 32 lanes at once.

Where things are:

==================  ==========================================================================
module              what
==================  ==========================================================================
:mod:`.lregs`       LReg[0..16] (constants, reset values), lane predication state, flag
                    stack, PRNG, LoadMacroConfig
:mod:`.ops`         instruction words as operand records; the sub-units
:mod:`.fma`         SFPMAD's bit-exact multiply-add (the model the oracle vectors come from)
:mod:`.fma_jit`     its compiled twin (numba), loaded after 300 multiply-adds (at once when
                    numba is imported already); add1's load-add-store loop in one call
:mod:`.base`        the state every part shares, lane-level write rules
:mod:`.convert`     data conversions: SFPLOAD/SFPSTORE modes, SFPLOADI, SFPCAST,
                    SFPSTOCHRND, LUT entries, SFPARECIP's approximations
:mod:`.movement`    SFPLOAD, SFPSTORE, SFPLOADI, SFPMOV, SFPSWAP, SFPTRANSP, SFPSHFT2,
                    SFPCONFIG, SFPNOP
:mod:`.arithmetic`  the MAD family, SFPLUT(FP32), SFPARECIP, integer, bitwise, FP32-field and
                    conversion instructions
:mod:`.conditions`  SFPSETCC, SFPENCC, SFPPUSHC, SFPPOPC, SFPCOMPC, SFPLE, SFPGT
:mod:`.macros`      SFPLOADMACRO's scheduler (from the ISA documentation: ttsim lacks it)
:mod:`.unit`        :class:`Sfpu`: issue, cycles, the back-door template load
:mod:`.block`       loops of SFP instructions run as one pass over their iterations, and the
                    short way of a single SFPLOAD/SFPSTORE/MAD when every lane is enabled
==================  ==========================================================================

Sources: the ISA documentation's Blackhole pages (tt-isa-documentation, ``BlackholeA0/
TensixTile/TensixCoprocessor/SFP*.md``, ``VectorUnit.md``, ``LReg.md``) for every
functional model; where the official simulator (tenstorrent/ttsim), whose outputs are the
oracle (``refdata/tensix/sfpu-ttsim``, ``refdata/tensix/oracle/sfpu``), differs, the oracle
is followed and the test says so.
"""

from __future__ import annotations

from .convert import (
    BF16,
    FP16,
    FP32,
    HI16,
    HI16_ONLY,
    INT8,
    INT8_COMP,
    INT16,
    INT32,
    INT32_ALL,
    INT32_SM,
    LO16,
    LO16_ONLY,
    SRCB,
    UINT16,
    ZERO,
    load_convert,
    store_convert,
)
from .lregs import LANES, N_LREGS, N_WRITABLE
from .movement import lane_rows_cols
from .unit import Sfpu

__all__ = ["BF16", "FP16", "FP32", "HI16", "HI16_ONLY", "INT8", "INT8_COMP", "INT16", "INT32",
           "INT32_ALL", "INT32_SM", "LANES", "LO16", "LO16_ONLY", "N_LREGS", "N_WRITABLE",
           "SRCB", "UINT16", "ZERO", "Sfpu", "lane_rows_cols", "load_convert", "store_convert"]
