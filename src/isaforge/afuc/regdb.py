"""Adreno register-name database for the afuc assembler, disassembler and emulator.

The data comes from the freedreno "rnn" XML register database, converted by
``tools/gen_afuc_regdb.py`` into ``data/regdb.json.gz`` (structure only: regs, arrays and
stripes with offset/stride/length/children and their ``chip`` variant sets).

Naming follows Mesa's rnn decoder exactly, because afuc-disasm's output must be
reproduced byte for byte:

* elements of a domain are tried in file order and the first one that covers the address
  wins; elements whose ``variants`` exclude the selected chip are skipped;
* a register with ``length != 1`` gets ``[idx]``; an array gets ``[idx]`` (or the name of
  the index-enum value) and then ``.CHILD`` -- or ``+off`` when no child covers the
  offset, which is how ``CP_PERFCTR_CP_SEL[0]+0`` comes about;
* the second and later dwords of a wide register get ``+0x1`` ... (``_HI`` for registers
  typed ``address``/``waddress``);
* numbers are printed like C's ``%#x``: ``0`` for zero, ``0x6`` otherwise.

GPU registers are looked up in the chip domain (``A5XX``, or ``A6XX`` for both a6xx and
a7xx) first and then in ``AXXX``.  Control registers come from ``A5XX/A6XX/A7XX_CONTROL_REG``,
SQE registers from ``A6XX_SQE_REG`` and pipe registers from ``A5XX/A6XX/A7XX_PIPE_REG``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from functools import cache, cached_property

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["RegDB", "VARIANTS"]

DATA_FILE = "regdb.json.gz"

#: Supported variants and the domains each one uses:
#: (GPU chip domain, chip variant, control domain, pipe domain).
_VARIANT_DOMAINS: dict[str, tuple[str, str, str, str]] = {
    "A5XX": ("A5XX", "A5XX", "A5XX_CONTROL_REG", "A5XX_PIPE_REG"),
    "A6XX": ("A6XX", "A6XX", "A6XX_CONTROL_REG", "A6XX_PIPE_REG"),
    "A7XX": ("A6XX", "A7XX", "A7XX_CONTROL_REG", "A7XX_PIPE_REG"),
}
VARIANTS: tuple[str, ...] = tuple(_VARIANT_DOMAINS)
_COMMON_DOMAIN = "AXXX"
_SQE_DOMAIN = "A6XX_SQE_REG"
_PM4_ENUM = "adreno_pm4_type3_packets"

# A decoded address: (printed name, register type or None).  The type is None when the
# address was named through an array with no child covering it (Mesa has no typeinfo then).
_Hit = tuple[str, str | None]


@cache
def _load_data() -> dict[str, Any]:
    # (a path next to this file, not importlib.resources: that import alone pulls in tempfile,
    # shutil, zipfile, bz2, lzma and random, a few ms of every command's start-up; nor pathlib)
    from .datacache import data_file  # (decoded once, then read back, in the CLI)

    data = data_file(os.path.join(os.path.dirname(__file__), "data", DATA_FILE), _decode)
    if data.get("format") != 1:
        raise ValueError(f"{DATA_FILE}: unsupported format {data.get('format')!r}")
    return data


#: the GPU chip domains: most of the data, needed only where the GPU register table (kept
#: in the CLI's cache, see _Space) is not enough (the assembler's register names)
_BIG_DOMAINS = ("A5XX", "A6XX")


@cache
def _load_small() -> dict[str, Any]:
    """The data without :data:`_BIG_DOMAINS` (their names kept under ``"names"``), kept
    apart in the CLI's cache: a listing reads a tenth of the data back."""
    from .datacache import derived, enabled

    def small() -> dict[str, Any]:
        data = _load_data()
        domains = data["domains"]
        return {"names": sorted(domains), "enums": data["enums"],
                "domains": {k: v for k, v in domains.items() if k not in _BIG_DOMAINS}}

    if not enabled():
        return small()
    path = os.path.join(os.path.dirname(__file__), "data", DATA_FILE)
    return derived("afuc-regdb-small", (__file__, path), small)


def _domain(name: str) -> dict[str, Any]:
    got = _load_small()["domains"].get(name)
    return got if got is not None else _load_data()["domains"][name]


def _decode(blob: bytes) -> dict[str, Any]:
    import json  # (imports re: not needed when the CLI's cache holds the result)
    import zlib

    return json.loads(zlib.decompress(blob, 16 + zlib.MAX_WBITS))  # (a gzip member)


def _hex(n: int) -> str:
    """C printf ``%#x``."""
    return f"{n:#x}" if n else "0"


class _Namer:
    """Maps addresses of one domain to names for one chip variant (rnndec semantics)."""

    def __init__(self, domain: str, enums: dict[str, list], chip: str) -> None:
        self.domain = domain  # its name: the data is read at the first lookup
        self.enums = enums
        self.chip = chip

    @cached_property
    def width(self) -> int:
        return _domain(self.domain)["width"]

    @cached_property
    def elems(self) -> list[dict[str, Any]]:
        return _domain(self.domain)["elems"]

    def matches(self, e: dict[str, Any]) -> bool:
        v = e.get("v")
        return v is None or self.chip in v

    def _index(self, name: str, idx: int, enum: str | None) -> str:
        if enum is not None:
            for row in self.enums[enum]:
                if row[1] == idx and (len(row) < 3 or self.chip in row[2]):
                    return f"{name}[{row[0]}]"
        return f"{name}[{_hex(idx)}]"

    def _prefix(self, e: dict[str, Any], indices: Sequence[int], idx: int) -> str:
        name = e["n"]
        for i in indices:
            name = self._index(name, i, None)
        if e.get("l", 1) != 1:
            name = self._index(name, idx, e.get("ix"))
        return name

    # -- one address at a time (mirrors the decoder's search; used for unbounded elements
    #    and as an independent check of the table built below)
    def lookup(self, addr: int) -> _Hit | None:
        return self._try(self.elems, addr, ())

    def _try(self, elems: Iterable[dict[str, Any]], addr: int, indices: Sequence[int]):
        for e in elems:
            if not self.matches(e):
                continue
            kind = e.get("k")
            off, stride, length = e["o"], e.get("s", 0), e.get("l", 1)
            if kind is None:
                if addr < off:
                    continue
                idx, rel = divmod(addr - off, stride) if stride else (0, addr - off)
                if rel >= e.get("w", 32) // self.width or (length and idx >= length):
                    continue
                return self._reg_name(e, indices, idx, rel), e.get("t")
            if kind == "s":
                idx = 0
                while idx < length or not length:
                    base = off + stride * idx
                    if addr < base:
                        break
                    named = e.get("n") is not None
                    sub = () if named else (*indices, *([idx] if length != 1 else []))
                    hit = self._try(e.get("c", ()), addr - base, sub)
                    if hit is not None:
                        if not named:
                            return hit
                        return f"{self._prefix(e, indices, idx)}.{hit[0]}", hit[1]
                    idx += 1
                continue
            # array
            pos = self._array_pos(e, addr)
            if pos is None:
                continue
            idx, rel = pos
            prefix = self._prefix(e, indices, idx)
            hit = self._try(e.get("c", ()), rel, ())
            if hit is not None:
                return f"{prefix}.{hit[0]}", hit[1]
            return f"{prefix}+{_hex(rel)}", None
        return None

    @staticmethod
    def _array_pos(e: dict[str, Any], addr: int) -> tuple[int, int] | None:
        stride = e["s"]
        if "os" in e:
            for i, o in enumerate(e["os"]):
                if o <= addr < o + stride:
                    return i, addr - o
            return None
        if addr < e["o"]:
            return None
        idx, rel = divmod(addr - e["o"], stride)
        length = e.get("l", 1)
        if length and idx >= length:
            return None
        return idx, rel

    def _reg_name(self, e: dict[str, Any], indices: Sequence[int], idx: int, rel: int) -> str:
        name = self._prefix(e, indices, idx)
        if rel:
            if rel == 1 and e.get("t") in ("address", "waddress"):
                return f"{name}_HI"
            return f"{name}+{_hex(rel)}"
        return name

    # -- whole table
    def table(self) -> tuple[dict[int, _Hit], bool]:
        """Names of every address some element covers, and whether that is complete.

        Incomplete means an element without a length bound exists; addresses missing from
        the table must then be looked up with :meth:`lookup`.
        """
        out: dict[int, _Hit] = {}
        complete = self._fill(self.elems, (), out)
        return out, complete

    def _fill(self, elems: Iterable[dict[str, Any]], indices: Sequence[int], out) -> bool:
        """Add the addresses of ``elems`` to ``out`` without overriding earlier entries
        (first matching element wins, as in the decoder's search).  Returns False, having
        stopped, at the first element without a length bound."""
        for e in elems:
            if not self.matches(e):
                continue
            kind = e.get("k")
            off, stride, length = e["o"], e.get("s", 0), e.get("l", 1)
            if length == 0:
                return False  # later elements may be shadowed: stop here
            if kind is None:
                words = e.get("w", 32) // self.width
                end = off + stride * (length - 1) + words if stride else off + words
                for a in range(off, end):
                    idx, rel = divmod(a - off, stride) if stride else (0, a - off)
                    if rel < words and idx < length and a not in out:
                        out[a] = (self._reg_name(e, indices, idx, rel), e.get("t"))
            elif kind == "s":
                named = e.get("n") is not None
                for idx in range(length):
                    base = off + stride * idx
                    sub_indices = () if named else (*indices, *([idx] if length != 1 else []))
                    sub: dict[int, _Hit] = {}
                    if not self._fill(e.get("c", ()), sub_indices, sub):
                        return False
                    prefix = self._prefix(e, indices, idx) if named else None
                    for rel, (name, ty) in sub.items():
                        if base + rel not in out:
                            out[base + rel] = (f"{prefix}.{name}" if prefix else name, ty)
            else:
                children: dict[int, _Hit] = {}
                # with unbounded children, look each offset up one at a time
                exact = self._fill(e.get("c", ()), (), children)
                bases = e["os"] if "os" in e else [off + stride * i for i in range(length)]
                for idx, base in enumerate(bases):
                    prefix = self._prefix(e, indices, idx)
                    for rel in range(stride):
                        if base + rel in out:
                            continue
                        hit = children.get(rel)
                        if hit is None and not exact:
                            hit = self._try(e.get("c", ()), rel, ())
                        if hit is not None:
                            out[base + rel] = (f"{prefix}.{hit[0]}", hit[1])
                        else:
                            out[base + rel] = (f"{prefix}+{_hex(rel)}", None)
        return True


_NUM = r"(?:0[xX][0-9a-fA-F]+|[0-9]+)"


@cache
def _patterns() -> tuple[Any, Any]:
    """The patterns of :func:`_canon` (compiled at the first name looked up: the assembler
    looks names up, a listing does not, and ``re`` is most of the import time it saves)."""
    import re

    return re.compile(r"\[(" + _NUM + r")\]"), re.compile(r"^(.*?)\+\s*(" + _NUM + r")$")


def _canon(name: str) -> str:
    """Spell numeric indices and a trailing ``+offset`` the way the decoder prints them."""
    index_re, plus_re = _patterns()
    name = index_re.sub(lambda m: f"[{_hex(int(m.group(1), 0))}]", name.replace(" ", ""))
    m = plus_re.match(name)
    if m:
        name = f"{m.group(1)}+{_hex(int(m.group(2), 0))}"
    return name


class _Space:
    """One register space (a domain or the chip+AXXX pair) for one variant."""

    def __init__(self, namers: tuple[_Namer, ...], cache_name: str | None = None) -> None:
        self.namers = namers
        self.cache_name = cache_name  # the merged table's name in the CLI's disk cache

    @cached_property
    def _tables(self) -> tuple[dict[int, _Hit], bool]:
        if self.cache_name is None:
            return self._merge()
        from .datacache import derived

        data = os.path.join(os.path.dirname(__file__), "data", DATA_FILE)
        merged, complete = derived(self.cache_name, (__file__, data), self._merge)
        return merged, complete

    def _merge(self) -> tuple[dict[int, _Hit], bool]:
        merged: dict[int, _Hit] = {}
        complete = True
        for namer in self.namers:
            table, ok = namer.table()
            complete = complete and ok
            for addr, hit in table.items():
                if addr not in merged:
                    merged[addr] = hit
            if not ok:
                break  # addresses beyond this domain's table need the slow path
        return merged, complete

    def hit(self, addr: int) -> _Hit | None:
        table, complete = self._tables
        hit = table.get(addr)
        if hit is not None or complete:
            return hit
        for namer in self.namers:
            hit = namer.lookup(addr)
            if hit is not None:
                return hit
        return None

    def name(self, addr: int) -> str | None:
        hit = self.hit(addr)
        return hit[0] if hit else None

    @cached_property
    def _by_name(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for addr, (name, _ty) in sorted(self._tables[0].items()):
            out.setdefault(name, addr)
        return out

    @cached_property
    def _top_level(self) -> tuple[dict[str, int], dict[str, int]]:
        """Top-level element names -> offsets: variant-matching ones, and Mesa's
        variant-blind first-in-file-order lookup (afuc's find_reg)."""
        matching: dict[str, int] = {}
        blind: dict[str, int] = {}
        for namer in self.namers:
            for e in namer.elems:
                n = e.get("n")
                if n is None:
                    continue
                blind.setdefault(n, e["o"])
                if namer.matches(e):
                    matching.setdefault(n, e["o"])
        return matching, blind

    @cached_property
    def _plain_names(self) -> frozenset[str] | None:
        """The plain names (letters, digits, ``_``) :meth:`offset` can find, kept in the
        CLI's disk cache (None without a cache name): telling that ``b2`` is no register
        (the assembler asks) then loads neither the merged table nor the top-level names.
        Without the cache (the library's default) None: the lookups below are as cheap."""
        from .datacache import derived, enabled

        if self.cache_name is None or not enabled():
            return None

        data = os.path.join(os.path.dirname(__file__), "data", DATA_FILE)
        return frozenset(derived(f"{self.cache_name}-names", (__file__, data),
                                 self._find_plain_names))

    def _find_plain_names(self) -> list[str]:
        matching, blind = self._top_level
        names = {*matching, *blind, *self._by_name}
        names.update(n[:-2] for n in self._by_name if n.endswith("+0"))
        return sorted(n for n in names if n.isascii() and n.isidentifier())

    def offset(self, name: str) -> int | None:
        name = name.strip()
        if not name:
            return None
        if (name.isascii() and name.isidentifier() and not name.endswith("_HI")
                and self._plain_names is not None and name not in self._plain_names):
            # (a plain name is its own canonical spelling, matches no index or offset
            # pattern below, and so is found only by one of the names above)
            return None
        matching, blind = self._top_level
        if name in matching:
            return matching[name]
        canon = _canon(name)
        found = self._by_name.get(canon)
        if found is not None:
            return found
        if name in blind:
            return blind[name]
        # forms the decoder never prints but that mean something obvious
        found = self._by_name.get(canon + "+0")  # element of a childless array
        if found is not None:
            return found
        m = _patterns()[1].match(canon)
        if m:
            base = self.offset(m.group(1))
            return None if base is None else base + int(m.group(2), 0)
        if canon.endswith("_HI"):
            base = self.offset(canon[:-3])
            return None if base is None else base + 1
        return None


class RegDB:
    """Register names for one GPU variant ("A5XX", "A6XX" or "A7XX").

    Use :meth:`for_variant` to get a cached instance.  All name lookups return ``None`` for
    unknown offsets/names; offsets are plain ints.
    """

    def __init__(self, variant: str, *, control_domain: str | None = None) -> None:
        variant = variant.upper()
        if variant not in _VARIANT_DOMAINS:
            raise ValueError(f"unknown afuc variant {variant!r} (expected one of {VARIANTS})")
        data = _load_small()
        domains, enums = data["names"], data["enums"]
        gpu_dom, chip, ctrl_dom, pipe_dom = _VARIANT_DOMAINS[variant]
        ctrl_dom = control_domain or ctrl_dom
        if ctrl_dom not in domains:
            raise ValueError(f"unknown control register domain {ctrl_dom!r}")
        self.variant = variant
        self.chip = chip

        def namer(dom: str) -> _Namer:
            return _Namer(dom, enums, chip)

        self._gpu = _Space((namer(gpu_dom), namer(_COMMON_DOMAIN)),
                           f"afuc-regs-{variant}-{gpu_dom}")  # (the big one: a few ms)
        self._control = _Space((namer(ctrl_dom),))
        self._sqe = _Space((namer(_SQE_DOMAIN),))
        self._pipe = _Space((namer(pipe_dom),))
        self._pm4_rows: list[list] = enums[_PM4_ENUM]

    @classmethod
    @cache
    def for_variant(cls, variant: str, control_domain: str | None = None) -> RegDB:
        """Shared instance for ``variant`` (``control_domain`` overrides the control
        register domain, e.g. ``"A7XX_GEN3_CONTROL_REG"``)."""
        return cls(variant, control_domain=control_domain)

    def __repr__(self) -> str:
        return f"RegDB({self.variant!r})"

    # -- GPU registers
    def gpu_reg_name(self, offset: int) -> str | None:
        """Name Mesa's afuc tools print for GPU register ``offset`` (None if unknown)."""
        return self._gpu.name(offset)

    def gpu_reg(self, name: str) -> int | None:
        """Offset of a GPU register name, including every form :meth:`gpu_reg_name`
        prints (``CP_SCRATCH[0x6].REG``, ``CP_PERFCTR_CP_SEL[0]+0``, ``X+0x1``, ``X_HI``);
        indices and offsets may be decimal or hex."""
        return self._gpu.offset(name)

    def is_hi_half(self, space: str, offset: int) -> bool:
        """True when the name of register ``offset`` is the one before it (a 64-bit address
        register) with ``_HI`` appended, rather than a register of its own."""
        table = {"gpu": self._gpu, "control": self._control, "sqe": self._sqe,
                 "pipe": self._pipe}[space]
        here, before = table.hit(offset), table.hit(offset - 1) if offset else None
        return (here is not None and before is not None
                and before[1] in ("address", "waddress") and here[0] == before[0] + "_HI")

    # -- control registers (@NAME)
    def control_reg_name(self, offset: int) -> str | None:
        return self._control.name(offset)

    def control_reg(self, name: str) -> int | None:
        return self._control.offset(name)

    # -- SQE registers (%NAME)
    def sqe_reg_name(self, offset: int) -> str | None:
        return self._sqe.name(offset)

    def sqe_reg(self, name: str) -> int | None:
        return self._sqe.offset(name)

    # -- pipe registers (|NAME)
    def pipe_reg_name(self, offset: int) -> str | None:
        return self._pipe.name(offset)

    def pipe_reg(self, name: str) -> int | None:
        return self._pipe.offset(name)

    def pipe_reg_is_void(self, offset: int) -> bool:
        """True for pipe registers typed ``void`` (writing ``$addr`` alone triggers them)."""
        hit = self._pipe.hit(offset)
        return hit is not None and hit[1] == "void"

    # -- PM4 type-3 packets
    @cached_property
    def _pm4_by_id(self) -> dict[int, str]:
        out: dict[int, str] = {}
        for row in self._pm4_rows:
            if row[1] is not None and (len(row) < 3 or self.chip in row[2]):
                out.setdefault(row[1], row[0])
        return out

    @cached_property
    def _pm4_by_name(self) -> dict[str, int]:
        matching: dict[str, int] = {}
        blind: dict[str, int] = {}
        for row in self._pm4_rows:
            if row[1] is None:
                continue
            blind.setdefault(row[0], row[1])
            if len(row) < 3 or self.chip in row[2]:
                matching.setdefault(row[0], row[1])
        return {**blind, **matching}

    def pm4_packet_name(self, packet_id: int) -> str | None:
        """Name of PM4 type-3 packet ``packet_id`` for this variant."""
        return self._pm4_by_id.get(packet_id)

    def pm4_packet_id(self, name: str) -> int | None:
        """Id of PM4 packet ``name``; a name valid for this variant wins, otherwise the
        first definition in the XML is used, like Mesa's assembler."""
        return self._pm4_by_name.get(name)
