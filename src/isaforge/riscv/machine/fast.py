"""The compiled path: a numba interpreter over pre-decoded instructions, RAM as numpy arrays.

How it works: each RAM array has a decode cache (:func:`.memory.decode_cache`): per word, the
word it decoded and a packed record ``op | rd << 8 | rs1 << 13 | rs2 << 18 | imm << 32``
made by :func:`pack` from the one ISA description (no second decoder). The kernel fetches
from RAM, checks the cached word against memory (code written at run time is decoded again),
and executes the arithmetic, branches, loads, stores and AMOs whose addresses fall in the
hart's RAM windows (up to :data:`MAX_RAMS` of them). It returns to Python when:

* ``LIMIT``: the step budget is used up;
* ``DECODE``: the word at pc has no (current) decode record: :func:`predecode` makes records
  for it and the words after it;
* ``MMIO``: an aligned load or store outside the RAM windows (MMIO, or unmapped) that is no
  latch store (below): the kernel leaves its address, size, kind, register and value in the
  hart's ``io`` record (:data:`IO_ADDR` ...) and the hart makes the access as
  :meth:`.Hart.step` would, without decoding the instruction again;
* ``SLOW``: the instruction needs the exact path (:meth:`.Hart.step`): an AMO outside the
  RAM windows, anything misaligned, CSRs, ``.ttinsn`` (unless the hart
  batches them, see :func:`run`), ``lr``/``sc``,
  ``ecall``/``ebreak``/``wfi``/``mret``, undecodable words.

Latches (:meth:`.AddressSpace.map_latches`): an aligned ``sw`` to a store latch is made by
the kernel into the latch array and counted in ``io[IO_LATCHED]`` (:attr:`.Hart.latched`);
the window's owner has said that is all its ``write`` would do. An aligned ``lw`` from a load
latch, for a hart with ``on_loads``, is read from the array and logged (pc, address, value,
the stores the kernel made so far -- latch stores, and the words it kept in this run, each
a store to the owner --, the registers before it: :data:`LOG_WIDTH` int64 per load, up to
:data:`LOG_ROWS`, and at most ``io[IO_ROOM]``, which it counts down); the log is handed to
``hart.on_loads`` when the kernel returns, before the kept words and anything else. The
kernel keeps ``hart.load_records`` as it logs; a load the records say may be a loop's (see
:attr:`.Hart.load_records`) leaves as ``MMIO`` instead. For a hart with ``on_store``, an
aligned ``sw`` to a note latch is made into the array (counted as a latch store) and logged,
and one to a deferred range is only logged (up to :data:`STORE_ROWS`; a full log leaves as
``MMIO``): when the kernel returns, each logged store goes to ``hart.on_store`` in program
order with the kept ``.ttinsn`` words (a word kept before a store is handed over before it).
A fresh load latch is a load latch while no deferred store of the run waits.

Semantics are those of :mod:`.semantics`; ``tests/riscv/test_fast.py`` runs random programs
through both paths and compares registers and memory. numba is imported, and the kernel
compiled (or loaded from numba's cache), on first use.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..isa import rv32_isa
from .memory import LATCH_FRESH, LATCH_LOAD, LATCH_NOTE, LATCH_STORE
from .semantics import amo_base

LIMIT, DECODE, SLOW, MMIO = 0, 1, 2, 3
#: the hart's io record (int64): latch stores made so far, then the MMIO access of an exit:
#: address, size, kind (IO_STORE, IO_LOAD, IO_LOAD_SIGNED, IO_LOAD_LATCHED: a load latch's
#: word, which is in IO_VALUE), destination register, store value
IO_LATCHED, IO_ADDR, IO_SIZE, IO_KIND, IO_RD, IO_VALUE = range(6)
IO_STORE, IO_LOAD, IO_LOAD_SIGNED, IO_LOAD_LATCHED = 0, 1, 2, 3
IO_LOGGED = 6  # rows of the load log filled
IO_WRITES = 7  # the owner's count of writes (the kernel reads it)
IO_ROOM = 8  # loads the kernel may still log (it counts them down; the owner sets it)
IO_STORED = 9  # rows of the store log filled (noted and deferred stores)
IO_DEFERRED = 10  # deferred stores in the store log (not yet made)
#: rows of the load log and of the store log the kernel may fill, words of the push buffer
#: (count included): 0 (or 1) when the hart has no ``on_loads``, ``on_store``, batching
IO_LOG_CAP, IO_SLOG_CAP, IO_PUSH_CAP = 11, 12, 13
IO_WORDS = 16
#: the load log: rows of (pc, address, value, stores made so far, x0..x31)
LOG_ROWS, LOG_WIDTH = 64, 36
#: the store log: rows of (address, value, .ttinsn words kept before it, LATCH_NOTE or
#: LATCH_DEFER)
STORE_ROWS = 64
#: ``.ttinsn`` words the kernel keeps per run for a hart with ``batch_custom``
PUSH_BUFFER = 1024
MAX_RAMS = 4
PREDECODE_WORDS = 64  # words decoded per DECODE exit
#: rows and columns of :attr:`.Hart.load_records`; the column where the kernel leaves
#: ``io[IO_ROOM]`` after a load it logged
RECORD_ROWS = 65
RECORD_COLS = 65
RECORD_ROOM = 35

# a hart's control buffer (int64; one kernel argument instead of six arrays, which matters
# for the cost of a call with cold caches): io, the load records, the load log, the store
# log, the push buffer, the RAM windows' bounds
_RECS = IO_WORDS
_LOG = _RECS + RECORD_ROWS * RECORD_COLS
_SLOG = _LOG + LOG_ROWS * LOG_WIDTH
_PUSH = _SLOG + STORE_ROWS * 4
_REGIONS = _PUSH + PUSH_BUFFER + 1
CONTROL_WORDS = _REGIONS + 2 * MAX_RAMS

# op ids (1..); SLOW_OP sends the instruction to the exact path
_MEMORY_OPS = [
    "lw", "sw", "lbu", "sb", "lhu", "sh", "lb", "lh", "amoswap.w", "amoadd.w", "amoxor.w",
    "amoand.w", "amoor.w", "amomin.w", "amomax.w", "amominu.w", "amomaxu.w",
]  # fmt: skip
_OTHER_OPS = [
    "addi", "add", "bne", "beq", "lui", "jal", "andi", "slli", "srli", "sub", "and", "or",
    "bltu", "bgeu", "blt", "bge", "jalr", "xor", "sll", "srl", "sra", "srai", "ori", "xori",
    "slti", "sltiu", "slt", "sltu", "auipc", "fence", "mul", "mulh", "mulhsu", "mulhu", "div",
    "divu", "rem", "remu", "sh1add", "sh2add", "sh3add", "andn", "orn", "xnor", "min", "minu",
    "max", "maxu", "rol", "ror", "rori", "clz", "ctz", "cpop", "sext.b", "sext.h", "orc.b",
    "rev8", "pack", "brev8", "ttinsn",
]  # fmt: skip
# memory operations first, so that one comparison tells them from the rest
OP: dict[str, int] = {name: i + 1 for i, name in enumerate(_MEMORY_OPS + _OTHER_OPS)}
OP["fence.tso"] = OP["fence"]
for _i in range(3):
    OP[f"ttinsn.{_i}"] = OP["ttinsn"]
SLOW_OP = 255

_state: dict[str, Any] = {}


def available() -> bool:
    """Whether numba is there (else every run takes the exact path)."""
    if "ok" not in _state:
        try:
            import numba  # noqa: F401

            _state["ok"] = True
        except ImportError:  # pragma: no cover - numba is a dependency
            _state["ok"] = False
    return bool(_state["ok"])


def pack(word: int) -> int:
    """The decode record of ``word`` (int64 value)."""
    rec = _packed.get(word)
    if rec is None:
        rec = _pack(word)
        if len(_packed) < 1 << 16:
            _packed[word] = rec
    return rec


_packed: dict[int, int] = {}  # pack's records by word, process-wide (a function of the word)


def _pack(word: int) -> int:
    ins = rv32_isa().match(word)
    if ins is None:
        return SLOW_OP
    op = OP.get(ins.name) or OP.get(amo_base(ins.name)) or SLOW_OP
    if op == SLOW_OP:
        return SLOW_OP
    v = ins.field_values(word)
    if "TARGET" in v:
        f = ins.fields["TARGET"]
        imm = v["TARGET"] - ((v["TARGET"] >> (f.width - 1)) << f.width)
    elif "SHAMT" in v:
        imm = v["SHAMT"]
    elif ins.name in ("lui", "auipc"):
        imm = ((v["IMM"] << 12) ^ 0x80000000) - 0x80000000
    elif "VALUE" in v:  # .ttinsn: the Tensix word
        imm = v["VALUE"]
    elif "IMM" in v:
        imm = (v["IMM"] ^ 0x800) - 0x800
    else:
        imm = 0
    rec = op | v.get("RD", 0) << 8 | v.get("RS1", 0) << 13 | v.get("RS2", 0) << 18
    rec |= (imm & 0xFFFFFFFF) << 32
    return rec - (1 << 64) if rec >> 63 else rec


def predecode(hart: Any, count: int = PREDECODE_WORDS) -> None:
    """Decode records for the word at ``hart.pc`` and up to ``count - 1`` after it."""
    r = hart.space.ram_at(hart.pc, 4)
    if r is None:
        return
    words = r.array.view(np.uint32)
    first = (hart.pc - r.base) >> 2
    end = min(first + count, words.size)
    ws = words[first:end]
    at = np.flatnonzero(r.dec[2 * first:2 * end:2] != ws)  # the words decoded for none
    if at.size:
        new = ws[at].tolist()
        at = 2 * (at + first)
        r.dec[at + 1] = [pack(w) for w in new]
        r.dec[at] = new


def control_buffer() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A hart's control buffer (see :data:`CONTROL_WORDS`), its ``io`` record and its load
    records (views of it)."""
    ctl = np.zeros(CONTROL_WORDS, np.int64)
    recs = ctl[_RECS:_LOG].reshape(RECORD_ROWS, RECORD_COLS)
    return ctl, ctl[:IO_WORDS], recs


def run(hart: Any, max_steps: int) -> tuple[int, int]:
    """Run the kernel on a :class:`.hart.Hart`; (status, instructions retired). Updates
    pc, x and instret.

    With ``hart.batch_custom`` the kernel keeps the words of ``.ttinsn`` instructions (up to
    :data:`PUSH_BUFFER` of them) instead of leaving for the exact path, and they are handed
    to ``hart.on_custom`` (or all at once to ``hart.on_custom_many``) in order when it
    returns, before anything else can look: the kernel runs no MMIO access but latch
    accesses, which its owner says see no pushes, so nothing between two of them could have
    seen the difference (the owner of ``on_custom`` asks for this only when that holds). A ``sw``
    to ``hart.custom_store`` (an address outside RAM) is kept the same way: its owner says
    such a store is a ``.ttinsn`` of the stored word."""
    # (hart._fast_call, not hart.__dict__: a materialized instance dictionary makes every
    # attribute read of the hart slower)
    call = hart._fast_call
    key = (hart.space.version, hart.batch_custom and hart.on_custom is not None,
           hart.custom_store, hart.on_loads is not None, hart.on_store is not None)
    if call is None or call[0] != key or call[2] is not hart.x:
        call = hart._fast_call = _prepare(hart, key, max_steps)
    status, n, pc, logged, kept, stored = call[3](hart.x, hart.pc, max_steps, *call[1])
    hart.pc = pc
    hart.instret += n
    if logged or kept or stored:  # loads logged, .ttinsn words kept, stores logged
        _hand_over(hart, call[4], logged, kept, stored)
    return status, n


def _prepare(hart: Any, key: tuple, max_steps: int) -> tuple:
    """The hart's kernel call: (key, arguments after x/pc/limit, x, compiled code, the views
    of the push buffer, load log and store log)."""
    batch = key[1]
    ctl = hart._control
    io = ctl[:IO_WORDS]
    io[IO_PUSH_CAP] = PUSH_BUFFER + 1 if batch else 1
    io[IO_LOG_CAP] = LOG_ROWS if key[3] else 0
    io[IO_SLOG_CAP] = STORE_ROWS if key[4] else 0
    pushes = ctl[_PUSH:_PUSH + int(io[IO_PUSH_CAP])]
    hart._push_buffer = pushes
    store = hart.custom_store if batch and hart.custom_store is not None else -1
    log = ctl[_LOG:_SLOG].reshape(LOG_ROWS, LOG_WIDTH)
    slog = ctl[_SLOG:_PUSH].reshape(STORE_ROWS, 4)
    regions, *rest = _kernel_args(hart.space)
    ctl[_REGIONS:CONTROL_WORDS] = regions.reshape(-1)
    args = (ctl, store, *rest)
    return key, args, hart.x, _entry((hart.x, hart.pc, max_steps, *args)), (pushes, log, slog)


def _hand_over(hart: Any, logs: tuple, logged: int, count: int, stored: int) -> None:
    """The run's ``logged`` loads to ``on_loads``, then its ``count`` kept words to
    ``on_custom`` and its ``stored`` logged stores to ``on_store``, in program order (the
    kernel has emptied the log and the buffers, whose rows stay until it runs again)."""
    pushes, log, slog = logs
    if logged:
        hart.on_loads(hart, log[:logged])
    if not stored:
        if count:
            _give(hart, pushes[1:count + 1].tolist())
        return
    stores = slog[:stored].tolist()
    words = pushes[1:count + 1].tolist() if count else []
    done = 0
    on_store = hart.on_store
    for addr, value, kept, kind in stores:
        if kept > done:
            _give(hart, words[done:kept])
            done = kept
        on_store(hart, addr, value, kind)
    if count > done:
        _give(hart, words[done:])


def _give(hart: Any, words: list[int]) -> None:
    """Kept ``.ttinsn`` words to ``on_custom_many`` (or one by one to ``on_custom``)."""
    many = hart.on_custom_many
    if many is not None:
        many(hart, words)
    else:
        custom = hart.on_custom
        for word in words:
            custom(hart, word)


def _entry(args: tuple) -> Any:
    """The kernel's compiled code for arguments of the types of ``args``, called without
    numba's dispatch (which looks at the types of all of them at every call)."""
    from numba.core.typing.typeof import Purpose, typeof

    kernel = _state.get("kernel") or _load()
    sig = tuple(typeof(a, Purpose.argument) for a in args)
    if sig not in kernel.overloads:
        kernel.compile(sig)
    got = kernel.overloads.get(sig)
    return got.entry_point if got is not None else kernel


def _kernel_args(space: Any) -> tuple[np.ndarray, ...]:
    """The windows as the kernel takes them: regions, MAX_RAMS arrays, their caches, the
    latch table and words."""
    rams = space.rams[:MAX_RAMS]
    regions = np.full((MAX_RAMS, 2), -1, np.int64)
    arrays = [_EMPTY_U8] * MAX_RAMS
    decs = [_EMPTY_DEC] * MAX_RAMS
    for i, r in enumerate(rams):
        regions[i] = (r.base, r.end)
        arrays[i] = r.array
        decs[i] = r.dec
    lat = space.latches
    if lat is None:
        return (regions, *arrays, *decs, _NO_LATCHES, _EMPTY_U32)
    return (regions, *arrays, *decs, lat.table, lat.words)


_EMPTY_U8 = np.zeros(4, np.uint8)
_HELPERS = ("_signed", "_ror", "_div", "_rem", "_bytewise", "_clz", "_cpop", "_region",
            "_load_latch", "_store_latch", "_record")
_EMPTY_DEC = np.full(2, -1, np.int64)
_NO_LATCHES = np.zeros((0, 4), np.int64)
_EMPTY_U32 = np.zeros(1, np.uint32)


def _load() -> Any:
    import numba

    g = globals()
    for name in _HELPERS:  # callees first: the kernel calls these
        g[name] = numba.njit(cache=True, inline="always")(g[name])
    _state["kernel"] = numba.njit(cache=True, nogil=True)(_kernel)
    return _state["kernel"]


# --------------------------------------------------------------------------------------------
# The kernel (plain Python until _load compiles it)
# --------------------------------------------------------------------------------------------

M = 0xFFFFFFFF
# op ids as names the kernel reads (numba takes module globals as constants)
_LW = OP["lw"]
_SW = OP["sw"]
_LBU = OP["lbu"]
_SB = OP["sb"]
_LHU = OP["lhu"]
_SH = OP["sh"]
_LB = OP["lb"]
_LH = OP["lh"]
_AMOSWAP = OP["amoswap.w"]
_AMOADD = OP["amoadd.w"]
_AMOXOR = OP["amoxor.w"]
_AMOAND = OP["amoand.w"]
_AMOOR = OP["amoor.w"]
_AMOMIN = OP["amomin.w"]
_AMOMAX = OP["amomax.w"]
_AMOMINU = OP["amominu.w"]
_AMOMAXU = OP["amomaxu.w"]
_ADDI = OP["addi"]
_ADD = OP["add"]
_BNE = OP["bne"]
_BEQ = OP["beq"]
_LUI = OP["lui"]
_JAL = OP["jal"]
_ANDI = OP["andi"]
_SLLI = OP["slli"]
_SRLI = OP["srli"]
_SUB = OP["sub"]
_AND = OP["and"]
_OR = OP["or"]
_BLTU = OP["bltu"]
_BGEU = OP["bgeu"]
_BLT = OP["blt"]
_BGE = OP["bge"]
_JALR = OP["jalr"]
_XOR = OP["xor"]
_SLL = OP["sll"]
_SRL = OP["srl"]
_SRA = OP["sra"]
_SRAI = OP["srai"]
_ORI = OP["ori"]
_XORI = OP["xori"]
_SLTI = OP["slti"]
_SLTIU = OP["sltiu"]
_SLT = OP["slt"]
_SLTU = OP["sltu"]
_AUIPC = OP["auipc"]
_FENCE = OP["fence"]
_MUL = OP["mul"]
_MULH = OP["mulh"]
_MULHSU = OP["mulhsu"]
_MULHU = OP["mulhu"]
_DIV = OP["div"]
_DIVU = OP["divu"]
_REM = OP["rem"]
_REMU = OP["remu"]
_SH1ADD = OP["sh1add"]
_SH2ADD = OP["sh2add"]
_SH3ADD = OP["sh3add"]
_ANDN = OP["andn"]
_ORN = OP["orn"]
_XNOR = OP["xnor"]
_MIN = OP["min"]
_MINU = OP["minu"]
_MAX = OP["max"]
_MAXU = OP["maxu"]
_ROL = OP["rol"]
_ROR = OP["ror"]
_RORI = OP["rori"]
_CLZ = OP["clz"]
_CTZ = OP["ctz"]
_CPOP = OP["cpop"]
_SEXTB = OP["sext.b"]
_SEXTH = OP["sext.h"]
_ORCB = OP["orc.b"]
_REV8 = OP["rev8"]
_PACK = OP["pack"]
_BREV8 = OP["brev8"]
_TTINSN = OP["ttinsn"]
_LAST_MEMORY = OP["amomaxu.w"]


def _clz(v: int) -> int:
    if v == 0:
        return 32
    n = 0
    if v & 0xFFFF0000 == 0:
        n += 16
        v <<= 16
    if v & 0xFF000000 == 0:
        n += 8
        v <<= 8
    if v & 0xF0000000 == 0:
        n += 4
        v <<= 4
    if v & 0xC0000000 == 0:
        n += 2
        v <<= 2
    if v & 0x80000000 == 0:
        n += 1
    return n


def _cpop(v: int) -> int:
    v = v - ((v >> 1) & 0x55555555)
    v = (v & 0x33333333) + ((v >> 2) & 0x33333333)
    v = (v + (v >> 4)) & 0x0F0F0F0F
    return ((v * 0x01010101) & 0xFFFFFFFF) >> 24


def _signed(v: int) -> int:
    return v - ((v & 0x80000000) << 1)


def _ror(a: int, s: int) -> int:
    return ((a >> s) | (a << (32 - s))) & 0xFFFFFFFF


def _div(a: int, b: int) -> int:
    sa = a - ((a & 0x80000000) << 1)
    sb = b - ((b & 0x80000000) << 1)
    if sb == 0:
        return 0xFFFFFFFF
    if sa == -2147483648 and sb == -1:
        return a
    q = abs(sa) // abs(sb)
    return (-q if (sa < 0) != (sb < 0) else q) & 0xFFFFFFFF


def _rem(a: int, b: int) -> int:
    sa = a - ((a & 0x80000000) << 1)
    sb = b - ((b & 0x80000000) << 1)
    if sb == 0:
        return a
    if sa == -2147483648 and sb == -1:
        return 0
    r = abs(sa) % abs(sb)
    return (-r if sa < 0 else r) & 0xFFFFFFFF


def _bytewise(a: int, kind: int) -> int:
    """orc.b (kind 0), rev8 (1), brev8 (2)."""
    v = 0
    for k in range(4):
        byte = (a >> (8 * k)) & 0xFF
        if kind == 0:
            v |= (0xFF if byte else 0) << (8 * k)
        elif kind == 1:
            v |= byte << (8 * (3 - k))
        else:
            rev = 0
            for j in range(8):
                rev |= ((byte >> j) & 1) << (7 - j)
            v |= rev << (8 * k)
    return v


def _region(regions: Any, a: int, size: int) -> int:
    for r in range(regions.shape[0]):
        if regions[r, 0] <= a and a + size <= regions[r, 1]:
            return r
    return -1


def _load_latch(latches: Any, a: int, deferring: bool) -> int:
    """The first row of a load latch holding the word at ``a`` (a fresh latch only while no
    deferred store waits), or -1."""
    for r in range(latches.shape[0]):
        if latches[r, 0] <= a and a + 4 <= latches[r, 1]:
            kind = latches[r, 3]
            if kind == LATCH_LOAD or (kind == LATCH_FRESH and not deferring):
                return r
    return -1


def _store_latch(latches: Any, a: int) -> int:
    """The first row of a store, note or deferred latch holding the word at ``a``, or -1."""
    for r in range(latches.shape[0]):
        if latches[r, 0] <= a and a + 4 <= latches[r, 1] and latches[r, 3] != LATCH_LOAD \
                and latches[r, 3] != LATCH_FRESH:
            return r
    return -1


def _record(recs: Any, pc: int) -> int:
    """The row of ``pc`` in the load records (row 0 holds the rows' pcs), or -1."""
    for k in range(1, recs[0, 0] + 1):
        if recs[0, k] == pc:
            return k
    return -1


def _kernel(x: Any, pc: int, limit: int, ctl: Any, push_store: int, m0: Any, m1: Any, m2: Any,
            m3: Any, d0: Any, d1: Any, d2: Any, d3: Any, latches: Any, lmem: Any
            ) -> tuple[int, int, int, int, int, int]:
    io = ctl[:IO_WORDS]
    recs = ctl[_RECS:_LOG].reshape((RECORD_ROWS, RECORD_COLS))
    log = ctl[_LOG:_SLOG].reshape((LOG_ROWS, LOG_WIDTH))
    slog = ctl[_SLOG:_PUSH].reshape((STORE_ROWS, 4))
    pushes = ctl[_PUSH:_REGIONS]
    regions = ctl[_REGIONS:CONTROL_WORDS].reshape((MAX_RAMS, 2))
    log_cap = io[IO_LOG_CAP]
    slog_cap = io[IO_SLOG_CAP]
    push_cap = io[IO_PUSH_CAP]
    n = 0
    status = LIMIT
    cb = np.int64(-1)
    ce = np.int64(-1)
    cw = m0.view(np.uint32)
    cd = d0
    db = np.int64(-1)
    de = np.int64(-1)
    dm = m0
    dh = m0.view(np.uint16)
    dw = m0.view(np.uint32)
    while n < limit:
        # -- fetch and decode ------------------------------------------------------------------
        if pc < cb or pc + 4 > ce:
            if pc & 3:
                status = SLOW
                break
            r = _region(regions, pc, 4)
            if r < 0:
                status = SLOW
                break
            cb = regions[r, 0]
            ce = regions[r, 1]
            if r == 0:
                cw = m0.view(np.uint32)
                cd = d0
            elif r == 1:
                cw = m1.view(np.uint32)
                cd = d1
            elif r == 2:
                cw = m2.view(np.uint32)
                cd = d2
            else:
                cw = m3.view(np.uint32)
                cd = d3
        if pc & 3:
            status = SLOW
            break
        i = (pc - cb) >> 2
        if cd[2 * i] != np.int64(cw[i]):
            status = DECODE
            break
        rec = cd[2 * i + 1]
        op = rec & 0xFF
        rd = (rec >> 8) & 31
        imm = rec >> 32
        a = np.int64(x[(rec >> 13) & 31])
        b = np.int64(x[(rec >> 18) & 31])
        npc = pc + 4

        # -- memory ----------------------------------------------------------------------------
        if op <= _LAST_MEMORY:
            if op >= _AMOSWAP:
                addr = a
                size = 4
            else:
                addr = (a + imm) & M
                size = 4 if op <= _SW else (1 if (op == _LBU or op == _SB or op == _LB) else 2)
            if addr & (size - 1):
                status = SLOW
                break
            if addr < db or addr + size > de:
                r = _region(regions, addr, size)
                if r < 0:
                    if op == _SW:
                        # a sw to the hart's custom_store address: kept as a .ttinsn word
                        kept = np.int64(pushes[0])
                        if addr == push_store and kept + 1 < push_cap:
                            pushes[kept + 1] = b & M
                            pushes[0] = kept + 1
                            x[0] = 0
                            pc = npc & M
                            n += 1
                            continue
                        li = _store_latch(latches, addr)
                        kind = latches[li, 3] if li >= 0 else 0
                        if kind == LATCH_STORE:  # a latch register: stored here, counted
                            lmem[latches[li, 2] + ((addr - latches[li, 0]) >> 2)] = b & M
                            io[IO_LATCHED] += 1
                            x[0] = 0
                            pc = npc & M
                            n += 1
                            continue
                        srow = io[IO_STORED]
                        if li >= 0 and srow < slog_cap:
                            # noted (stored here, counted) or deferred: logged for the owner
                            if kind == LATCH_NOTE:
                                lmem[latches[li, 2] + ((addr - latches[li, 0]) >> 2)] = b & M
                                io[IO_LATCHED] += 1
                            else:
                                io[IO_DEFERRED] += 1
                            slog[srow, 0] = addr
                            slog[srow, 1] = b & M
                            slog[srow, 2] = pushes[0]
                            slog[srow, 3] = kind
                            io[IO_STORED] = srow + 1
                            x[0] = 0
                            pc = npc & M
                            n += 1
                            continue
                    elif op == _LW:
                        li = _load_latch(latches, addr, io[IO_DEFERRED] > 0)
                        row = io[IO_LOGGED]
                        if li >= 0 and row < log_cap and io[IO_ROOM] > 0:
                            # a load latch: read here and logged with the registers before
                            # it, unless the records say it may be a loop's (or are full)
                            v = np.int64(lmem[latches[li, 2] + ((addr - latches[li, 0]) >> 2)])
                            made = io[IO_LATCHED] + pushes[0] + io[IO_DEFERRED]
                            writes = io[IO_WRITES] + made
                            k = _record(recs, pc)
                            if k < 0:
                                k = recs[0, 0] + 1
                                same = k >= recs.shape[0]  # full: it leaves
                            else:
                                same = recs[k, 1] == v and recs[k, 2] == writes
                                j = 0
                                while same and j < 32:
                                    same = recs[k, 3 + j] == x[j]
                                    j += 1
                            if not same:
                                recs[0, 0] = max(recs[0, 0], k)
                                recs[0, k] = pc
                                recs[k, 0] = pc
                                recs[k, 1] = v
                                recs[k, 2] = writes
                                log[row, 0] = pc
                                log[row, 1] = addr
                                log[row, 2] = v
                                log[row, 3] = made
                                for j in range(32):
                                    recs[k, 3 + j] = x[j]
                                    log[row, 4 + j] = x[j]
                                io[IO_LOGGED] = row + 1
                                io[IO_ROOM] -= 1
                                recs[k, RECORD_ROOM] = io[IO_ROOM]
                                x[rd] = v
                                x[0] = 0
                                pc = npc & M
                                n += 1
                                continue
                            # the loop may be idle: the hart makes the load, given the word
                            io[IO_ADDR] = addr
                            io[IO_SIZE] = 4
                            io[IO_RD] = rd
                            io[IO_VALUE] = v
                            io[IO_KIND] = IO_LOAD_LATCHED
                            status = MMIO
                            break
                    if op >= _AMOSWAP:
                        status = SLOW
                        break
                    # a load or store through a window: the hart makes it
                    io[IO_ADDR] = addr
                    io[IO_SIZE] = size
                    io[IO_RD] = rd
                    io[IO_VALUE] = b
                    if op == _SW or op == _SB or op == _SH:
                        io[IO_KIND] = IO_STORE
                    elif op == _LB or op == _LH:
                        io[IO_KIND] = IO_LOAD_SIGNED
                    else:
                        io[IO_KIND] = IO_LOAD
                    status = MMIO
                    break
                db = regions[r, 0]
                de = regions[r, 1]
                if r == 0:
                    dm = m0
                elif r == 1:
                    dm = m1
                elif r == 2:
                    dm = m2
                else:
                    dm = m3
                dh = dm.view(np.uint16)
                dw = dm.view(np.uint32)
            off = addr - db
            if op == _LW:
                x[rd] = dw[off >> 2]
            elif op == _SW:
                dw[off >> 2] = b & M
            elif op == _LBU:
                x[rd] = dm[off]
            elif op == _SB:
                dm[off] = b & 0xFF
            elif op == _LHU:
                x[rd] = dh[off >> 1]
            elif op == _SH:
                dh[off >> 1] = b & 0xFFFF
            elif op == _LB:
                x[rd] = ((np.int64(dm[off]) ^ 0x80) - 0x80) & M
            elif op == _LH:
                x[rd] = ((np.int64(dh[off >> 1]) ^ 0x8000) - 0x8000) & M
            else:
                old = np.int64(dw[off >> 2])
                if op == _AMOSWAP:
                    new = b
                elif op == _AMOADD:
                    new = (old + b) & M
                elif op == _AMOXOR:
                    new = old ^ b
                elif op == _AMOAND:
                    new = old & b
                elif op == _AMOOR:
                    new = old | b
                elif op == _AMOMIN:
                    new = old if _signed(old) < _signed(b) else b
                elif op == _AMOMAX:
                    new = old if _signed(old) > _signed(b) else b
                elif op == _AMOMINU:
                    new = old if old < b else b
                else:
                    new = old if old > b else b
                dw[off >> 2] = new
                x[rd] = old
        # -- everything else: one equality per branch (LLVM makes a jump table) ---------------
        elif op == _ADDI:
            x[rd] = (a + imm) & M
        elif op == _ADD:
            x[rd] = (a + b) & M
        elif op == _BNE:
            if a != b:
                npc = pc + imm
        elif op == _BEQ:
            if a == b:
                npc = pc + imm
        elif op == _LUI:
            x[rd] = imm & M
        elif op == _JAL:
            x[rd] = npc & M
            npc = pc + imm
        elif op == _ANDI:
            x[rd] = a & imm & M
        elif op == _SLLI:
            x[rd] = (a << imm) & M
        elif op == _SRLI:
            x[rd] = a >> imm
        elif op == _SUB:
            x[rd] = (a - b) & M
        elif op == _AND:
            x[rd] = a & b
        elif op == _OR:
            x[rd] = a | b
        elif op == _BLTU:
            if a < b:
                npc = pc + imm
        elif op == _BGEU:
            if a >= b:
                npc = pc + imm
        elif op == _BLT:
            if _signed(a) < _signed(b):
                npc = pc + imm
        elif op == _BGE:
            if _signed(a) >= _signed(b):
                npc = pc + imm
        elif op == _JALR:
            t = (a + imm) & M & ~1
            x[rd] = npc & M
            npc = t
        elif op == _XOR:
            x[rd] = a ^ b
        elif op == _SLL:
            x[rd] = (a << (b & 31)) & M
        elif op == _SRL:
            x[rd] = a >> (b & 31)
        elif op == _SRA:
            x[rd] = (_signed(a) >> (b & 31)) & M
        elif op == _SRAI:
            x[rd] = (_signed(a) >> imm) & M
        elif op == _ORI:
            x[rd] = (a | imm) & M
        elif op == _XORI:
            x[rd] = (a ^ imm) & M
        elif op == _SLTI:
            x[rd] = 1 if _signed(a) < imm else 0
        elif op == _SLTIU:
            x[rd] = 1 if a < (imm & M) else 0
        elif op == _SLT:
            x[rd] = 1 if _signed(a) < _signed(b) else 0
        elif op == _SLTU:
            x[rd] = 1 if a < b else 0
        elif op == _AUIPC:
            x[rd] = (pc + imm) & M
        elif op == _FENCE:
            pass
        elif op == _MUL:
            x[rd] = (a * b) & M
        elif op == _MULH:
            x[rd] = ((_signed(a) * _signed(b)) >> 32) & M
        elif op == _MULHSU:
            x[rd] = ((_signed(a) * b) >> 32) & M
        elif op == _MULHU:
            x[rd] = np.int64((np.uint64(a) * np.uint64(b)) >> np.uint64(32))
        elif op == _DIV:
            x[rd] = _div(a, b)
        elif op == _DIVU:
            x[rd] = a // b if b != 0 else M
        elif op == _REM:
            x[rd] = _rem(a, b)
        elif op == _REMU:
            x[rd] = a % b if b != 0 else a
        elif op == _SH1ADD:
            x[rd] = ((a << 1) + b) & M
        elif op == _SH2ADD:
            x[rd] = ((a << 2) + b) & M
        elif op == _SH3ADD:
            x[rd] = ((a << 3) + b) & M
        elif op == _ANDN:
            x[rd] = a & (b ^ M)
        elif op == _ORN:
            x[rd] = a | (b ^ M)
        elif op == _XNOR:
            x[rd] = (a ^ b) ^ M
        elif op == _MIN:
            x[rd] = a if _signed(a) < _signed(b) else b
        elif op == _MINU:
            x[rd] = a if a < b else b
        elif op == _MAX:
            x[rd] = a if _signed(a) > _signed(b) else b
        elif op == _MAXU:
            x[rd] = a if a > b else b
        elif op == _ROL:
            x[rd] = _ror(a, (32 - (b & 31)) & 31)
        elif op == _ROR:
            x[rd] = _ror(a, b & 31)
        elif op == _RORI:
            x[rd] = _ror(a, imm)
        elif op == _CLZ:
            x[rd] = _clz(a)
        elif op == _CTZ:
            x[rd] = 32 if a == 0 else 31 - _clz(a & -a)
        elif op == _CPOP:
            x[rd] = _cpop(a)
        elif op == _SEXTB:
            x[rd] = (((a & 0xFF) ^ 0x80) - 0x80) & M
        elif op == _SEXTH:
            x[rd] = (((a & 0xFFFF) ^ 0x8000) - 0x8000) & M
        elif op == _ORCB:
            x[rd] = _bytewise(a, 0)
        elif op == _REV8:
            x[rd] = _bytewise(a, 1)
        elif op == _PACK:
            x[rd] = (a & 0xFFFF) | ((b & 0xFFFF) << 16)
        elif op == _BREV8:
            x[rd] = _bytewise(a, 2)
        elif op == _TTINSN:  # kept for the caller when it gave room (pushes[0]: the count)
            kept = np.int64(pushes[0])
            if kept + 1 >= push_cap:
                status = SLOW
                break
            pushes[kept + 1] = imm & M
            pushes[0] = kept + 1
        else:  # SLOW_OP, or no such op
            status = SLOW
            break
        x[0] = 0
        pc = npc & M
        n += 1
    # what there is to hand over; the log and buffers empty for the next run (their rows
    # stay until then)
    logged = io[IO_LOGGED]
    kept = np.int64(pushes[0])
    stored = io[IO_STORED]
    io[IO_LOGGED] = 0
    pushes[0] = 0
    io[IO_STORED] = 0
    io[IO_DEFERRED] = 0
    return status, n, pc, logged, kept, stored


__all__ = ["CONTROL_WORDS", "DECODE", "IO_ADDR", "IO_DEFERRED", "IO_KIND", "IO_LATCHED",
           "IO_LOAD", "IO_LOAD_LATCHED", "IO_LOAD_SIGNED", "IO_LOGGED", "IO_RD", "IO_ROOM",
           "IO_SIZE", "IO_STORE", "IO_STORED", "IO_VALUE", "IO_WRITES", "LIMIT", "LOG_ROWS",
           "LOG_WIDTH", "MAX_RAMS", "MMIO", "OP", "SLOW", "STORE_ROWS", "available",
           "control_buffer", "pack", "predecode", "run"]
