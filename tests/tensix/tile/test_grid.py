"""The grid: Blackhole coordinates and the tables the firmware copies at boot, a grid booting
real firmware under different scheduling orders (identical bytes and counts), DRAM, and the
fabric's transactions and wake-ups between tiles."""

from __future__ import annotations

import hashlib

import pytest

from isaforge.tensix.tile import TileError
from isaforge.tensix.tile.grid import Grid, GridDeadlock, parse_grid
from isaforge.tensix.tile.loader import load_firmware_dir
from isaforge.tensix.tile.noc import NocFault
from isaforge.tensix.tile.soc import device_tables, noc_xy, soc
from tests.refdata import refdata
from tests.tensix.tile.test_scheduler import POLL, start

FW = ("tensix", "firmware", "bh-10503743232459396191")


def firmware():  # noqa: ANN201 - the loaded images
    return load_firmware_dir(refdata(*FW))


def test_worker_coordinates_follow_the_soc_descriptor() -> None:
    g = Grid(3, 2)
    assert [t.noc_virtual_xy for t in g.tiles] == [(1, 2), (2, 2), (3, 2), (1, 3), (2, 3),
                                                   (3, 3)]
    assert g.tile(2, 1).noc_virtual_xy == (3, 3)
    assert g.logical_xy(g.tiles[4]) == (1, 1)
    s = soc()
    assert s.worker_xy(7, 9) == (10, 11)  # columns 8 and 9 are DRAM and routers
    assert s.physical((1, 2), 1) == (15, 9)
    with pytest.raises(TileError, match="does not fit"):
        Grid(15, 1)
    with pytest.raises(TileError, match="no tile"):
        g.tile(3, 0)


def test_parse_grid_is_rows_by_columns() -> None:
    assert parse_grid("2x3") == (3, 2)
    with pytest.raises(TileError, match="ROWSxCOLS"):
        parse_grid("2by3")


def test_dram_coordinates_are_distinct_and_use_the_views_ports() -> None:
    s = soc()
    ports = {s.dram_port_xy(b, p) for b in range(8) for p in range(3)}
    assert len(ports) == 24
    assert {x for x, _ in ports} == {17, 18} and {y for _, y in ports} == set(range(12, 24))
    # bank 0's workers use port 2 on NOC 0 and port 1 on NOC 1 (dram_views of the yaml)
    assert s.dram_bank_xy(0, 0) == (17, 14) and s.dram_bank_xy(0, 1) == (17, 13)
    assert s.dram_bank_xy(1, 0) == (17, 15) and s.dram_bank_xy(4, 0) == (18, 14)


def test_the_firmware_copies_this_grids_tables() -> None:
    fw = firmware()
    g = Grid(2, 3)
    g.boot(fw)
    tables = device_tables(2, 3)
    syms = fw["brisc"].symbols
    for tile in (g.tiles[0], g.tiles[5]):
        local = tile.cores["brisc"].local.data
        base = tile.mm.local_base

        def word16(name: str, i: int, local=local, base=base) -> int:  # noqa: ANN001
            a = syms.addr(name) - base + 2 * i
            return int.from_bytes(local[a:a + 2].tobytes(), "little")
        nbanks = syms.size("dram_bank_to_noc_xy") // 4
        assert [word16("dram_bank_to_noc_xy", b) for b in range(8)] == [
            noc_xy(*soc().dram_bank_xy(b, 0)) for b in range(8)]
        assert word16("dram_bank_to_noc_xy", nbanks + 0) == noc_xy(17, 13)
        assert [word16("l1_bank_to_noc_xy", i) for i in range(7)] == [
            *tables.l1_bank_to_noc_xy[0], 0]
        assert tables.l1_bank_to_noc_xy[0][3] == noc_xy(2, 3)  # bank 3: worker (1, 1)
    x, y = 1, 2
    h = g.host(x, y)
    assert (h.read_mailbox("core_info.absolute_logical_x"),
            h.read_mailbox("core_info.absolute_logical_y")) == (x, y)
    assert (h.read_mailbox("core_info.worker_grid_size_x"),
            h.read_mailbox("core_info.worker_grid_size_y")) == (2, 3)


def _signature(g: Grid) -> tuple:
    return (g.scheduler.cycles,
            tuple(hashlib.sha256(t.l1.data.tobytes()).hexdigest() for t in g.tiles),
            tuple(hashlib.sha256(c.local.data.tobytes()).hexdigest()
                  for t in g.tiles for c in t.cores.values()),
            tuple((c.instructions, c.hart.pc, c.state) for t in g.tiles
                  for c in t.cores.values()))


def test_booting_a_grid_gives_the_same_bytes_and_counts_in_any_tile_order() -> None:
    fw = firmware()
    sigs = []
    for order in ("fixed", "reverse", 1, 2):
        g = Grid(2, 2, order=order)
        r = g.boot(fw)
        assert r.reason == "until" and g.all_done()
        for h in g.hosts:
            h.write_launch(0, enables=0, mode="host")
        g.go()
        assert g.all_done()
        sigs.append(_signature(g))
    assert all(s == sigs[0] for s in sigs[1:])
    # the tiles differ from each other (their core info), so equal hashes mean something
    assert len(set(sigs[0][1])) == 4


def test_dram_banks_answer_at_every_port() -> None:
    g = Grid(2, 1)
    noc = g.noc
    assert len(g.dram) == 8
    noc.at(soc().dram_bank_xy(5, 0)).noc_write(0x100, b"xyz")
    assert g.dram[5].noc_read(0x100, 3) == b"xyz"
    for port in range(3):
        assert noc.at(soc().dram_port_xy(5, port)).noc_read(0x100, 3) == b"xyz"
    assert g.dram[4].noc_read(0x100, 3) == bytes(3)


def test_wrong_coordinates_are_named() -> None:
    g = Grid(2, 1)
    noc = g.noc
    noc.at((2, 2)).noc_write(0x30000, b"abcd")
    assert g.tile(1, 0).l1.read(0x30000, 4) == b"abcd"
    assert g.tile(0, 0).l1.read(0x30000, 4) == bytes(4)
    with pytest.raises(NocFault, match=r"no NOC endpoint at \(3,2\).*at \(1,2\) \(2,2\)"):
        noc.at((3, 2))
    with pytest.raises(NocFault, match="outside L1"):
        noc.at((1, 2)).noc_read(0x17FFFE, 4)


def test_multicast_rectangles() -> None:
    g = Grid(3, 2)
    noc = g.noc

    def xys(eps: list) -> list:
        return [ep.tile.noc_virtual_xy for ep in eps]
    assert xys(noc.rectangle((3, 3), (1, 2))) == [(1, 2), (2, 2), (3, 2), (1, 3), (2, 3),
                                                  (3, 3)]
    assert xys(noc.rectangle((2, 3), (3, 3))) == [(2, 3), (3, 3)]
    with pytest.raises(NocFault, match=r"reaches \(4,2\)"):
        noc.rectangle((1, 2), (4, 2))
    with pytest.raises(NocFault, match="reaches no worker tile"):
        noc.rectangle((8, 2), (9, 5))  # the router and DRAM columns



def test_a_posted_write_from_another_tile_wakes_a_parked_poller_at_round_end() -> None:
    g = Grid(2, 1)
    dst = g.tile(1, 0)
    sig = dst.msgs.addr("go_messages[0].signal")  # a mailbox: polling it parks the core
    start(dst, "ncrisc", POLL, 0x20000, a0=sig, a1=0x30000)
    r = g.run(max_steps=100_000)
    assert r.reason == "idle" and dst.cores["ncrisc"].state == "parked"
    g.noc.post(g.tile(0, 0).grid_index, lambda: g.noc.at((2, 2)).noc_write(sig, b"\x80"))
    assert dst.l1.read_int(sig, 1) == 0  # posted: nothing happens before the round ends
    g.run(max_steps=100_000)
    assert dst.cores["ncrisc"].state == "halted" and dst.l1.read_int(0x30000, 4) == 0x80


def test_a_grid_deadlock_names_the_tile_core_and_pc() -> None:
    g = Grid(2, 1)
    dst = g.tile(1, 0)
    sig = dst.msgs.addr("go_messages[0].signal")
    start(dst, "brisc", POLL, 0x20000, a0=sig, a1=0x30000)
    with pytest.raises(GridDeadlock, match=r"tile \(1, 0\) brisc: pc 0x20004 "
                                           r"<brisc_test\+0x4>: polling"):
        g.run(max_steps=100_000, until=lambda: False)


def _invoke(*args: str):  # noqa: ANN202 - click's Result
    from click.testing import CliRunner

    from isaforge.cli import main
    return CliRunner().invoke(main, ["tensix", "boot", str(refdata(*FW)), *args])


def test_cli_boots_every_tile_of_a_grid() -> None:
    import json
    r = _invoke("--grid", "2x3", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["init_done"] and out["go_done"]
    assert sorted(out["tiles"]) == sorted(f"{x},{y}" for x in range(3) for y in range(2))
    assert all(c["instructions"] > 0 for t in out["tiles"].values() for c in t.values())
    r = _invoke("--grid", "1x2")
    assert r.exit_code == 0 and "tile (1, 0):" in r.output and "go handshake: done" in r.output


@pytest.mark.parametrize("grid,msg", [("11x2", "11 rows x 2 columns does not fit"),
                                      ("2by2", "expected ROWSxCOLS"), ("0x2", "at least")])
def test_cli_bad_grid_is_one_line_and_status_1(grid: str, msg: str) -> None:
    r = _invoke("--grid", grid)
    assert r.exit_code == 1
    assert msg in r.output and r.output.count("\n") == 1 and "Traceback" not in r.output


def test_a_grid_step_limit_names_the_busy_core() -> None:
    from isaforge.tensix.tile import TileStepLimit
    g = Grid(2, 1)
    start(g.tile(1, 0), "trisc1", "spin:\n    j spin\n", 0x20000)
    with pytest.raises(TileStepLimit, match=r"within 5000 RISC-V instructions.*"
                                            r"tile \(1, 0\) trisc1: pc 0x20000 <trisc1_test>: "
                                            r"running"):
        g.run(max_steps=5000)
