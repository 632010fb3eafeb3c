#!/usr/bin/env python3
"""Generate the bundled Blackhole Tensix configuration-register table from ttsim's data.

Usage::

    python tools/gen_tensix_regs.py [TENSIX_REGS_JSON] [OUTPUT]

TENSIX_REGS_JSON defaults to ``../shared/refdata/tensix/ttsim/bh/tensix_regs.json`` (next to
the repository) and OUTPUT to ``src/isaforge/tensix/data/tensix_regs.json``.

The input has two sections: ``thread_cfg`` (the per-thread ``ThreadConfig`` registers that
``SETC16`` writes, indexed by register) and ``cfg`` (the thread-agnostic ``Config`` words that
``WRCFG``/``RDCFG``/``RMWCIB`` access, indexed by 32-bit word). Each register lists its named
fields as ``{shift, size, name}``. The output keeps exactly that information, as one flat
table per section, ``name -> [index, shift, size]``, sorted by name, so that the emulator can
read and write every field by name. The output is deterministic.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

FORMAT_VERSION = 1
REPO = Path(__file__).resolve().parent.parent
DEFAULT_INPUT = REPO.parent / "shared" / "refdata" / "tensix" / "ttsim" / "bh" / "tensix_regs.json"
DEFAULT_OUTPUT = REPO / "src" / "isaforge" / "tensix" / "data" / "tensix_regs.json"


def convert(raw: dict) -> dict:
    out: dict = {"format_version": FORMAT_VERSION,
                 "source": "tenstorrent/ttsim data/bh/tensix_regs.json"}
    for section, key in (("thread_cfg", "thread_config"), ("cfg", "config")):
        table: dict[str, list[int]] = {}
        for index, fields in raw[section].items():
            for f in fields:
                name = f["name"]
                if name in table:
                    raise SystemExit(f"{section}: field {name} defined twice")
                shift, size = int(f["shift"]), int(f["size"])
                if not (0 <= shift and 0 < size and shift + size <= 32):
                    raise SystemExit(f"{section}: field {name} has bad bits {shift}+{size}")
                table[name] = [int(index), shift, size]
        out[key] = dict(sorted(table.items()))
        out[key + "_registers"] = max(int(i) for i in raw[section]) + 1
    return out


def dumps(data: dict) -> str:
    """JSON with one field per line (small diffs when the input changes)."""
    lines = ["{"]
    items = list(data.items())
    for n, (key, value) in enumerate(items):
        comma = "," if n + 1 < len(items) else ""
        if isinstance(value, dict):
            lines.append(f" {json.dumps(key)}: {{")
            fields = list(value.items())
            for m, (name, v) in enumerate(fields):
                c = "," if m + 1 < len(fields) else ""
                lines.append(f"  {json.dumps(name)}: {json.dumps(v)}{c}")
            lines.append(f" }}{comma}")
        else:
            lines.append(f" {json.dumps(key)}: {json.dumps(value)}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("input", nargs="?", type=Path, default=DEFAULT_INPUT)
    ap.add_argument("output", nargs="?", type=Path, default=DEFAULT_OUTPUT)
    args = ap.parse_args(argv)
    data = convert(json.loads(args.input.read_text("utf-8")))
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(dumps(data), "utf-8")
    print(f"{args.output}: {len(data['thread_config'])} thread-config fields, "
          f"{len(data['config'])} config fields", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
