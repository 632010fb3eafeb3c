"""The afuc disassembler: Mesa afuc-disasm compatible listings and a Capstone-style API.

Listing layout (what Mesa prints, which our assembler reads back):

* header ``; aNxx microcode`` and ``; Version: xxxxxxxx``;
* a5xx: every word from the version on, packet handlers named from the jump table whose
  offset is in dword 2; ``-v`` appends the jump table;
* a6xx/a7xx: the boot code is executed to learn the packet table it writes; the table's
  position in the image becomes ``[#jumptbl]`` / ``.jumptbl``; on a7xx the BV and LPAC images
  that follow are shown as ``.section BV`` / ``.section LPAC``;
* ``raw``: every dword of the file, no jump-table analysis.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..core.errors import EmulationError, FirmwareError
from ..core.isa import Branch, Instr, template_parts
from .firmware import Firmware, generation, load_firmware, parse_gpu
from .firmware import variant as variant_of
from .isa import REG_ADDR, isa_for, nop_literal
from .regdb import RegDB

if TYPE_CHECKING:
    from .machine import Processor

JUMPTABLE_SIZE = 0x80
PROC_SQE, PROC_BV, PROC_LPAC = "SQE", "BV", "LPAC"  # the images boot code is run for


@dataclass
class Instruction:
    """One decoded word, in the shape Capstone users know."""

    address: int  # index of the word in the image (from the version dword)
    word: int
    mnemonic: str  # "add", "mov", ... or "[literal]" for words that are not instructions
    op_str: str
    text: str  # the whole line as the listing prints it, without comments
    name: str | None = None  # the ISA entry (e.g. "addi"), None for literals
    fields: dict[str, int] = field(default_factory=dict)
    comment: str = ""

    @property
    def bytes(self) -> bytes:
        return self.word.to_bytes(4, "little")

    def __str__(self) -> str:
        return self.text


class _Ctx:
    """Formatting context: current pc, branch-target naming, register names."""

    def __init__(self, db: RegDB, num_instr: int) -> None:
        self.db = db
        self.num_instr = num_instr
        self.pc = 0
        self.branch_targets: set[int] = set()
        self.call_targets: set[int] = set()

    def branch_label(self, target: int, call: bool) -> str | None:
        if not 0 <= target < self.num_instr:
            return None
        if call:
            self.call_targets.add(target)
            return f"fxn{target}"
        self.branch_targets.add(target)
        return f"l{target}"

    def reg_name(self, space: str, value: int) -> str | None:
        if space == "control":
            return self.db.control_reg_name(value)
        if space == "sqe":
            return self.db.sqe_reg_name(value)
        return None


class Decoder:
    """Decodes and formats words of one generation, adding Mesa's register comments."""

    def __init__(self, gen: int, db: RegDB) -> None:
        self.gen = gen
        self.isa = isa_for(gen)
        self.db = db

    def line(self, word: int, ctx: _Ctx) -> tuple[Instr | None, dict[str, int], str, str]:
        """(instruction or None, fields, text, comment) of one word."""
        ins = self.isa.match(word)
        if ins is None:
            return None, {}, f"[{word:08x}]", self.gpu_comment(word)
        vals = ins.field_values(word)
        text = self.isa.format(ins, vals, ctx)
        comment = ""
        template, _ = ins.template_for(vals)
        shown = {t for k, t in template_parts(template) if k == "field"}
        if "RIMMED" in shown:
            shift = vals.get("SHIFT", 0) if "SHIFT" in shown else 0
            immed = (vals["RIMMED"] << shift) & 0xFFFFFFFF
            if "DST" in shown and vals["DST"] == REG_ADDR and shift >= 16:
                immed &= ~0x40000  # bit 18 only disables auto-increment
                if immed & 0x00FFFFFF == 0:
                    pipe = self.db.pipe_reg_name(immed >> 24)
                    comment = f"\t; |{pipe}" if pipe else f"\t; 0x{immed >> 24:03x}"
            else:
                comment = self.gpu_comment(immed)
        return ins, vals, text, comment

    def gpu_comment(self, value: int) -> str:
        if value < 0x100:
            return ""
        name = self.db.gpu_reg_name(value)
        return f"\t; {name}" if name else ""


def _prepass(dec: Decoder, words: list[int], num: int) -> _Ctx:
    ctx = _Ctx(dec.db, num)
    for n in range(num):
        ctx.pc = n
        ins = dec.isa.match(words[n])
        if ins is None:
            continue
        vals = ins.field_values(words[n])
        template, flds = ins.template_for(vals)
        for kind, name in template_parts(template):
            if kind == "field" and name != "NAME" and isinstance(flds[name].kind, Branch):
                f = flds[name]
                f.kind.format(vals[name], f.width, ctx)
    return ctx


def _listing(
    out: list[str],
    dec: Decoder,
    words: list[int],
    num: int,
    verbose: bool,
    entrypoints: Iterable[tuple[int, str]] = (),
    jumptbl_literal: int | None = None,
) -> None:
    """Append Mesa's listing of ``words[:num]`` (labels, entry points, comments) to ``out``."""
    ctx = _prepass(dec, words, num)
    eps = sorted(entrypoints, key=lambda e: (e[0], e[1].encode()))
    by_offset: dict[int, list[str]] = {}
    for off, name in eps:
        by_offset.setdefault(off, []).append(name)
    for n in range(num):
        word = words[n]
        prefix = f"\t{n:04x}: {word:08x}  " if verbose else ""
        here = by_offset.get(n, [])
        is_call = n in ctx.call_targets
        if (is_call or here) and n != 0:
            out.append(prefix + "\n")
        for name in here:
            out.append(f"{prefix}{name}:\n")
        if is_call:
            out.append(f"{prefix}fxn{n}:\n")
        if n in ctx.branch_targets:
            out.append(f"{prefix}l{n}:\n")
        ctx.pc = n
        ins, _, text, comment = dec.line(word, ctx)
        if ins is None and jumptbl_literal is not None and word == jumptbl_literal:
            out.append(prefix + "[#jumptbl]\n")
            continue
        out.append(f"{prefix}{text}{comment}\n")


def _packet_names(db: RegDB, table: list[int]) -> list[tuple[int, str]]:
    return [(off, db.pm4_packet_name(i) or f"UNKN{i}") for i, off in enumerate(table)]


def _find_table(words: list[int], size: int, table: list[int]) -> int | None:
    n = len(table)
    for i in range(0, size - n + 1):
        if words[i] == table[0] and words[i : i + n] == table:
            return i
    return None


def _boot(fw: Firmware, processor: str, offset: int) -> Processor:
    """Run the boot code of one image on the emulator's processor (see
    :func:`isaforge.afuc.emu.run_boot_code`) to learn the packet table it writes."""
    from .emu import run_boot_code  # the emulator (numpy) only when boot code runs

    try:
        core = run_boot_code(fw, processor, offset)
    except EmulationError as e:
        name, _, rest = e.message.partition(": ")
        msg = rest if name in ("SQE", "BR", "BV", "LPAC") else e.message
        raise FirmwareError(
            f"cannot find the packet table: the {processor} boot code did not reach waitin: "
            f"{msg}. The firmware id "
            f"{fw.fwid:03x} ({fw.gpu_name}) may be wrong for this file; try another with --gpu"
        ) from None
    return core


def jumptable_offset(fw: Firmware) -> int | None:
    """Where the packet table sits in the main image (what Mesa prints as ``[#jumptbl]``);
    None for a5xx or when the boot code cannot be run."""
    if fw.gen < 6:
        return None
    try:
        core = _boot(fw, PROC_SQE, 0)
    except FirmwareError:
        return None
    words = fw.words[1:]
    return _find_table(words, len(words), core.jmptbl)


def _gpu64(core: Processor, name: str) -> int:
    off = core.db.gpu_reg(name)
    return 0 if off is None else int(core.gpu[off]) | int(core.gpu[off + 1]) << 32


def _section(out: list[str], dec: Decoder, fw: Firmware, core: Processor, start: int, size: int,
             verbose: bool, align: bool) -> None:
    words = fw.words[1 + start : 1 + start + size]
    table = core.jmptbl
    offset = _find_table(words, size, table)
    num = size if offset is None else min(size, offset)
    literal = nop_literal(offset, dec.gen) if offset is not None and offset < 1 << 24 else None
    _listing(out, dec, words, num, verbose, _packet_names(dec.db, table), literal)
    if offset is not None:
        if align:
            out.append(".align 32\n")
        out.append("jumptbl:\n.jumptbl\n")
        for w in words[offset + JUMPTABLE_SIZE : size]:
            out.append(f"[{w:08x}]\n")


def listing(data: bytes, gpu: str | int | None = None, verbose: bool = False,
            raw: bool = False) -> str:
    """The text Mesa's ``afuc-disasm -u [-v] [-r]`` prints for a firmware image."""
    fw = load_firmware(data, gpu)
    db = RegDB.for_variant(fw.variant)
    dec = Decoder(fw.gen, db)
    out = [f"; a{fw.gen}xx microcode\n", f"; Version: {fw.version:08x}\n\n"]
    words = fw.words
    if raw:
        _listing(out, dec, words, len(words), verbose)
        return "".join(out)
    if fw.gen < 6:
        image = words[1:]
        start = image[1] & 0xFFFF
        table = image[start : start + JUMPTABLE_SIZE]
        table += [0] * (JUMPTABLE_SIZE - len(table))
        _listing(out, dec, image, len(image), verbose, _packet_names(db, table))
        if verbose:
            out.append(";;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;\n; JUMP TABLE\n")
            for i in range(0x7F):
                name = db.pm4_packet_name(i) or f"UNKN{i}"
                out.append(f"{i:3d} {i:02x}: {table[i]:04x}   ; {name}\n")
        return "".join(out)

    size = len(words) - 1
    core = _boot(fw, PROC_SQE, 0)
    bv = lpac = 0
    base = _gpu64(core, "CP_SQE_INSTR_BASE")
    if fw.gen >= 7:
        bv = ((core.ctrl64("BV_INSTR_BASE") - base) & 0xFFFFFFFFFFFFFFFF) // 4
        lpac = ((core.ctrl64("LPAC_INSTR_BASE") - base) & 0xFFFFFFFFFFFFFFFF) // 4
        main_size = min(bv, lpac)
    else:
        lpac_base = _gpu64(core, "CP_LPAC_SQE_INSTR_BASE")
        if lpac_base:
            lpac = ((lpac_base - base) & 0xFFFFFFFFFFFFFFFF) // 4
        main_size = lpac if lpac else size
    for name, off in (("BV", bv), ("LPAC", lpac)):
        if off and not 0 < off < size:
            raise FirmwareError(f"the boot code places the {name} image at dword {off}, outside "
                                f"the {size}-dword firmware; is the firmware id right (--gpu)?")
    _section(out, dec, fw, core, 0, main_size, verbose, fw.gen >= 7)
    if bv:
        out.append("\n.section BV\n;\n; BV microcode:\n;\n")
        bv_core = _boot(fw, PROC_BV, bv)
        _section(out, dec, fw, bv_core, bv, lpac - bv, verbose, True)
    if lpac:
        out.append("\n.section LPAC\n;\n; LPAC microcode:\n;\n")
        lpac_core = _boot(fw, PROC_LPAC, lpac)
        _section(out, dec, fw, lpac_core, lpac, size - lpac, verbose, False)
    return "".join(out)


def disassemble(data: bytes | Iterable[int], gpu: str | int | None = None,
                address: int = 0) -> list[Instruction]:
    """Decode a firmware image (bytes) or a sequence of instruction words.

    For bytes, the generation comes from the firmware id (or ``gpu``) and addresses count from
    the version dword, as in listings. For words, ``gpu`` is required.
    """
    if isinstance(data, (bytes, bytearray)):
        fw = load_firmware(bytes(data), gpu)
        words, gen, variant = fw.words[1:], fw.gen, fw.variant
    else:
        if gpu is None:
            raise FirmwareError("disassembling bare words needs gpu= (e.g. gpu='a630')")
        fwid = parse_gpu(gpu)
        words, gen, variant = list(data), generation(fwid), variant_of(fwid)
    dec = Decoder(gen, RegDB.for_variant(variant))
    ctx = _Ctx(dec.db, len(words))
    out = []
    for n, w in enumerate(words):
        ctx.pc = n
        ins, vals, text, comment = dec.line(w, ctx)
        if ins is None:
            out.append(Instruction(address + n, w, "[literal]", text, text, comment=comment))
            continue
        body = text
        for mod in ("(rep)", "(sds1)", "(sds2)", "(sds3)", "(xmov1)", "(xmov2)", "(xmov3)",
                    "(peek)"):
            body = body.replace(mod, "")
        mnem, _, ops = body.partition(" ")
        out.append(Instruction(address + n, w, mnem, ops, text, ins.name, vals, comment))
    return out


