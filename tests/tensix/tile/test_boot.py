"""Booting the real Blackhole firmware end to end, and the ``isaforge tensix boot`` command."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from elftools.elf.elffile import ELFFile

from isaforge.cli import main
from isaforge.tensix.tile import Host, Tile, boot, load_firmware_dir
from isaforge.tensix.tile.memmap import CORE_NAMES, memory_map
from tests.refdata import refdata

BUILD = ("tensix", "firmware", "bh-10503743232459396191")


def build_dir() -> Path:
    return refdata(*BUILD, "brisc.elf").parent


@pytest.fixture(scope="module")
def booted() -> tuple[Tile, object]:
    tile = Tile()
    return tile, boot(build_dir(), tile=tile)


def test_both_handshakes_complete(booted) -> None:  # noqa: ANN001
    tile, r = booted
    assert r.init_done and r.go_done and r.ok and r.error is None
    done, init, go = (tile.msgs.const(n) for n in ("RUN_MSG_DONE", "RUN_MSG_INIT", "RUN_MSG_GO"))
    assert r.go_signals == [{"phase": "init", "sent": init, "seen": done},
                            {"phase": "go", "sent": go, "seen": done}]


def test_every_core_ran_its_firmware_and_waits_in_main(booted) -> None:  # noqa: ANN001
    tile, r = booted
    for name in CORE_NAMES:
        c = r.cores[name]
        assert c["instructions"] > 500, name
        assert c["symbol"].startswith("main+"), (name, c["symbol"])
        assert c["state"] == "parked"
    assert "go_messages[0].signal" in r.cores["brisc"]["waiting_for"]
    for name, byte in (("ncrisc", "dm1"), ("trisc0", "trisc0"), ("trisc2", "trisc2")):
        assert f"subordinate_sync.{byte}" in r.cores[name]["waiting_for"]


def test_brisc_set_the_others_reset_pcs_and_released_them(booted) -> None:  # noqa: ANN001
    tile, _ = booted
    mm = memory_map()
    for k in range(3):
        assert tile.debug.reg(f"TRISC{k}_RESET_PC") == mm.core(f"trisc{k}").fw_base
    assert tile.debug.reg("NCRISC_RESET_PC") == mm.core("ncrisc").fw_base
    assert tile.soft_reset & sum(mm.core(c).reset_bit for c in CORE_NAMES) == 0


def test_local_data_came_from_the_staged_image(booted) -> None:  # noqa: ANN001
    tile, _ = booted
    with (build_dir() / "brisc.elf").open("rb") as f:
        data = [s for s in ELFFile(f).iter_segments() if s["p_type"] == "PT_LOAD"][1].data()
    local = memory_map().local_base
    assert data and tile.cores["brisc"].local.read(local, len(data)) == data


def test_the_coprocessor_was_set_up_by_brisc(booted) -> None:  # noqa: ANN001
    tile, r = booted
    assert r.tensix_instructions == tile.cp.steps > 0
    assert (tile.cp.units.sfpu.lreg_const[0] == 0xBF800000).all()  # LReg11 = -1.0
    assert int((tile.cp.semaphores.max == 1).sum()) == 4  # initialize_tensix_semaphores


def test_trisc0_initialises_the_cb_sync_registers() -> None:
    """After the init handshake BRISC asks TRISC0 (RUN_SYNC_MSG_INIT_SYNC_REGISTERS) to zero
    every CB's received/acked stream registers: the stale values a host left go."""
    tile = Tile()
    host = Host(tile)
    fw = load_firmware_dir(build_dir())
    host.hold()
    host.load_firmware(fw)
    host.init_mailboxes(brisc=fw["brisc"])
    mm = memory_map()
    received = mm.stream("STREAM_REMOTE_DEST_BUF_SIZE_REG_INDEX")
    for cb in (0, 17, 63):
        tile.streams.values[(cb, received)] = 0x55
    host.release("brisc")
    tile.run(max_steps=1_000_000, until=lambda: host.go_signal() == 0)
    tile.run(max_steps=1_000_000)
    assert all(tile.streams.get(cb, "STREAM_REMOTE_DEST_BUF_SIZE") == 0 for cb in (0, 17, 63))


def test_boot_is_deterministic(booted) -> None:  # noqa: ANN001
    _, first = booted
    again = boot(build_dir())
    assert again.cores == first.cores and again.instructions == first.instructions


# -- the command ------------------------------------------------------------------------------

def invoke(*args: str) -> object:
    return CliRunner().invoke(main, ["tensix", "boot", *args])


def test_cli_json() -> None:
    r = invoke(str(build_dir()), "--json")
    assert r.exit_code == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["init_done"] is True and d["go_done"] is True
    assert set(d["cores"]) == set(CORE_NAMES)
    for c in d["cores"].values():
        assert {"instructions", "pc", "symbol", "state"} <= set(c)
        assert isinstance(c["pc"], int) and c["instructions"] > 0


def test_cli_human_report_and_trace() -> None:
    r = invoke(str(build_dir()), "--trace", "trisc1")
    assert r.exit_code == 0
    out = r.stdout.splitlines()
    assert out[0].startswith("trisc1  000070e0 <_start>")
    assert any(line.startswith("init handshake: done (go signal 0x40 -> 0x00)") for line in out)
    assert any(line.startswith("go handshake: done") for line in out)
    assert all(not line.startswith(("brisc ", "ncrisc ")) or "main+" in line for line in out)


def test_cli_step_limit_is_a_failed_boot() -> None:
    r = invoke(str(build_dir()), "--json", "--max-steps", "100")
    assert r.exit_code == 1
    d = json.loads(r.stdout)
    assert d["init_done"] is False and d["go_done"] is False
    assert "within 100 RISC-V instructions" in d["error"]


def copy_build(tmp_path: Path) -> Path:
    d = tmp_path / "fw"
    shutil.copytree(build_dir(), d)
    for f in d.iterdir():
        f.chmod(0o644)
    return d


@pytest.mark.parametrize("damage", ["truncate", "not_elf", "wormhole"])
def test_cli_bad_firmware_is_one_line_and_status_1(tmp_path: Path, damage: str) -> None:
    d = copy_build(tmp_path)
    elf = d / "trisc0.elf"
    raw = elf.read_bytes()
    if damage == "truncate":
        elf.write_bytes(raw[:1000])
    elif damage == "not_elf":
        elf.write_bytes(b"#!/bin/sh\necho hello\n")
    else:
        elf.write_bytes(raw.replace(b"xtttensixbh", b"xtttensixwh"))
    r = invoke(str(d), "--json")
    assert r.exit_code == 1 and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("isaforge: error: ") and "trisc0.elf" in lines[0]


def test_cli_missing_directory() -> None:
    r = invoke("/nonexistent/firmware")
    assert r.exit_code == 1 and "not a directory" in r.stderr
