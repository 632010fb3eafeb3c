#!/usr/bin/env python3
"""Generate the bundled Blackhole Tensix instruction table from the upstream tt-llk data.

Usage::

    python tools/gen_tensix_isa.py [REFDATA_TENSIX_DIR] [OUTPUT]

REFDATA_TENSIX_DIR defaults to ``../shared/refdata/tensix`` (next to the repository) and
OUTPUT to ``src/isaforge/tensix/data/blackhole.json``. The output is deterministic (sorted,
fixed indentation), so re-running the script on the same inputs gives the same bytes.

Inputs:

* ``assembly_blackhole.yaml`` (tt-llk): the 137 instructions, their 8-bit opcodes and the
  start bit of each argument, in the order the YAML lists them;
* ``ckernel_ops_fields_blackhole.json`` (derived from tt-llk ``ckernel_ops.h``): the width of
  each argument (from the ``TT_*_VALID`` checks). Instructions without arguments are absent.

Corrections applied here (each is recorded in the output under ``notes``):

* on Blackhole the ``addr_mode`` field of MVMUL, ELWMUL, ELWADD and ELWSUB is 3 bits wide
  (bits 14..16), not the 5 that ``ckernel_ops.h`` checks; the freed bits 17..18 are reserved;
* argument names with spaces (GATESRCRST, XMOV) get underscores.

The objdump syntax of each instruction (what ``riscv-tt-elf-objdump`` prints) is also
recorded: Tensix instructions print as ``tt`` + the lower-case name without underscores,
their operands in decreasing bit order, in decimal; SFPU instructions print as ``sfp...``
with their own operand lists (``L`` registers, 12-bit immediates as ``0x%03X``, signed 16-bit
immediates), given by the table ``SFPU_SYNTAX`` below, which was worked out from the real
listings in the reference data and the published binutils test expectations. Operands the
objdump form does not show are recorded as ``implied`` values; a word whose hidden fields
hold other values is printed in the LLK macro form instead.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import yaml

FORMAT_VERSION = 1
REPO = Path(__file__).resolve().parent.parent
DEFAULT_REFDATA = REPO.parent / "shared" / "refdata" / "tensix"
DEFAULT_OUTPUT = REPO / "src" / "isaforge" / "tensix" / "data" / "blackhole.json"

#: name -> {field: (lsb, width)} corrections of the widths in ckernel_ops.h.
WIDTH_FIXES: dict[str, dict[str, tuple[int, int]]] = {
    name: {"addr_mode": (14, 3)} for name in ("MVMUL", "ELWMUL", "ELWADD", "ELWSUB")
}

# Operand formats of the objdump syntax: D decimal, S signed decimal, L an LReg ("L3"),
# L4 an LReg numbered from 4 ("L4".."L7"), X 12-bit hex as "0x%03X".
_DEST_C_IMM_MOD = [("lreg_dest", "L"), ("lreg_c", "L"), ("imm12_math", "X"), ("instr_mod1", "D")]
_DEST_C_MOD = [("lreg_dest", "L"), ("lreg_c", "L"), ("instr_mod1", "D")]
_DEST_C = [("lreg_dest", "L"), ("lreg_c", "L")]
_LOADSTORE = [("lreg_ind", "L"), ("dest_reg_addr", "D"), ("instr_mod0", "D"),
              ("sfpu_addr_mode", "D")]
_MAD = [("lreg_dest", "L"), ("lreg_src_a", "L"), ("lreg_src_b", "L"), ("lreg_src_c", "L"),
        ("instr_mod1", "D")]

#: SFPU instructions: objdump operand list (field, format) and implied values of hidden
#: fields other than 0.
SFPU_SYNTAX: dict[str, tuple[list[tuple[str, str]], dict[str, int]]] = {
    "SFPLOAD": (_LOADSTORE, {}),
    "SFPSTORE": (_LOADSTORE, {}),
    "SFPLOADI": ([("lreg_ind", "L"), ("imm16", "S"), ("instr_mod0", "D")], {}),
    "SFPLUT": ([("lreg_ind", "L"), ("instr_mod0", "D")], {}),
    "SFPMULI": ([("lreg_dest", "L"), ("imm16_math", "D"), ("instr_mod1", "D")], {}),
    "SFPADDI": ([("lreg_dest", "L"), ("imm16_math", "D"), ("instr_mod1", "D")], {}),
    "SFPDIVP2": (_DEST_C_IMM_MOD, {}),
    "SFPIADD": (_DEST_C_IMM_MOD, {}),
    "SFPSHFT": (_DEST_C_IMM_MOD, {}),
    "SFPSETEXP": (_DEST_C_IMM_MOD, {}),
    "SFPSETMAN": (_DEST_C_IMM_MOD, {}),
    "SFPSETSGN": (_DEST_C_IMM_MOD, {}),
    "SFPGT": (_DEST_C_IMM_MOD, {}),
    "SFPLE": (_DEST_C_IMM_MOD, {}),
    "SFPEXEXP": (_DEST_C_MOD, {}),
    "SFPEXMAN": (_DEST_C_MOD, {}),
    "SFPABS": (_DEST_C_MOD, {}),
    "SFPLZ": (_DEST_C_MOD, {}),
    "SFPMOV": (_DEST_C_MOD, {}),
    "SFPARECIP": (_DEST_C_MOD, {}),
    "SFPAND": (_DEST_C, {}),
    "SFPOR": (_DEST_C, {}),
    "SFPNOT": (_DEST_C, {}),
    "SFPXOR": (_DEST_C, {}),
    "SFPMAD": (_MAD, {}),
    "SFPADD": (_MAD, {}),
    "SFPMUL": (_MAD, {}),
    # binutils always encodes lreg_src_c = 9 (a hardware erratum makes SFPMUL24 read it)
    "SFPMUL24": ([("lreg_dest", "L"), ("lreg_src_a", "L"), ("lreg_src_b", "L"),
                  ("instr_mod1", "D")], {"lreg_src_c": 9}),
    "SFPENCC": ([("imm12_math", "X"), ("instr_mod1", "D")], {}),
    "SFPCOMPC": ([], {}),
    "SFPTRANSP": ([], {}),
    "SFPNOP": ([], {}),
    "SFPPUSHC": ([("instr_mod1", "D")], {}),
    "SFPPOPC": ([("instr_mod1", "D")], {}),
    "SFPSETCC": ([("lreg_c", "L"), ("imm12_math", "X"), ("instr_mod1", "D")], {}),
    "SFPCAST": ([("lreg_dest", "L"), ("lreg_src_c", "L"), ("instr_mod1", "D")], {}),
    "SFPSHFT2": ([("lreg_dest", "L"), ("lreg_src_c", "L"), ("imm12_math", "X"),
                  ("instr_mod1", "D")], {}),
    "SFPCONFIG": ([("config_dest", "D"), ("imm16_math", "D"), ("instr_mod1", "D")], {}),
    "SFPSWAP": ([("lreg_dest", "L"), ("lreg_src_c", "L"), ("instr_mod1", "D")], {}),
    "SFPLUTFP32": ([("lreg_dest", "L"), ("instr_mod1", "D")], {}),
    "SFP_STOCH_RND": ([("lreg_dest", "L"), ("lreg_src_b", "L"), ("lreg_src_c", "L"),
                       ("rnd_mode", "D"), ("instr_mod1", "D"), ("imm8_math", "D")], {}),
}


def _sfploadmacro_forms() -> list[dict[str, Any]]:
    """SFPLOADMACRO prints lreg_ind split in two (macro index, register) and takes the
    register's bit 2 from bit 0 of the Dst address: ``sfploadmacro 0,L7,1,0,0``."""
    views = [{"name": "macro_index", "lsb": 22, "width": 2},
             {"name": "vd_lo", "lsb": 20, "width": 2},
             {"name": "addr_b0", "lsb": 0, "width": 1}]
    forms = []
    for b0, reg in ((0, "L"), (1, "L4")):
        forms.append({
            "views": views,
            "operands": [{"field": "macro_index", "fmt": "D"}, {"field": "vd_lo", "fmt": reg},
                         {"field": "dest_reg_addr", "fmt": "D"},
                         {"field": "instr_mod0", "fmt": "D"},
                         {"field": "sfpu_addr_mode", "fmt": "D"}],
            "implied": {"addr_b0": b0},
        })
    return forms


def objdump_mnemonic(name: str) -> str:
    base = name.lower().replace("_", "")
    return base if name.startswith("SFP") else "tt" + base


def build(refdata: Path) -> dict[str, Any]:
    with open(refdata / "assembly_blackhole.yaml", encoding="utf-8") as f:
        upstream = yaml.safe_load(f)
    with open(refdata / "ckernel_ops_fields_blackhole.json", encoding="utf-8") as f:
        widths = {e["mnemonic"]: e for e in json.load(f)}

    out: list[dict[str, Any]] = []
    notes: list[str] = []
    for name, entry in upstream.items():
        opcode = int(entry["op_binary"])
        args = entry.get("arguments") or []
        jfields = {jf["lsb"]: jf for jf in widths.get(name, {}).get("fields", [])}
        fields = []
        for a in args:
            lsb = int(a["start_bit"])
            fname = str(a["name"]).strip().replace(" ", "_")
            jf = jfields.get(lsb)
            if jf is None:
                raise SystemExit(f"{name}.{fname}: no width for start bit {lsb}")
            width = int(jf["width"])
            if "end_bit" in a and int(a["end_bit"]) - lsb + 1 != width:
                notes.append(f"{name}.{fname}: YAML end_bit {a['end_bit']} disagrees with "
                             f"width {width}; the width is used")
            fix = WIDTH_FIXES.get(name, {}).get(fname)
            if fix is not None:
                notes.append(f"{name}.{fname}: width {width} -> {fix[1]} (Blackhole)")
                lsb, width = fix
            fields.append({"name": fname, "lsb": lsb, "width": width,
                           "type": str(a.get("field_type", "DEC"))})
        # sanity: inside bits 0..23, no overlap
        used = 0
        for fl in fields:
            mask = ((1 << fl["width"]) - 1) << fl["lsb"]
            if fl["lsb"] + fl["width"] > 24 or used & mask:
                raise SystemExit(f"{name}: field {fl['name']} overlaps or leaves bits 0..23")
            used |= mask
        fields.sort(key=lambda fl: -fl["lsb"])  # LLK macro argument order: high bits first
        names = [fl["name"] for fl in fields]

        if name == "SFPLOADMACRO":
            forms = _sfploadmacro_forms()
        else:
            if name in SFPU_SYNTAX:
                ops, implied_extra = SFPU_SYNTAX[name]
            elif name.startswith("SFP"):
                raise SystemExit(f"{name}: SFPU instruction without an objdump syntax")
            else:
                ops, implied_extra = [(n, "D") for n in names], {}
            shown = {f for f, _ in ops}
            for f in shown | set(implied_extra):
                if f not in names:
                    raise SystemExit(f"{name}: objdump syntax names unknown field {f}")
            implied = {n: 0 for n in names if n not in shown}
            implied.update(implied_extra)
            forms = [{"views": [], "operands": [{"field": f, "fmt": k} for f, k in ops],
                      "implied": implied}]
        out.append({
            "name": name,
            "opcode": opcode,
            "mnemonic": objdump_mnemonic(name),
            "fields": fields,
            "reserved_mask": ~used & 0xFFFFFF,
            "objdump": forms,
        })
    out.sort(key=lambda e: e["opcode"])
    return {
        "format": FORMAT_VERSION,
        "arch": "blackhole",
        "generated_by": "tools/gen_tensix_isa.py",
        "sources": ["tt-llk tt_llk_blackhole/instructions/assembly.yaml",
                    "tt-llk tt_llk_blackhole/common/inc/ckernel_ops.h (field widths)"],
        "notes": notes,
        "instructions": out,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("refdata", nargs="?", type=Path, default=DEFAULT_REFDATA)
    ap.add_argument("output", nargs="?", type=Path, default=DEFAULT_OUTPUT)
    ns = ap.parse_args(argv)
    data = build(ns.refdata)
    ns.output.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=1, sort_keys=False) + "\n"
    ns.output.write_text(text, encoding="utf-8")
    print(f"wrote {len(data['instructions'])} instructions to {ns.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
