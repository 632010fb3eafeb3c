"""The Tensix coprocessor engine: the scheduler, its state, one module per unit.

Where each instruction is executed (the unit's class, constructed with the state it uses)::

    coprocessor.py  Coprocessor: threads, scheduler, Wait Gate, hooks, the dispatch table
    dispatch.py     the opcode -> unit table and the Unit interface
    frontend.py     Thread (stream, MOP and replay expansion), NOP     FrontendUnit
    mop.py          MOP, MOP_CFG expansion (templates 0 and 1)
    replay.py       REPLAY load / execute
    sync.py         SEMINIT SEMPOST SEMGET SEMWAIT STALLWAIT ATGETM ATRELM    SyncUnit
    config.py       SETC16 WRCFG RDCFG RMWCIB0..3                             ConfigUnit
    adc.py          SETADC* INCADC* ADDRCR*                                   AdcUnit
    scalar.py       SETDMAREG ADDDMAREG ... CMPDMAREG FLUSHDMA DMANOP          ScalarUnit
    scalar_mem.py   LOADIND STOREIND LOADREG STOREREG ATINCGET ATINCGETPTR     ScalarMemoryUnit
                    ATSWAP ATCAS (against the coprocessor's memory, a tile's L1 and MMIO)
    matrix.py       MVMUL ELWADD ELWSUB ELWMUL GMPOOL GAPOOL MOV* ZEROACC      MatrixUnit
                    ZEROSRC TRNSPSRCB SETDVALID CLEARDVALID UNPACR_NOP SETRWC INCRWC
    sfpu/           every SFP instruction (SFPLOAD ... SFPLOADMACRO)            Sfpu
    unpack.py       UNPACR                                                    Unpackers
    pack.py         PACR                                                      Packer
    rwc.py          the RWC arithmetic (SETRWC, INCRWC, ApplyAddrMod)
    fpu.py          the Matrix Unit's arithmetic, bit for bit (numpy reference)
    fpu_jit.py      its compiled (numba) twins
    regfiles.py     Dst, SrcA, SrcB
    formats.py      the numeric formats of the register files
    l1.py           the coprocessor's L1 (L1Access, the standalone L1Memory)
    l1formats.py    the L1 formats, the unpackers' and packer's conversions (numpy)
    l1formats_jit.py  the packer's compiled path
    state.py        RWCs, ThreadConfig, Config, ADCs, GPRs, semaphores, UB policy, errors

A new unit is a module with a :class:`~.dispatch.Unit` subclass that :class:`Coprocessor`
constructs and adds to its table.
"""

from .coprocessor import HOOK_KINDS, Coprocessor, Executed, RunResult, Units
from .state import (
    DeadlockError,
    NotImplementedInstruction,
    RegWrite,
    StepLimitError,
    UBEvent,
    UndefinedBehaviourError,
)

__all__ = [
    "HOOK_KINDS",
    "Coprocessor",
    "DeadlockError",
    "Executed",
    "NotImplementedInstruction",
    "RegWrite",
    "RunResult",
    "StepLimitError",
    "UBEvent",
    "UndefinedBehaviourError",
    "Units",
]
