"""Register-name database vs. Mesa's real afuc-disasm output.

The oracle is what afuc-disasm printed for the Debian firmware and for Mesa's own test
firmware.  A GPU-register comment (``\\t; NAME``) is printed after every instruction with
an RIMMED field (ALU-immediate forms and ``mov $dst, 0xIMM [<< SHIFT]``) and after every
raw literal word, exactly when the value names a register; ``$addr`` writes with a shift
of 16 or more name a pipe register instead (``\\t; |NAME``).  The tests recompute that
decision from the instruction text alone and compare with the file.
"""

from __future__ import annotations

import collections
import random
import re
from pathlib import Path

import pytest

from isaforge.afuc.regdb import VARIANTS, RegDB
from tests.refdata import refdata

# (refdata path, variant)
ASM_FILES = [
    (("afuc", "disasm", "a530_pfp.asm"), "A5XX"),
    (("afuc", "disasm", "a530_pm4.asm"), "A5XX"),
    (("afuc", "disasm", "a630_sqe.asm"), "A6XX"),
    (("afuc", "mesa-tests", "reference", "afuc_test.asm"), "A6XX"),
    (("afuc", "mesa-tests", "reference", "afuc_test_a7xx.asm"), "A7XX"),
]
VERBOSE_FILES = [
    (("afuc", "disasm", "a530_pfp.verbose.txt"), "A5XX"),
    (("afuc", "disasm", "a530_pm4.verbose.txt"), "A5XX"),
    (("afuc", "disasm", "a630_sqe.verbose.txt"), "A6XX"),
]


def _ids(files):
    return [p[-1] for p, _ in files]


# Instructions whose immediate is an RIMMED field (afuc.xml): the #alu-2src-immed and
# #alu-2src-immed12 families, and movi.  (not/branch/load/store/preincrement immediates are
# plain IMMED fields and never get a register comment.)
ALU_IMM_OPS = "add|addhi|sub|subhi|and|or|xor|shl|ushr|ishr|rot|mul8|min|max|cmp|bic"
PREFIXES = re.compile(r"^(?:\((?:rep|peek|xmov[1-3]|sds[1-3])\))*")
MOVI_RE = re.compile(r"^mov (\$\w+), 0x([0-9a-f]+)(?: << (\d+))?$")
ALUI_RE = re.compile(r"^(?:" + ALU_IMM_OPS + r") (\$\w+), \$\w+, 0x([0-9a-f]+)$")
LITERAL_RE = re.compile(r"^\[([0-9a-f]{8})\]$")


def expected_comment(db: RegDB, dst: str | None, value: int, shift: int) -> str | None:
    """What afuc-disasm prints after an RIMMED instruction (or a literal, dst None)."""
    v = (value << shift) & 0xFFFFFFFF
    if dst == "$addr" and shift >= 16:
        v &= ~0x40000
        if v & 0x00FFFFFF:
            return None
        name = db.pipe_reg_name(v >> 24)
        return f"|{name}" if name is not None else f"0x{v >> 24:03x}"
    if v < 0x100:
        return None
    return db.gpu_reg_name(v)


def _scan(path: Path, db: RegDB):
    """Yield (lineno, line, printed comment or None, expected comment or None) for every
    line whose comment the register database decides; also check that no other line
    carries a comment."""
    in_jumptbl_tail = False
    for lineno, line in enumerate(path.read_text().splitlines(), 1):
        if line.startswith(";") or not line.strip():
            continue
        text, sep, comment = line.partition("\t; ")
        printed = comment if sep else None
        if text == ".jumptbl":
            in_jumptbl_tail = True  # raw words after the jump table get no comment
            continue
        if text.startswith(".section"):
            in_jumptbl_tail = False
            continue
        body = PREFIXES.sub("", text)
        if m := MOVI_RE.match(body):
            exp = expected_comment(db, m.group(1), int(m.group(2), 16), int(m.group(3) or 0))
        elif m := ALUI_RE.match(body):
            exp = expected_comment(db, m.group(1), int(m.group(2), 16), 0)
        elif (m := LITERAL_RE.match(body)) and not in_jumptbl_tail:
            exp = expected_comment(db, None, int(m.group(1), 16), 0)
        else:
            assert printed is None, f"{path.name}:{lineno}: unexpected comment: {line!r}"
            continue
        yield lineno, line, printed, exp


@pytest.mark.parametrize(("parts", "variant"), ASM_FILES, ids=_ids(ASM_FILES))
def test_gpu_register_comments_match_mesa(parts, variant):
    path = refdata(*parts)
    db = RegDB.for_variant(variant)
    checked = named = 0
    failures = []
    for lineno, line, printed, exp in _scan(path, db):
        checked += 1
        named += printed is not None
        if printed != exp:
            failures.append(f"{path.name}:{lineno}: {line!r}: expected {exp!r}")
    assert not failures, "\n".join(failures[:30]) + f"\n({len(failures)} mismatches)"
    assert checked > 0 and named > 0


def test_reference_line_counts():
    """Every printed register comment in the five files is one the scan decides."""
    total_checked = total_named = 0
    for parts, variant in ASM_FILES:
        path = refdata(*parts)
        rows = list(_scan(path, RegDB.for_variant(variant)))
        n_comments = sum(1 for ln in path.read_text().splitlines() if "\t; " in ln)
        assert sum(p is not None for _, _, p, _ in rows) == n_comments
        total_checked += len(rows)
        total_named += n_comments
    assert total_named == 156 + 543 + 551 + 4 + 4
    assert total_checked > 3000


def _verbose_rows(path: Path):
    for line in path.read_text().splitlines():
        m = re.match(r"^\t([0-9a-f]{4}): ([0-9a-f]{8})  (.*)$", line)
        if m:
            yield int(m.group(2), 16), m.group(3).partition("\t; ")[0]


CTRL_RE = re.compile(r"(cwrite|cread|swrite|sread) [^\[]*\[\$\w+ \+ ([^\]]+)\](!?)")


@pytest.mark.parametrize(("parts", "variant"), VERBOSE_FILES, ids=_ids(VERBOSE_FILES))
def test_control_and_sqe_names_against_instruction_words(parts, variant):
    """cwrite/cread print @NAME (or 0x%03x) for the low 12 bits of the word; swrite/sread
    print %NAME from the SQE domain."""
    db = RegDB.for_variant(variant)
    checked = 0
    for word, text in _verbose_rows(refdata(*parts)):
        m = CTRL_RE.search(text)
        if not m or m.group(3):  # pre-increment forms print a plain immediate
            continue
        off = word & 0xFFF
        sqe = m.group(1) in ("swrite", "sread")
        name = db.sqe_reg_name(off) if sqe else db.control_reg_name(off)
        sigil = "%" if sqe else "@"
        expected = f"{sigil}{name}" if name is not None else f"0x{off:03x}"
        assert m.group(2) == expected, f"{text!r} (word {word:08x})"
        if name is not None:
            assert (db.sqe_reg(name) if sqe else db.control_reg(name)) == off
        checked += 1
    assert checked > 10


@pytest.mark.parametrize(("parts", "variant"), ASM_FILES, ids=_ids(ASM_FILES))
def test_special_register_names_round_trip(parts, variant):
    db = RegDB.for_variant(variant)
    text = refdata(*parts).read_text()
    spaces = {
        "@": (db.control_reg, db.control_reg_name),
        "%": (db.sqe_reg, db.sqe_reg_name),
        "|": (db.pipe_reg, db.pipe_reg_name),
    }
    seen = set(re.findall(r"([@%|])([A-Za-z_][A-Za-z0-9_]*(?:\+0x[0-9a-f]+)?)", text))
    assert seen
    for sigil, name in seen:
        to_off, to_name = spaces[sigil]
        off = to_off(name)
        assert off is not None, f"{sigil}{name}"
        assert to_name(off) == name, f"{sigil}{name} -> {off:#x}"
        if "+" in name:  # also accept a decimal offset
            base, plus = name.split("+")
            assert to_off(f"{base}+{int(plus, 16)}") == off


def _sections(path: Path):
    """Split a disassembly into (BR, BV, LPAC) sections: lists of lines."""
    out = [[]]
    for line in path.read_text().splitlines():
        if line.startswith(".section"):
            out.append([])
        out[-1].append(line)
    return out


@pytest.mark.parametrize(("parts", "variant"), ASM_FILES, ids=_ids(ASM_FILES))
def test_pm4_packet_labels(parts, variant):
    """Each section labels all 128 jump-table entries: the packet name or UNKN<id>."""
    db = RegDB.for_variant(variant)
    expected = collections.Counter(db.pm4_packet_name(i) or f"UNKN{i}" for i in range(128))
    for section in _sections(refdata(*parts)):
        labels = [ln[:-1] for ln in section if re.fullmatch(r"[A-Z][A-Z0-9_]*:", ln)]
        assert collections.Counter(labels) == expected
        for label in labels:
            if label.startswith("UNKN"):
                assert db.pm4_packet_name(int(label[4:])) is None
                continue
            pid = db.pm4_packet_id(label)
            assert pid is not None and db.pm4_packet_name(pid) == label


@pytest.mark.parametrize("name", ["a530_pfp.verbose.txt", "a530_pm4.verbose.txt"])
def test_pm4_ids_against_a5xx_jump_table(name):
    """Verbose a5xx output lists 'id hex: offset ; NAME' for ids 0..0x7e."""
    db = RegDB.for_variant("A5XX")
    rows = re.findall(
        r"^\s*(\d+) ([0-9a-f]{2}): [0-9a-f]{4}   ; (\w+)$",
        refdata("afuc", "disasm", name).read_text(),
        re.M,
    )
    assert len(rows) == 0x7F
    for dec, hx, label in rows:
        assert int(dec) == int(hx, 16)
        assert (db.pm4_packet_name(int(dec)) or f"UNKN{dec}") == label


def test_pm4_variants():
    a5, a6, a7 = (RegDB.for_variant(v) for v in ("A5XX", "A6XX", "A7XX"))
    assert a6.pm4_packet_name(0x14) == "CP_WAIT_MEM_GTE"
    assert a7.pm4_packet_name(0x14) == "CP_WAIT_TIMESTAMP"
    assert a5.pm4_packet_name(0x1C) == "CP_PREEMPT_ENABLE"
    assert a6.pm4_packet_name(0x2F) == "CP_SET_BIN_DATA5"
    assert a6.pm4_packet_id("CP_ME_INIT") == 0x48
    assert a7.pm4_packet_id("CP_WAIT_TIMESTAMP") == 0x14
    # a name from another generation still resolves (Mesa's assembler ignores variants)
    assert a7.pm4_packet_id("CP_WAIT_MEM_GTE") == 0x14
    assert a6.pm4_packet_id("NOT_A_PACKET") is None


def _tsv(parts):
    lines = refdata(*parts).read_text().splitlines()
    header = lines[0].split("\t")
    return [dict(zip(header, ln.split("\t"), strict=True)) for ln in lines[1:] if ln]


def _tsv_variant_ok(spec: str, variant: str) -> bool:
    """The simple variant specs used in pm4_packets.tsv: '', 'AnXX', 'AnXX-', 'AnXX-AmXX'."""
    order = ["A2XX", "A3XX", "A4XX", "A5XX", "A6XX", "A7XX"]
    if not spec:
        return True
    lo, dash, hi = spec.partition("-")
    i = order.index(variant)
    if not dash:
        return variant == lo
    return order.index(lo) <= i <= (order.index(hi) if hi else len(order) - 1)


def test_pm4_table_matches_converted_tsv():
    rows = _tsv(("afuc", "pm4_packets.tsv"))
    assert rows
    for variant in VARIANTS:
        db = RegDB.for_variant(variant)
        by_id: dict[int, str] = {}
        for row in rows:
            value = int(row["value_hex"], 16)
            if _tsv_variant_ok(row["variants"], variant):
                by_id.setdefault(value, row["name"])
            assert db.pm4_packet_id(row["name"]) == value
        for pid in range(256):
            assert db.pm4_packet_name(pid) == by_id.get(pid), (variant, hex(pid))


def test_special_domains_match_converted_tsv():
    dom_variant = {
        "A5XX_CONTROL_REG": ("A5XX", None),
        "A6XX_CONTROL_REG": ("A6XX", None),
        "A7XX_CONTROL_REG": ("A7XX", None),
        "A7XX_GEN3_CONTROL_REG": ("A7XX", "A7XX_GEN3_CONTROL_REG"),
        "A6XX_SQE_REG": ("A6XX", None),
        "A5XX_PIPE_REG": ("A5XX", None),
        "A6XX_PIPE_REG": ("A6XX", None),
        "A7XX_PIPE_REG": ("A7XX", None),
    }
    rows = _tsv(("afuc", "control_sqe_pipe_regs.tsv"))
    per_domain = collections.Counter()
    for row in rows:
        variant, ctrl = dom_variant[row["domain"]]
        db = RegDB.for_variant(variant, ctrl)
        kind = row["domain"].split("_")[-2]  # CONTROL / SQE / PIPE
        to_name, to_off = {
            "CONTROL": (db.control_reg_name, db.control_reg),
            "SQE": (db.sqe_reg_name, db.sqe_reg),
            "PIPE": (db.pipe_reg_name, db.pipe_reg),
        }[kind]
        off = int(row["offset_hex"], 16)
        assert to_name(off) == row["name"]
        assert to_off(row["name"]) == off
        if row["size"] == "reg64":
            assert to_name(off + 1) == row["name"] + "+0x1"
            assert to_off(row["name"] + "+1") == off + 1
        if kind == "PIPE":
            assert db.pipe_reg_is_void(off) == (row["type"] == "void")
        per_domain[row["domain"]] += 1
    # nothing in the database that the converted table lacks
    for dom, n in per_domain.items():
        variant, ctrl = dom_variant[dom]
        db = RegDB.for_variant(variant, ctrl)
        space = {"CONTROL": db._control, "SQE": db._sqe, "PIPE": db._pipe}[dom.split("_")[-2]]
        plain = [name for name, _ in space._tables[0].values() if "+" not in name]
        assert len(plain) == n, dom


GPU_EXAMPLES = [
    ("A6XX", 0x883, "CP_SCRATCH[0].REG"),
    ("A5XX", 0xB7E, "CP_SCRATCH[0x6].REG"),
    ("A6XX", 0x8D0, "CP_PERFCTR_CP_SEL[0]+0"),
    ("A6XX", 0x460, "RBBM_PERFCTR_CCU[0x2]+0"),
    ("A6XX", 0x830, "CP_SQE_INSTR_BASE"),
    ("A6XX", 0x831, "CP_SQE_INSTR_BASE+0x1"),
    ("A5XX", 0x835, "CP_PFP_INSTR_BASE_LO"),
    ("A6XX", 0x8820, "RB_MRT[0].CONTROL"),
]


@pytest.mark.parametrize(("variant", "offset", "name"), GPU_EXAMPLES)
def test_gpu_examples(variant, offset, name):
    db = RegDB.for_variant(variant)
    assert db.gpu_reg_name(offset) == name
    assert db.gpu_reg(name) == offset


def test_gpu_name_forms_parse_back():
    db = RegDB.for_variant("A6XX")
    assert db.gpu_reg("CP_SCRATCH[6].REG") == db.gpu_reg("CP_SCRATCH[0x6].REG") == 0x889
    assert db.gpu_reg("CP_SCRATCH") == 0x883  # plain array name: its base, like Mesa
    assert db.gpu_reg("CP_PERFCTR_CP_SEL[3]") == 0x8D3
    assert db.gpu_reg("CP_SQE_INSTR_BASE+1") == 0x831
    assert db.gpu_reg("NO_SUCH_REGISTER") is None
    assert db.gpu_reg_name(0x42) is None or db.gpu_reg(db.gpu_reg_name(0x42)) == 0x42


def test_variant_filtering():
    a6, a7 = RegDB.for_variant("A6XX"), RegDB.for_variant("A7XX")
    # RBBM_PERFCTR_CP is at 0x400 on a6xx and at 0x300 on a7xx
    assert a6.gpu_reg_name(0x400) == "RBBM_PERFCTR_CP[0]+0"
    assert a7.gpu_reg_name(0x300) == "RBBM_PERFCTR_CP[0]+0"
    assert a6.gpu_reg("RBBM_PERFCTR_CP[0]+0") == 0x400
    assert a7.gpu_reg("RBBM_PERFCTR_CP[0]+0") == 0x300
    assert a7.gpu_reg("RBBM_PERFCTR_CP") == 0x300
    assert a6.gpu_reg("RBBM_PERFCTR_CP") == 0x400


def test_void_pipe_regs():
    a6 = RegDB.for_variant("A6XX")
    assert a6.pipe_reg_is_void(0x81)  # WFI_PEND_DECR
    assert not a6.pipe_reg_is_void(0xA0)  # NRT_ADDR
    assert not a6.pipe_reg_is_void(0xFF)


def test_instances_are_cached():
    assert RegDB.for_variant("A6XX") is RegDB.for_variant("A6XX")
    with pytest.raises(ValueError):
        RegDB.for_variant("A4XX")


@pytest.mark.parametrize("variant", VARIANTS)
def test_table_agrees_with_per_address_search(variant):
    """The precomputed tables and a direct first-match search give the same names, and
    every printed name parses back to its offset unless another offset prints the same."""
    db = RegDB.for_variant(variant)
    rng = random.Random(1234)
    for space in (db._gpu, db._control, db._sqe, db._pipe):
        table, complete = space._tables
        assert complete
        top = max(table, default=0) + 0x100
        addrs = set(rng.sample(range(top), min(top, 400))) | set(
            rng.sample(sorted(table), min(len(table), 400))
        )
        for a in addrs:
            direct = next((h for h in (nm.lookup(a) for nm in space.namers) if h is not None), None)
            assert space.hit(a) == direct, hex(a)
        counts = collections.Counter(name for name, _ in table.values())
        for a, (name, _ty) in table.items():
            if counts[name] == 1:
                assert space.offset(name) == a, (name, hex(a))


@pytest.mark.parametrize("variant", VARIANTS)
def test_plain_names_shortcut_agrees(variant, tmp_path, monkeypatch):
    """With the disk cache on, a plain name that is no register is answered from the cached
    name set (the assembler asks about ``b2``): every answer is the uncached lookup's."""
    from isaforge.afuc import datacache

    monkeypatch.setenv("ISAFORGE_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("ISAFORGE_NO_CACHE", raising=False)
    monkeypatch.setattr(datacache, "_enabled", True)
    plain = RegDB(variant)._gpu  # made anew: nothing computed before the cache is on
    assert plain._plain_names and list(tmp_path.iterdir())  # kept on disk
    again = RegDB(variant)._gpu
    assert again._plain_names == plain._plain_names  # (read back)
    monkeypatch.setattr(datacache, "_enabled", False)
    ref = RegDB(variant)._gpu
    ref.cache_name = None  # the lookups without the shortcut
    rng = random.Random(17)
    names = sorted(ref._by_name) + sorted(ref._top_level[1])
    names = rng.sample(names, min(len(names), 1500))
    probes = set(names)
    for n in names:
        probes.update({n.lower(), n + "_HI", n + "+0", n[:-1], n + "X", n.split("[")[0],
                       n.split("+")[0], n.split(".")[0]})
    probes.update(f"b{i}" for i in range(40))
    probes.update(["_", "x", "B2", "REG", "CP_ME_INIT", "a b", "0x10", "", " CP_ME_INIT "])
    n_short = 0
    for n in sorted(probes):
        got, want = again.offset(n), ref.offset(n)
        assert got == want, n
        n_short += n.isidentifier() and n not in again._plain_names
    assert n_short > 40  # the shortcut was taken
