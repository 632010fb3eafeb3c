#!/usr/bin/env python3
"""Generate the bundled afuc register database from the freedreno "rnn" XML files.

Usage::

    python tools/gen_afuc_regdb.py /work/shared/refdata/afuc/registers [OUTPUT]

OUTPUT defaults to ``src/isaforge/afuc/data/regdb.json.gz``.  The output is deterministic
(sorted keys, gzip with a zero timestamp), so re-running the script on the same XML gives
the same bytes.

What is kept: the register *structure* of the domains the afuc tools use (regs, arrays,
stripes with offset/stride/length/children), each element's resolved ``chip`` variant set,
the few register types that change how a name is printed (``address``/``waddress`` give a
``_HI`` suffix, ``void`` marks payload-less pipe registers), and the enums the tools need
(``chip``, ``adreno_pm4_type3_packets`` and any enum used as an array index).  Bitfields,
docs and all other domains are dropped.

The semantics follow the rnn database loader (merging of same-named domains and enums in
parse order, inheritance and intersection of ``variants=`` through ``varset``/``prefix``,
default stride of multi-element registers, ``use-group`` expansion).  See
``src/isaforge/afuc/regdb.py`` for the lookup side.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

FORMAT_VERSION = 1

#: Domains the afuc assembler/disassembler/emulator look registers up in.
WANTED_DOMAINS = (
    "AXXX",
    "A5XX",
    "A6XX",
    "A6XX_SQE_REG",
    "A5XX_CONTROL_REG",
    "A6XX_CONTROL_REG",
    "A7XX_CONTROL_REG",
    "A7XX_GEN3_CONTROL_REG",
    "A5XX_PIPE_REG",
    "A6XX_PIPE_REG",
    "A7XX_PIPE_REG",
)
#: Enums always exported (array index enums are added automatically).
WANTED_ENUMS = ("chip", "adreno_pm4_type3_packets")
#: The variant set the afuc tools select a value of (rnndec_varadd(ctx, "chip", ...)).
CHIP_VARSET = "chip"
#: Register types that influence naming; other types are not stored.
SIGNIFICANT_TYPES = ("address", "waddress", "void")

REG_WIDTHS = {"reg8": 8, "reg16": 16, "reg32": 32, "reg64": 64}
TOP_TAGS = ("enum", "bitset", "group", "domain", "spectype", "import", "copyright")
DOC_TAGS = ("doc", "brief")


class RnnError(Exception):
    """The XML violates a rule the rnn loader enforces."""


def _tag(node: ET.Element) -> str:
    t = node.tag
    return t.rsplit("}", 1)[1] if "}" in t else t


def _num(text: str) -> int:
    """Numeric attribute: hexadecimal when it contains an x, decimal otherwise."""
    text = text.strip()
    if "x" in text or "X" in text:
        return int(text, 16)
    return int(text, 10)


# --------------------------------------------------------------------------- raw model


@dataclass
class VarInfo:
    prefix: str | None = None
    varset: str | None = None
    variants: str | None = None


@dataclass
class Value:
    name: str
    value: int | None
    vi: VarInfo


@dataclass
class Enum:
    name: str
    vi: VarInfo
    inline: bool
    bare: bool
    values: list[Value] = field(default_factory=list)


@dataclass
class Elem:
    kind: str  # "reg", "array", "stripe", "use-group"
    name: str | None
    vi: VarInfo
    offset: int = 0
    offsets: list[int] | None = None
    length: int = 1
    stride: int = 0
    width: int = 0
    type: str | None = None
    index: str | None = None
    children: list[Elem] = field(default_factory=list)


@dataclass
class Domain:
    name: str
    vi: VarInfo
    width: int
    bare: bool
    elems: list[Elem] = field(default_factory=list)


class RawDb:
    """Everything parsed from the XML files, merged the way the rnn loader merges it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.files: list[Path] = []
        self.enums: dict[str, Enum] = {}
        self.domains: dict[str, Domain] = {}
        self.groups: dict[str, list[Elem]] = {}
        self.bitsets: set[str] = set()
        self.spectypes: set[str] = set()

    # -- files
    def parse_file(self, name: str, importer: Path | None = None) -> None:
        path = (self.root / name).resolve()
        if not path.exists() and importer is not None:
            path = (importer.parent / name).resolve()
        if not path.exists():
            raise RnnError(f"{name}: database file not found (root {self.root})")
        if path in self.files:
            return
        self.files.append(path)
        top = ET.parse(path).getroot()
        if _tag(top) != "database":
            raise RnnError(f"{path}: top-level tag is <{_tag(top)}>, not <database>")
        for child in top:
            if not self._try_top(child, path) and _tag(child) not in DOC_TAGS:
                raise RnnError(f"{path}: unexpected <{_tag(child)}> in database")

    def _try_top(self, node: ET.Element, path: Path) -> bool:
        t = _tag(node)
        if t == "enum":
            self._parse_enum(node, path)
        elif t == "bitset":
            self.bitsets.add(node.get("name", ""))
            self._walk_misc(node, path)
        elif t == "group":
            elems = self.groups.setdefault(node.get("name", ""), [])
            self._parse_elem_children(node, path, elems)
        elif t == "domain":
            self._parse_domain(node, path)
        elif t == "spectype":
            self.spectypes.add(node.get("name", ""))
            self._walk_misc(node, path)
        elif t == "import":
            self.parse_file(node.get("file", ""), path)
        elif t == "copyright":
            pass
        else:
            return False
        return True

    def _walk_misc(self, node: ET.Element, path: Path) -> None:
        """Children of bitsets, bitfields, values, inline register types: only nested
        top-level declarations matter."""
        for child in node:
            t = _tag(child)
            if t in ("value", "bitfield"):
                self._walk_misc(child, path)
            elif not self._try_top(child, path) and t not in DOC_TAGS:
                raise RnnError(f"{path}: unexpected <{t}> in <{_tag(node)}>")

    @staticmethod
    def _varinfo(node: ET.Element) -> VarInfo:
        return VarInfo(node.get("prefix"), node.get("varset"), node.get("variants"))

    def _parse_enum(self, node: ET.Element, path: Path) -> None:
        name = node.get("name")
        if not name:
            raise RnnError(f"{path}: nameless enum")
        vi = self._varinfo(node)
        inline = node.get("inline") in ("yes", "1", "true")
        bare = node.get("bare") in ("yes", "1", "true")
        cur = self.enums.get(name)
        if cur is None:
            cur = self.enums[name] = Enum(name, vi, inline, bare)
        elif cur.vi != vi or cur.inline != inline or cur.bare != bare:
            raise RnnError(f"{path}: merge fail for enum {name}")
        for child in node:
            t = _tag(child)
            if t == "value":
                vname = child.get("name")
                if not vname:
                    raise RnnError(f"{path}: nameless value in enum {name}")
                raw = child.get("value")
                cur.values.append(
                    Value(vname, _num(raw) if raw is not None else None, self._varinfo(child))
                )
                self._walk_misc(child, path)
            elif not self._try_top(child, path) and t not in DOC_TAGS:
                raise RnnError(f"{path}: unexpected <{t}> in enum {name}")

    def _parse_domain(self, node: ET.Element, path: Path) -> None:
        name = node.get("name")
        if not name:
            raise RnnError(f"{path}: nameless domain")
        vi = self._varinfo(node)
        width = _num(node.get("width", "8"))
        bare = node.get("bare") in ("yes", "1", "true")
        cur = self.domains.get(name)
        if cur is None:
            cur = self.domains[name] = Domain(name, vi, width, bare)
        elif cur.vi != vi or cur.width != width or cur.bare != bare:
            raise RnnError(f"{path}: merge fail for domain {name}")
        self._parse_elem_children(node, path, cur.elems)

    def _parse_elem_children(self, node: ET.Element, path: Path, out: list[Elem]) -> None:
        for child in node:
            elem = self._try_elem(child, path)
            if elem is not None:
                out.append(elem)
            elif not self._try_top(child, path) and _tag(child) not in DOC_TAGS:
                raise RnnError(f"{path}: unexpected <{_tag(child)}> in <{_tag(node)}>")

    def _try_elem(self, node: ET.Element, path: Path) -> Elem | None:
        t = _tag(node)
        if t == "use-group":
            return Elem("use-group", node.get("ref"), VarInfo())
        if t in ("array", "stripe"):
            elem = Elem(t, node.get("name", "" if t == "array" else None), self._varinfo(node))
            if node.get("offset") is not None:
                elem.offset = _num(node.get("offset"))
            if node.get("offsets") is not None:
                elem.offsets = [_num(x) for x in node.get("offsets").split(",") if x.strip()]
            if node.get("length") is not None:
                elem.length = _num(node.get("length"))
            if node.get("stride") is not None:
                elem.stride = _num(node.get("stride"))
            elem.index = node.get("index")
            self._parse_elem_children(node, path, elem.children)
            if t == "array" and elem.stride == 0:
                raise RnnError(f"{path}: array {elem.name} has no stride")
            return elem
        width = REG_WIDTHS.get(t)
        if width is None:
            return None
        name = node.get("name")
        if not name:
            raise RnnError(f"{path}: nameless register")
        elem = Elem("reg", name, self._varinfo(node), width=width, type=node.get("type"))
        elem.offset = _num(node.get("offset", "0"))
        if node.get("length") is not None:
            elem.length = _num(node.get("length"))
        if node.get("stride") is not None:
            elem.stride = _num(node.get("stride"))
        self._walk_misc(node, path)
        return elem


# --------------------------------------------------------------------------- variants


@dataclass
class Resolved:
    """Variant information after inheritance (what the rnn loader computes per element)."""

    prefenum: str | None
    varsetstr: str | None
    varsets: dict[str, list[bool]]
    dead: bool


def _variant_marks(db: RawDb, enum: Enum, spec: str, what: str) -> list[bool]:
    names = [v.name for v in enum.values]

    def idx(n: str) -> int:
        try:
            return names.index(n)
        except ValueError:
            raise RnnError(f"{what}: no variant {n} in enum {enum.name}") from None

    marks = [False] * len(names)
    for tok in spec.split(" "):
        if not tok:
            continue
        cut = next((i for i, c in enumerate(tok) if c in ":-"), None)
        if cut is None:
            marks[idx(tok)] = True
            continue
        first, sep, second = tok[:cut], tok[cut], tok[cut + 1 :]
        lo = idx(first) if first else 0
        hi = len(names)
        if second:
            hi = idx(second) + (1 if sep == "-" else 0)
        for i in range(lo, hi):
            marks[i] = True
    return marks


def resolve(db: RawDb, what: str, vi: VarInfo, parent: Resolved | None) -> Resolved:
    prefenum = parent.prefenum if parent else None
    if vi.prefix:
        prefenum = None if vi.prefix == "none" else (vi.prefix if vi.prefix in db.enums else None)
    varsets = {k: list(v) for k, v in parent.varsets.items()} if parent else {}
    varsetstr = vi.varset
    if prefenum is None and varsetstr is None and parent is not None:
        varsetstr = parent.varsetstr
    varset = prefenum
    if varsetstr:
        varset = varsetstr if varsetstr in db.enums else None
    dead = False
    if vi.variants:
        if varset is None:
            raise RnnError(f"{what}: variants without an active varset")
        enum = db.enums[varset]
        cur = varsets.setdefault(varset, [True] * len(enum.values))
        marks = _variant_marks(db, enum, vi.variants, what)
        varsets[varset] = [a and b for a, b in zip(cur, marks, strict=True)]
        dead = not any(varsets[varset])
    return Resolved(prefenum, varsetstr, varsets, dead)


# --------------------------------------------------------------------------- export


class Exporter:
    def __init__(self, db: RawDb) -> None:
        self.db = db
        self.chips = [v.name for v in db.enums[CHIP_VARSET].values]
        self.index_enums: set[str] = set()

    def _chip_list(self, r: Resolved) -> list[str] | None:
        if r.dead:
            return []
        allowed = r.varsets.get(CHIP_VARSET)
        if allowed is None or all(allowed):
            return None
        return [c for c, ok in zip(self.chips, allowed, strict=True) if ok]

    def elem(self, e: Elem, parent: Resolved, dwidth: int, what: str) -> dict:
        if e.kind == "use-group":
            group = self.db.groups.get(e.name or "")
            if group is None:
                raise RnnError(f"{what}: group {e.name} not found")
            e = Elem("stripe", None, VarInfo(), children=list(group))
        r = resolve(self.db, f"{what}.{e.name}", e.vi, parent)
        out: dict = {"n": e.name} if e.name is not None else {}
        if e.kind != "reg":
            out["k"] = "a" if e.kind == "array" else "s"
        out["o"] = e.offset
        v = self._chip_list(r)
        if v is not None:
            out["v"] = v
        if r.dead:
            return out  # never matches; kept only so name lookups see it
        stride = e.stride
        if e.length != 1 and not stride:
            if e.kind != "reg":
                raise RnnError(f"{what}.{e.name}: length without stride")
            stride = e.width // dwidth
        if e.length != 1:
            out["l"] = e.length
        if stride:
            out["s"] = stride
        if e.offsets is not None:
            out["os"] = e.offsets
        if e.kind == "reg":
            if e.width != 32:
                out["w"] = e.width
            if e.type in SIGNIFICANT_TYPES:
                out["t"] = e.type
        if e.index:
            if e.index not in self.db.enums:
                raise RnnError(f"{what}.{e.name}: unknown index enum {e.index}")
            out["ix"] = e.index
            self.index_enums.add(e.index)
        if e.children:
            sub = f"{what}.{e.name}" if e.name else what
            out["c"] = [self.elem(c, r, dwidth, sub) for c in e.children]
        return out

    def domain(self, d: Domain) -> dict:
        r = resolve(self.db, d.name, d.vi, None)
        return {"width": d.width, "elems": [self.elem(e, r, d.width, d.name) for e in d.elems]}

    def enum(self, en: Enum) -> list:
        r = resolve(self.db, en.name, en.vi, None)
        vals = []
        for val in en.values:
            # inline enums do not get per-value variant information in rnn
            vr = r if en.inline else resolve(self.db, f"{en.name}.{val.name}", val.vi, r)
            row: list = [val.name, val.value]
            v = self._chip_list(vr)
            if v is not None:
                row.append(v)
            vals.append(row)
        return vals

    def export(self) -> dict:
        missing = [d for d in WANTED_DOMAINS if d not in self.db.domains]
        if missing:
            raise RnnError(f"domains not found: {missing}")
        domains = {d: self.domain(self.db.domains[d]) for d in WANTED_DOMAINS}
        enums = {e: self.enum(self.db.enums[e]) for e in (*WANTED_ENUMS, *self.index_enums)}
        return {
            "format": FORMAT_VERSION,
            "chip_varset": CHIP_VARSET,
            "domains": domains,
            "enums": enums,
        }


def build(root: Path) -> dict:
    db = RawDb(root)
    db.parse_file("adreno.xml")
    return Exporter(db).export()


def serialize(data: dict) -> bytes:
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, compresslevel=9, mtime=0) as gz:
        gz.write(text.encode("ascii") + b"\n")
    return buf.getvalue()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("registers", type=Path, help="directory holding adreno.xml")
    default_out = Path(__file__).resolve().parent.parent / "src/isaforge/afuc/data/regdb.json.gz"
    ap.add_argument("output", type=Path, nargs="?", default=default_out)
    args = ap.parse_args(argv)
    try:
        data = build(args.registers.resolve())
    except (RnnError, ET.ParseError) as exc:
        print(f"gen_afuc_regdb: {exc}", file=sys.stderr)
        return 1
    blob = serialize(data)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_bytes(blob)
    print(f"wrote {args.output} ({len(blob)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
