#!/usr/bin/env python3
"""Rebuild tt-metal's add1 program (firmware and kernels) from its objdump listings.

Usage::

    python tools/gen_tensix_add1.py [--listings DIR] [--out FILE]

``--listings`` is ``tensix/tenstorrent-docs/add1_sfpu_single_file`` of the reference data
(default: next to the repository, ``../shared/refdata/...``); ``--out`` the bundled package
data (default ``src/isaforge/tensix/tile/data/add1/add1.json``).

The listings (``objdump -d``) hold every instruction word of the ``.text`` section of the five
firmware ELFs and of the five kernel ELFs (reader on NCRISC, writer on BRISC, compute on
TRISC0/1/2), built together by one tt-metal build. For each we keep the text as one
contiguous run of words at its link address (a gap in a listing is an error), and the names
of its functions and objects (labels not starting with ``.``). Kernels are taken from the
``.xip`` listings, the images tt-metal uploads (position independent: ``auipc``-relative).

What the listings do not carry (``.data``): see ``DATA`` below; every other section of these
ELFs is ``.bss`` (zeroed by the code itself) or not loaded.

The output is deterministic; ``tests/tensix/tile/test_add1.py`` regenerates it when the
reference data is present and compares bytes.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

FORMAT_VERSION = 1
REPO = Path(__file__).resolve().parent.parent
DEFAULT_LISTINGS = (REPO.parent / "shared" / "refdata" / "tensix" / "tenstorrent-docs"
                    / "add1_sfpu_single_file")
DEFAULT_OUT = REPO / "src" / "isaforge" / "tensix" / "tile" / "data" / "add1" / "add1.json"

#: image name -> (listing file, core)
IMAGES = {
    "firmware_brisc": ("firmware_brisc.objdump.txt", "brisc"),
    "firmware_ncrisc": ("firmware_ncrisc.objdump.txt", "ncrisc"),
    "firmware_trisc0": ("firmware_trisc0.objdump.txt", "trisc0"),
    "firmware_trisc1": ("firmware_trisc1.objdump.txt", "trisc1"),
    "firmware_trisc2": ("firmware_trisc2.objdump.txt", "trisc2"),
    "writer": ("writer_brisc.xip.objdump.txt", "brisc"),
    "reader": ("reader_ncrisc.xip.objdump.txt", "ncrisc"),
    "compute_trisc0": ("compute_trisc0.xip.objdump.txt", "trisc0"),
    "compute_trisc1": ("compute_trisc1.xip.objdump.txt", "trisc1"),
    "compute_trisc2": ("compute_trisc2.xip.objdump.txt", "trisc2"),
}

#: The ``.data`` the listings lack. Only BRISC's and NCRISC's firmware have any (one word at
#: the start of local memory, 0xffb00000; the TRISC firmware and all kernels have none: their
#: start-up copy loops run from ``__kernel_data_lma``/``__ldm_data`` over zero bytes, as the
#: listings' address arithmetic shows). That word is a pointer into the mailbox area:
#: BRISC's ``subordinate_sync`` (``&mailboxes->subordinate_sync``) and NCRISC's
#: ``ncrisc_run`` (``&mailboxes->subordinate_sync.dm1``), both ``MEM_MAILBOX_BASE + 8`` =
#: 0x68: the listing stores through it the subordinate sync bytes that the other firmware
#: reaches as ``105(zero)``..``107(zero)`` (0x69..0x6b), and the refdata ELFs of the same
#: firmware (ttnn 0.81.1) hold the same value in their 4-byte ``.data``.
DATA = {
    "firmware_brisc": {"vaddr": 0xFFB00000, "words": [0x68], "symbol": "_ZL16subordinate_sync"},
    "firmware_ncrisc": {"vaddr": 0xFFB00000, "words": [0x68], "symbol": "_ZL10ncrisc_run"},
}

_INSN = re.compile(r"^\s+([0-9a-f]+):\t([0-9a-f]{8})\s")
_LABEL = re.compile(r"^([0-9a-f]{8}) <([^>]+)>:$")


class ListingError(Exception):
    pass


def parse_listing(path: Path) -> tuple[int, list[int], list[tuple[int, str]]]:
    """(base address, words, [(address, symbol)]) of one ``objdump -d`` listing."""
    base = None
    words: list[int] = []
    symbols: list[tuple[int, str]] = []
    for n, line in enumerate(path.read_text("utf-8").splitlines(), 1):
        m = _INSN.match(line)
        if m:
            addr, word = int(m.group(1), 16), int(m.group(2), 16)
            if base is None:
                base = addr
            if addr != base + 4 * len(words):
                raise ListingError(f"{path}:{n}: word at {addr:#x} does not follow "
                                   f"{base + 4 * len(words) - 4:#x} (a gap)")
            words.append(word)
            continue
        m = _LABEL.match(line)
        if m and not m.group(2).startswith("."):
            symbols.append((int(m.group(1), 16), m.group(2)))
        if line.startswith("Disassembly of section") and ".text" not in line:
            raise ListingError(f"{path}:{n}: unexpected section ({line})")
    if base is None:
        raise ListingError(f"{path}: no instruction words")
    return base, words, symbols


def build(listings: Path) -> dict:
    images = {}
    for name, (fname, core) in IMAGES.items():
        base, words, symbols = parse_listing(listings / fname)
        entry: dict = {"core": core, "kind": "firmware" if name.startswith("firmware") else
                       "kernel", "listing": fname, "base": base,
                       "words": "".join(f"{w:08x}" for w in words),
                       "symbols": [[a, s] for a, s in symbols]}
        if name in DATA:
            d = DATA[name]
            entry["data"] = {"vaddr": d["vaddr"], "words": "".join(f"{w:08x}" for w in d["words"])}
            entry["symbols"].append([d["vaddr"], d["symbol"]])
        images[name] = entry
    return {"format_version": FORMAT_VERSION,
            "source": "tenstorrent-docs/add1_sfpu_single_file (objdump -d listings of tt-metal's "
                      "add1_sfpu_single_file example, Blackhole); .data reconstructed, see "
                      "tools/gen_tensix_add1.py",
            "images": images}


def render(table: dict) -> str:
    return json.dumps(table, indent=1, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--listings", type=Path, default=DEFAULT_LISTINGS)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    try:
        text = render(build(args.listings))
    except (OSError, ListingError) as e:
        print(f"gen_tensix_add1: error: {e}", file=sys.stderr)
        return 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
