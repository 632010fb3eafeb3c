#!/usr/bin/env python3
"""Generate the Blackhole Tensix tile's memory map and ``dev_msgs.h`` layout tables.

Usage::

    python tools/gen_tensix_tile.py [--wheel DIR] [--out DIR]

``--wheel`` is the unpacked ``ttnn`` wheel (the directory holding ``tt_metal/``; default
``../ttnn/wheel/ttnn`` next to the repository) and ``--out`` the package data directory
(default ``src/isaforge/tensix/tile/data``). Two files are written, deterministically:

``memmap.json``
    every number the tile model needs about where things are: the L1 map of
    ``dev_mem_map.h`` (``MEM_*``), the RISC-V address map and registers of ``tensix.h``
    (instruction push, PC buffers, mailboxes, configuration, MOP configuration, TDMA and debug
    registers, soft-reset bits), the NOC registers of ``noc_parameters.h``, the stream
    (overlay) registers of ``noc_overlay_parameters.h``, ``CFG_STATE_SIZE``, and from tt-llk
    the Dst window, the PC-buffer semaphore offset and the ``tensix_sync``/``mop_sync`` words.
``dev_msgs.json``
    the layout of the host/firmware messages of ``hostdev/dev_msgs.h`` (``mailboxes_t``, the
    launch and go messages, the subordinate sync word, ``core_info_msg_t``, ...): per struct
    its size and each field's offset, size, element count and type, plus the message
    constants (``RUN_MSG_*``, ``RUN_SYNC_MSG_*``, the processor indices, ...).

How: the headers are read as text to find which names exist (macros, struct members); their
values are then computed by the C++ compiler (``g++``, or ``$CXX``) from the same headers,
built as tt-metal builds its firmware (``FW_BUILD``, ``ARCH_BLACKHOLE``), so that every
``#define`` expression, ``sizeof`` and ``offsetof`` is evaluated exactly as the firmware's
compiler does. The host compiler's layout equals the RV32 (ilp32) one for these structs: they
hold only fixed-width integers, ``uint64_t`` is 8-byte aligned in both ABIs, and none holds a
pointer; ``tests/tensix/tile/test_tables.py`` checks the result against the DWARF layout of a
real firmware ELF.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

FORMAT_VERSION = 1
REPO = Path(__file__).resolve().parent.parent
DEFAULT_WHEEL = REPO.parent / "ttnn" / "wheel" / "ttnn"
DEFAULT_OUT = REPO / "src" / "isaforge" / "tensix" / "tile" / "data"

BH = "tt_metal/hw/inc/internal/tt-1xx/blackhole"
LLK = "tt_metal/tt-llk/tt_llk_blackhole/common/inc"
INCLUDES = ["tt_metal/hw/inc", BH, "tt_metal/hw/inc/internal/tt-1xx", f"{BH}/noc",
            "tt_metal/hostdevcommon/api"]
DEFINES = ["FW_BUILD", "TENSIX_FIRMWARE", "ARCH_BLACKHOLE"]
PROBE_HEADERS = ["hostdev/dev_msgs.h", "tensix.h", "cfg_defines.h", "noc_overlay_parameters.h"]

#: (group, header, regex of macro names): the object-like macros exported to memmap.json
MACRO_GROUPS = [
    ("dev_mem_map", f"{BH}/dev_mem_map.h",
     r"MEM_(?!.*(?:ERISC|ETH|DRISC|SYSENG|RETRAIN|CORR_CW|UNCORR_CW|DRAM_SIZE))\w+"),
    ("tensix", f"{BH}/tensix.h",
     r"(?:REGFILE_BASE|INSTRN_BUF_BASE|INSTRN_BUF_STRIDE|PC\d?_BUF_BASE|TENSIX_\w+_BASE"
     r"|RISCV_TDMA_REG\w+|RISCV_DEBUG_REG\w+|RISCV_SOFT_RESET_0_\w+|RISC_PIC_BASE|MAX_THREADS)"),
    ("cfg", f"{BH}/cfg_defines.h", r"(?:CFG_STATE_SIZE|THD_STATE_SIZE)"),
    ("noc", f"{BH}/noc/noc_parameters.h",
     r"(?:NUM_NOCS|NOC_REGS_START_ADDR|NOC_CMD_BUF_OFFSET|NOC_INSTANCE_OFFSET|NOC_TARG_\w+"
     r"|NOC_RET_\w+|NOC_PACKET_TAG|NOC_CTRL|NOC_AT_LEN_BE\w*|NOC_AT_DATA|NOC_BRCST_EXCLUDE"
     r"|NOC_L1_ACC_AT_INSTRN|NOC_SEC_CTRL|NOC_CMD_CTRL|NOC_NODE_ID|NOC_ENDPOINT_ID"
     r"|NUM_MEM_PARITY_ERR|NUM_HEADER_\w+_ERR|ECC_CTRL|NOC_CLEAR_OUTSTANDING_REQ_CNT"
     r"|CMD_BUF_AVAIL|CMD_BUF_OVFL|NIU_CFG_0\w*|ROUTER_CFG_\d|NOC_ID_LOGICAL"
     r"|NOC_[XY]_ID_TRANSLATE_TABLE_\d|NIU_MST_\w+|NIU_SLV_\w+|NOC_ADDR_NODE_ID_BITS"
     r"|NOC_ADDR_LOCAL_BITS|MEMORY_SHUTDOWN_CONTROL|NOC_ID_TRANSLATE_\w+_MASK"
     r"|DDR_COORD_TRANSLATE_TABLE_\d|DEBUG_COUNTER_RESET|NIU_TRANS_COUNT_RTZ_\w+)"),
    ("stream", f"{BH}/noc/noc_overlay_parameters.h",
     r"(?:NOC_OVERLAY_START_ADDR|NOC_STREAM_REG_SPACE_SIZE|NOC_NUM_STREAMS|STREAM_\w+_REG_INDEX)"),
]

#: (group, name, C expression): values of function-like macros the tile needs
EXPRESSIONS = [
    ("noc", "NOC_CFG_BASE", "NOC_CFG(0)"),  # the NIU/router configuration registers
    ("noc", "NOC_STATUS_BASE", "NOC_STATUS(0)"),  # the NIU status counters
]

#: structs of dev_msgs.h (and the one union of core_config.h it uses) exported to dev_msgs.json
STRUCTS = ["mailboxes_t", "launch_msg_t", "kernel_config_msg_t", "go_msg_t",
           "subordinate_map_t", "subordinate_sync_msg_t", "ncrisc_halt_msg_t", "rta_offset_t",
           "core_info_msg_t",
           "addressable_core_t", "watcher_msg_t", "debug_waypoint_msg_t",
           "debug_sanitize_addr_msg_t", "debug_assert_msg_t", "debug_pause_msg_t",
           "debug_stack_usage_t", "debug_insert_delays_msg_t", "profiler_msg_t"]

#: constants of dev_msgs.h / core_config.h (C++ expressions) exported to dev_msgs.json
CONSTANTS = {
    **{n: n for n in ("RUN_MSG_INIT", "RUN_MSG_GO", "RUN_MSG_RESET_READ_PTR",
                      "RUN_MSG_RESET_READ_PTR_FROM_HOST", "RUN_MSG_REPLAY_TRACE", "RUN_MSG_DONE",
                      "RUN_SYNC_MSG_INIT", "RUN_SYNC_MSG_GO", "RUN_SYNC_MSG_LOAD",
                      "RUN_SYNC_MSG_WAITING_FOR_RESET", "RUN_SYNC_MSG_INIT_SYNC_REGISTERS",
                      "RUN_SYNC_MSG_DONE", "RUN_SYNC_MSG_ALL_GO", "RUN_SYNC_MSG_ALL_INIT",
                      "RUN_SYNC_MSG_ALL_SUBORDINATES_DONE", "launch_msg_buffer_num_entries",
                      "go_message_num_entries", "MaxProcessorsPerCoreType",
                      "MaxDMProcessorsPerCoreType", "MaxNumKernels", "PROCESSOR_COUNT",
                      "DISPATCH_MODE_DEV", "DISPATCH_MODE_HOST", "DISPATCH_ENABLE_FLAG_PRELOAD",
                      "WatcherDisabled", "WatcherEnabled", "noc_size_x", "noc_size_y")},
    **{f"TensixProcessorTypes_{n}": f"TensixProcessorTypes::{n}"
       for n in ("DM0", "DM1", "MATH0", "MATH1", "MATH2", "COUNT")},
    **{f"ProgrammableCoreType_{n}": f"ProgrammableCoreType::{n}"
       for n in ("TENSIX", "ACTIVE_ETH", "IDLE_ETH", "DRAM", "COUNT")},
    "CoreMagicNumber_WORKER": "CoreMagicNumber::WORKER",
}

SCALARS = {"uint8_t", "int8_t", "uint16_t", "int16_t", "uint32_t", "int32_t", "uint64_t",
           "int64_t", "bool", "std::atomic<bool>", "AddressableCoreType", "CoreMagicNumber",
           "dispatch_mode", "noc_mode"}


class GenError(Exception):
    pass


# --------------------------------------------------------------------------------------------
# Reading the headers as text
# --------------------------------------------------------------------------------------------


def strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def macro_names(path: Path, pattern: str) -> list[str]:
    """Object-like macros (no parameter list) whose name matches ``pattern``."""
    names = []
    rx = re.compile(r"^\s*#\s*define\s+(\w+)(\(?)", re.M)
    for m in rx.finditer(strip_comments(path.read_text())):
        name, paren = m.group(1), m.group(2)
        if not paren and re.fullmatch(pattern, name) and name not in names:
            names.append(name)
    return names


def struct_body(text: str, name: str) -> str:
    """The text between the braces of ``struct NAME {`` (or ``union NAME {``)."""
    m = re.search(rf"\b(?:struct|union)\s+{re.escape(name)}\s*\{{", text)
    if m is None:
        raise GenError(f"struct {name} not found")
    depth, i = 1, m.end()
    start = i
    while depth:
        c = text[i]
        depth += c == "{"
        depth -= c == "}"
        i += 1
    return text[start:i - 1]


def members(body: str) -> list[tuple[str, str]]:
    """(type, name) of each member, anonymous unions and structs flattened; constants and
    static members skipped."""
    out: list[tuple[str, str]] = []
    depth, cur = 0, ""
    nested = ""
    for c in body:
        if c == "{":
            depth += 1
            if depth == 1:
                nested, cur = "", ""
                continue
        if c == "}":
            depth -= 1
            if depth == 0:
                out.extend(members(nested))
                cur = ""
                continue
        if depth:
            nested += c
            continue
        if c == ";":
            decl = " ".join(cur.split())
            cur = ""
            if not decl or decl.startswith(("static", "constexpr", "using", "#")):
                continue
            decl = re.sub(r"alignas\([^)]*\)\s*", "", decl)
            decl = re.sub(r"\b(volatile|struct|const)\b\s*", "", decl)
            decl = re.sub(r"\s*=.*$", "", decl)
            m = re.fullmatch(r"([\w:<>]+)\s+(\w+)(?:\s*\[[^\]]*\])?", decl.strip())
            if m is None:
                raise GenError(f"cannot read member declaration {decl!r}")
            out.append((m.group(1), m.group(2)))
        else:
            cur += c
    return out


# --------------------------------------------------------------------------------------------
# Computing values with the compiler
# --------------------------------------------------------------------------------------------


def compile_and_run(wheel: Path, lines: list[str]) -> list[str]:
    cxx = os.environ.get("CXX", "g++")
    src = ["#include <cstdio>", "#include <cstddef>"]
    src += [f'#include "{h}"' for h in PROBE_HEADERS]
    src += ["int main() {", *lines, "return 0; }"]
    with tempfile.TemporaryDirectory() as tmp:
        cc, exe = Path(tmp) / "probe.cc", Path(tmp) / "probe"
        cc.write_text("\n".join(src) + "\n")
        cmd = [cxx, "-std=c++17", "-w", *(f"-D{d}" for d in DEFINES),
               *(f"-I{wheel / i}" for i in INCLUDES), str(cc), "-o", str(exe)]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True)
        except FileNotFoundError:
            raise GenError(f"no C++ compiler ({cxx}); set $CXX") from None
        if r.returncode:
            raise GenError(f"the probe did not compile:\n{r.stderr[:4000]}")
        out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    return out.splitlines()


def evaluate(wheel: Path, exprs: dict[str, str], macros: bool = False) -> dict[str, int]:
    """Each expression's value; with ``macros``, names not defined in this configuration (a
    header's ``#if`` branch for another chip) are left out."""
    lines = []
    for k, v in exprs.items():
        line = f'printf("%s %llu\\n", "{k}", (unsigned long long)({v}));'
        lines += [f"#ifdef {v}", line, "#endif"] if macros else [line]
    values = {}
    for line in compile_and_run(wheel, lines):
        k, v = line.split()
        values[k] = int(v)
    return values


def layout(wheel: Path, header_text: str) -> dict:
    """Every exported struct: size and, per member, offset, size, count and type."""
    decls = {s: members(struct_body(header_text, s)) for s in STRUCTS}
    exprs: dict[str, str] = {}
    for s, mems in decls.items():
        exprs[f"{s}.__size__"] = f"sizeof({s})"
        for _, m in mems:
            exprs[f"{s}.{m}.offset"] = f"offsetof({s}, {m})"
            exprs[f"{s}.{m}.size"] = f"sizeof((({s}*)0)->{m})"
    vals = evaluate(wheel, exprs)
    out = {}
    for s, mems in decls.items():
        fields = {}
        for typ, m in mems:
            size = vals[f"{s}.{m}.size"]
            typ = typ.replace("std::", "")
            elem = _scalar_size(typ) if typ in SCALARS or typ.startswith("atomic") else None
            if elem is None and typ in decls:
                elem = vals[f"{typ}.__size__"]
            if elem is None:  # a struct we do not export (e.g. DevicePrintMemoryLayout)
                elem = size
                typ = f"opaque:{typ}"
            if size % elem:
                raise GenError(f"{s}.{m}: size {size} is not a multiple of its type's {elem}")
            fields[m] = {"offset": vals[f"{s}.{m}.offset"], "size": size, "count": size // elem,
                         "type": typ}
        out[s] = {"size": vals[f"{s}.__size__"], "fields": fields}
    return out


def _scalar_size(typ: str) -> int:
    sizes = {"uint8_t": 1, "int8_t": 1, "bool": 1, "atomic<bool>": 1, "AddressableCoreType": 1,
             "noc_mode": 1, "uint16_t": 2, "int16_t": 2, "uint32_t": 4, "int32_t": 4,
             "CoreMagicNumber": 4, "dispatch_mode": 4, "uint64_t": 8, "int64_t": 8}
    return sizes[typ]


# --------------------------------------------------------------------------------------------
# Facts read from tt-llk source text
# --------------------------------------------------------------------------------------------


def llk_facts(wheel: Path) -> dict[str, int]:
    llk = wheel / LLK
    facts = {}
    m = re.search(r"#define\s+RISCV_DEST_START_ADDR\s+(0x[0-9A-Fa-f]+)",
                  (llk / "ckernel_dest.h").read_text())
    if m is None:
        raise GenError("RISCV_DEST_START_ADDR not found in ckernel_dest.h")
    facts["RISCV_DEST_START_ADDR"] = int(m.group(1), 16)
    m = re.search(r"PC_BUF_SEMAPHORE_BASE\s*=\s*(\d+)", (llk / "ckernel_structs.h").read_text())
    if m is None:
        raise GenError("PC_BUF_SEMAPHORE_BASE not found in ckernel_structs.h")
    facts["PC_BUF_SEMAPHORE_BASE_WORD"] = int(m.group(1))
    text = (llk / "ckernel.h").read_text()
    for name in ("tensix_sync", "mop_sync"):
        m = re.search(rf"void\s+{name}\s*\(\)\s*\{{\s*store_blocking\(&pc_buf_base\[(\d+)\]", text)
        if m is None:
            raise GenError(f"{name}() not found in ckernel.h")
        facts[f"PC_BUF_{name.upper()}_WORD"] = int(m.group(1))
    m = re.search(r"mop_cfg\[8\]\s*=", (llk / "ckernel_template.h").read_text())
    if m is None:
        raise GenError("the nine MOP configuration words are not found in ckernel_template.h")
    facts["MOP_CFG_WORDS"] = 9
    return facts


# --------------------------------------------------------------------------------------------


def generate(wheel: Path) -> tuple[dict, dict]:
    if not (wheel / BH / "dev_mem_map.h").is_file():
        raise GenError(f"{wheel}: not an unpacked ttnn wheel (no {BH}/dev_mem_map.h)")
    exprs: dict[str, str] = {}
    groups: dict[str, list[str]] = {}
    for group, header, pattern in MACRO_GROUPS:
        names = macro_names(wheel / header, pattern)
        if not names:
            raise GenError(f"{header}: no macro matches {pattern}")
        groups[group] = names
        exprs.update({n: n for n in names})
    values = evaluate(wheel, exprs, macros=True)
    values.update(evaluate(wheel, {name: expr for _, name, expr in EXPRESSIONS}))
    for group, name, _ in EXPRESSIONS:
        groups[group].append(name)
    memmap: dict = {"format_version": FORMAT_VERSION,
                    "source": "ttnn 0.81.1 wheel: tt_metal/hw/inc (Blackhole) and tt-llk"}
    for group, names in groups.items():
        memmap[group] = {n: values[n] for n in sorted(names) if n in values}
    memmap["llk"] = llk_facts(wheel)

    text = strip_comments((wheel / "tt_metal/hw/inc/hostdev/dev_msgs.h").read_text())
    text += strip_comments((wheel / BH / "core_config.h").read_text())
    msgs: dict = {"format_version": FORMAT_VERSION,
                  "source": "ttnn 0.81.1 wheel: tt_metal/hw/inc/hostdev/dev_msgs.h (Blackhole)",
                  "mailbox_base": values["MEM_MAILBOX_BASE"]}
    msgs["constants"] = dict(sorted(evaluate(wheel, CONSTANTS).items()))
    msgs["structs"] = layout(wheel, text)
    return memmap, msgs


def dumps(data: dict) -> str:
    """JSON indented four levels deep (one struct field per line), deeper levels on one line."""
    def enc(v: object, level: int) -> str:
        if isinstance(v, dict) and level < 4:
            pad = "  " * (level + 1)
            items = [f"{pad}{json.dumps(k)}: {enc(x, level + 1)}" for k, x in v.items()]
            return "{\n" + ",\n".join(items) + "\n" + "  " * level + "}"
        return json.dumps(v)
    return enc(data, 0) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--wheel", type=Path, default=DEFAULT_WHEEL)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    try:
        memmap, msgs = generate(args.wheel)
    except (GenError, OSError) as e:
        print(f"gen_tensix_tile: error: {e}", file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "memmap.json").write_text(dumps(memmap))
    (args.out / "dev_msgs.json").write_text(dumps(msgs))
    print(f"wrote {args.out / 'memmap.json'} and {args.out / 'dev_msgs.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
