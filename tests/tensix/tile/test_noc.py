"""The NOC: command-buffer transactions between a tile's L1, DRAM banks and other tiles, and
the status counters the dataflow API's barriers poll."""

from __future__ import annotations

import pytest

from isaforge.tensix.tile import Tile
from isaforge.tensix.tile.errors import NocError
from isaforge.tensix.tile.memmap import memory_map
from isaforge.tensix.tile.noc import Noc

MM = memory_map()
n = MM.noc
INST = n("NOC_INSTANCE_OFFSET")
BUF = n("NOC_CMD_BUF_OFFSET")
DRAM = [(17, 12), (17, 13)]


def wr(tile: Tile, core: str, addr: int, value: int) -> None:
    w = tile.window_at(addr)
    assert w is not None
    tile.mmio_write(tile.cores[core], w, addr, 4, value)


def rd(tile: Tile, core: str, addr: int) -> int:
    w = tile.window_at(addr)
    assert w is not None
    return tile.mmio_read(tile.cores[core], w, addr, 4)


def status(tile: Tile, noc: int, name: str) -> int:
    return rd(tile, "brisc", n("NOC_STATUS_BASE") + noc * INST + 4 * n(name))


def issue(tile: Tile, noc: int, buf: int, ctrl: int, **regs: int) -> None:
    base = noc * INST + buf * BUF
    for name, value in regs.items():
        wr(tile, "brisc", n(name) + base, value)
    wr(tile, "brisc", n("NOC_CTRL") + base, ctrl)
    assert rd(tile, "brisc", n("NOC_CMD_CTRL") + base) == 0
    wr(tile, "brisc", n("NOC_CMD_CTRL") + base, 1)


def xy(x: int, y: int) -> int:
    return (y << 6) | x


@pytest.fixture
def fabric() -> tuple[Noc, Tile, Tile]:
    noc = Noc()
    noc.add_dram_banks(DRAM, size=1 << 33)
    a = Tile(noc_xy=(1, 2), noc=noc)
    b = Tile(noc_xy=(2, 2), noc=noc)
    return noc, a, b


def test_read_from_dram_counts_responses(fabric: tuple[Noc, Tile, Tile]) -> None:
    noc, a, _ = fabric
    noc.dram_banks[1].noc_write(0x1_0000_0040 & 0xFFFFFFFFF, bytes(range(64)))
    issue(a, 1, 1, 0, NOC_TARG_ADDR_LO=0x40, NOC_TARG_ADDR_MID=1, NOC_TARG_ADDR_HI=xy(17, 13),
          NOC_RET_ADDR_LO=0x20000, NOC_AT_LEN_BE=64)
    assert a.l1.read(0x20000, 64) == bytes(range(64))
    assert status(a, 1, "NIU_MST_RD_RESP_RECEIVED") == 1
    assert status(a, 0, "NIU_MST_RD_RESP_RECEIVED") == 0   # per NOC


def test_nonposted_and_posted_writes(fabric: tuple[Noc, Tile, Tile]) -> None:
    noc, a, b = fabric
    a.l1.write(0x30000, b"0123456789abcdef")
    issue(a, 0, 0, 0x2 | 0x10, NOC_TARG_ADDR_LO=0x30000, NOC_RET_ADDR_LO=0x100,
          NOC_RET_ADDR_HI=xy(17, 12), NOC_AT_LEN_BE=16)
    assert noc.dram_banks[0].noc_read(0x100, 16) == b"0123456789abcdef"
    issue(a, 0, 0, 0x2, NOC_TARG_ADDR_LO=0x30000, NOC_RET_ADDR_LO=0x40000,
          NOC_RET_ADDR_HI=xy(2, 2), NOC_AT_LEN_BE=8)
    assert b.l1.read(0x40000, 8) == b"01234567"
    assert status(a, 0, "NIU_MST_NONPOSTED_WR_REQ_SENT") == 1
    assert status(a, 0, "NIU_MST_WR_ACK_RECEIVED") == 1
    assert status(a, 0, "NIU_MST_POSTED_WR_REQ_SENT") == 1


def test_multicast_acks_per_destination(fabric: tuple[Noc, Tile, Tile]) -> None:
    _, a, b = fabric
    a.l1.write(0x30000, b"mcst")
    rect = xy(2, 2) | (xy(1, 2) << 12)   # end (2,2), start (1,2)
    issue(a, 0, 0, 0x2 | 0x10 | 0x20, NOC_TARG_ADDR_LO=0x30000, NOC_RET_ADDR_LO=0x50000,
          NOC_RET_ADDR_HI=rect, NOC_AT_LEN_BE=4)
    assert b.l1.read(0x50000, 4) == b"mcst"
    assert a.l1.read(0x50000, 4) == bytes(4)   # source excluded
    assert status(a, 0, "NIU_MST_WR_ACK_RECEIVED") == 1
    issue(a, 0, 0, 0x2 | 0x10 | 0x20 | (1 << 17), NOC_TARG_ADDR_LO=0x30000,
          NOC_RET_ADDR_LO=0x50000, NOC_RET_ADDR_HI=rect, NOC_AT_LEN_BE=4)
    assert a.l1.read(0x50000, 4) == b"mcst"
    assert status(a, 0, "NIU_MST_WR_ACK_RECEIVED") == 3


def test_semaphore_increment_and_inline_write(fabric: tuple[Noc, Tile, Tile]) -> None:
    _, a, b = fabric
    b.l1.write(0x60004, (5).to_bytes(4, "little"))
    at_len = (1 << 12) | (31 << 2) | 1   # INCR_GET, no wrap, word 1 of the 16-byte line
    issue(a, 0, 3, 0x1 | 0x10, NOC_TARG_ADDR_LO=0x60004, NOC_TARG_ADDR_HI=xy(2, 2),
          NOC_AT_LEN_BE=at_len, NOC_AT_DATA=3)
    assert b.l1.read_int(0x60004, 4) == 8
    assert status(a, 0, "NIU_MST_ATOMIC_RESP_RECEIVED") == 1
    issue(a, 0, 3, 0x2 | 0x8 | 0x10, NOC_TARG_ADDR_LO=0x60008, NOC_TARG_ADDR_HI=xy(2, 2),
          NOC_AT_LEN_BE=0xF << 8, NOC_AT_DATA=0xDEADBEEF)
    assert b.l1.read_int(0x60008, 4) == 0xDEADBEEF


def test_bad_address_names_the_core(fabric: tuple[Noc, Tile, Tile]) -> None:
    _, a, _ = fabric
    with pytest.raises(NocError, match=r"brisc pc .*tile \(2,2\) L1.*outside L1"):
        issue(a, 0, 0, 0x2, NOC_TARG_ADDR_LO=0, NOC_RET_ADDR_LO=0x17FFF0,
              NOC_RET_ADDR_HI=xy(2, 2), NOC_AT_LEN_BE=64)


def test_dram_bank_reads_and_writes_within_and_across_pages() -> None:
    """A DRAM bank's bytes (kept in pages, zero until written) are those of a flat model,
    for transfers inside one page and across page boundaries."""
    import random

    from isaforge.tensix.tile.noc import DramBank

    bank = DramBank(0, size=4 * DramBank.PAGE)
    flat = bytearray(4 * DramBank.PAGE)
    rng = random.Random(5)
    for _ in range(300):
        n = rng.choice([1, 4, 2048, 3000, DramBank.PAGE + 17])
        addr = rng.choice([rng.randrange(len(flat) - n), DramBank.PAGE - 5, 2 * DramBank.PAGE])
        if rng.random() < 0.5:
            data = bytes(rng.getrandbits(8) for _ in range(min(n, 64))) * (n // 64 + 1)
            bank.noc_write(addr, data[:n])
            flat[addr:addr + n] = data[:n]
        else:
            got = bank.noc_read(addr, n)
            assert type(got) is bytes and got == bytes(flat[addr:addr + n])
    assert bank.noc_read(0, len(flat)) == bytes(flat)
