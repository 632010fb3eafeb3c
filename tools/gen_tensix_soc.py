#!/usr/bin/env python3
"""Generate the Blackhole chip layout the tile grid needs from tt-metal's soc descriptor.

Usage::

    python tools/gen_tensix_soc.py [--wheel DIR] [--out DIR] [--check]

``--wheel`` is the unpacked ``ttnn`` wheel (the directory holding ``tt_metal/``; default
``../ttnn/wheel/ttnn`` next to the repository), ``--out`` the package data directory (default
``src/isaforge/tensix/tile/data``). It reads ``tt_metal/soc_descriptors/blackhole_140_arch.yaml``
and writes ``soc.json``: the NOC grid size, the worker tiles' NOC 0 coordinates (columns and
rows), each DRAM bank's NOC 0 port coordinates, which port a worker uses on each NOC
(``dram_views``' ``worker_endpoint``), the bank and L1 sizes. Deterministic output.
``--check`` writes nothing: it regenerates the table and exits 1 when the bundled ``soc.json``
differs (the test suite cannot do this: it never has the wheel, which is never downloaded in a
test).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
DEFAULT_WHEEL = REPO.parent / "ttnn" / "wheel" / "ttnn"
DEFAULT_OUT = REPO / "src" / "isaforge" / "tensix" / "tile" / "data"
SOC = "tt_metal/soc_descriptors/blackhole_140_arch.yaml"


def xy(text: str) -> list[int]:
    x, y = str(text).split("-")
    return [int(x), int(y)]


def generate(wheel: Path) -> dict:
    d = yaml.safe_load((wheel / SOC).read_text("utf-8"))
    workers = [xy(c) for c in d["functional_workers"]]
    views = sorted(d["dram_views"], key=lambda v: v["channel"])
    return {
        "source": SOC,
        "arch": d["arch_name"],
        "noc_size": [d["grid"]["x_size"], d["grid"]["y_size"]],
        "worker_columns": sorted({x for x, _ in workers}),
        "worker_rows": sorted({y for _, y in workers}),
        "dram_ports": [[xy(c) for c in bank] for bank in d["dram"]],
        "dram_worker_endpoint": [list(v["worker_endpoint"]) for v in views],
        "dram_address_offset": [int(v["address_offset"]) for v in views],
        "dram_bank_size": int(d["dram_bank_size"]),
        "worker_l1_size": int(d["worker_l1_size"]),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--wheel", type=Path, default=DEFAULT_WHEEL)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--check", action="store_true",
                    help="compare with the bundled soc.json instead of writing it")
    args = ap.parse_args()
    text = json.dumps(generate(args.wheel), indent=1) + "\n"
    out = args.out / "soc.json"
    if args.check:
        same = out.read_text("utf-8") == text
        print(f"{out}: {'matches' if same else 'DIFFERS from'} {args.wheel / SOC}")
        raise SystemExit(0 if same else 1)
    out.write_text(text, "utf-8")


if __name__ == "__main__":
    main()
