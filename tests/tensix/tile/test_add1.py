"""tt-metal's add1 program from its real binaries: the listings converter, the host's launch,
and the result, bit for bit, on random and edge inputs (and on every BF16 value)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from isaforge.tensix.examples import Add1Device, ExampleError, add1_reference
from isaforge.tensix.tile import add1_build
from isaforge.tensix.tile.errors import TileDeadlock, TileStepLimit
from isaforge.tensix.tile.program import tilize, untilize
from tests.refdata import REPO, refdata

EDGE = np.array([0x0000, 0x8000, 0x0001, 0x8001, 0x007F, 0x807F, 0x0080, 0x8080,  # 0, subnormals
                 0x7F80, 0xFF80, 0x7FC0, 0xFFC0, 0x7F81, 0xFFFF,  # inf, nan
                 0x7F7F, 0xFF7F, 0x3F80, 0xBF80, 0xBF7F, 0x3F7F,  # max, +-1
                 0x4B80, 0xCB80, 0x4B00, 0x3380, 0xB380], dtype=np.uint16)


@pytest.fixture(scope="module")
def device() -> Add1Device:
    return Add1Device()


def _tiles(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = rng.integers(0, 1 << 16, size=(n, 32, 32), dtype=np.uint16)
    flat = t.reshape(-1)
    flat[rng.choice(flat.size, EDGE.size, replace=False)] = EDGE
    # ordinary numbers too (the random bits above are mostly huge or tiny)
    normal = np.asarray(rng.standard_normal(flat.size // 2) * 4, dtype=np.float32)
    flat[1::2] = (normal.view(np.uint32) >> 16).astype(np.uint16)
    return t


def test_regenerate_images_from_listings() -> None:
    listings = refdata("tensix", "tenstorrent-docs", "add1_sfpu_single_file")
    spec = importlib.util.spec_from_file_location("gen_tensix_add1",
                                                  REPO / "tools" / "gen_tensix_add1.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    text = gen.render(gen.build(listings))
    bundled = (REPO / "src" / "isaforge" / "tensix" / "tile" / "data" / "add1"
               / "add1.json").read_text("utf-8")
    assert text == bundled


def test_images_and_layout_agree_with_the_listings() -> None:
    t = add1_build.table()["images"]
    for core, base in add1_build.FW_BASE.items():
        assert t[f"firmware_{core}"]["base"] == base
    # the kernels were linked right after their firmware (tt-metal's old fixed layout)
    fw_end = t["firmware_brisc"]["base"] + len(t["firmware_brisc"]["words"]) // 2
    assert t["writer"]["base"] == fw_end
    msgs = add1_build.build_dev_msgs()
    assert msgs.addr("go_messages[0].signal") == 883          # sb zero,883(zero)
    assert msgs.addr("go_message_index") == 928               # lw 928(zero)
    assert msgs.addr("launch_msg_rd_ptr") == 108
    assert msgs.addr("launch[1].kernel_config.enables") == 0x70 + 96 + 76
    assert json.dumps(t["firmware_brisc"]["data"]) == json.dumps(
        {"vaddr": 0xFFB00000, "words": "00000068"})


def test_tilize_round_trip() -> None:
    a = np.arange(2 * 1024, dtype=np.uint16).reshape(2, 32, 32)
    t = tilize(a)
    assert t[0, 16] == a[0, 1, 0]           # a face's rows are 16 wide
    assert t[0, 256] == a[0, 0, 16]         # face 1 starts at column 16
    assert t[0, 512] == a[0, 16, 0]         # face 2 starts at row 16
    assert (untilize(t) == a).all()


@pytest.mark.parametrize("n", [1, 3])
def test_add1_bit_exact(device: Add1Device, n: int) -> None:
    x = _tiles(n, seed=n)
    y = device.add1(x)
    assert y.shape == x.shape and y.dtype == np.uint16
    np.testing.assert_array_equal(y, add1_reference(x))
    assert device.stats is not None and device.stats.noc["read"] == n
    assert device.stats.noc["write"] == n


def test_add1_every_bf16_value(device: Add1Device) -> None:
    x = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).reshape(64, 32, 32)
    y = device.add1(x)
    np.testing.assert_array_equal(y, add1_reference(x))


def test_reference_is_rounding_by_truncation() -> None:
    import ml_dtypes
    x = np.array([[0x3F81]], dtype=np.uint16)   # 1.0078125 + 1 = 2.0078125: halfway, RNE -> 2.0
    exact = x.view(ml_dtypes.bfloat16).astype(np.float32) + 1
    assert exact.astype(ml_dtypes.bfloat16).view(np.uint16)[0, 0] == 0x4000
    assert add1_reference(x)[0, 0] == 0x4000    # truncation gives the same here
    x = np.array([[0x3FFF]], dtype=np.uint16)   # 1.9921875 + 1 = 2.9921875 -> RNE 0x403f/0x4040
    assert add1_reference(x)[0, 0] == 0x403F    # truncated


def test_bad_input_is_refused(device: Add1Device) -> None:
    with pytest.raises(ExampleError, match="shape"):
        device.add1(np.zeros((32, 32), dtype=np.uint16))
    with pytest.raises(ExampleError, match="uint16"):
        device.add1(np.zeros((1, 32, 32), dtype=np.float32))


def test_a_core_that_never_finishes_is_reported() -> None:
    dev = Add1Device()
    with pytest.raises(TileStepLimit, match=r"brisc: pc 0x[0-9a-f]+ <.*>: running"):
        dev.add1(np.zeros((4, 32, 32), dtype=np.uint16), max_steps=300)


def test_a_writer_waiting_for_a_tile_that_never_comes_is_a_deadlock() -> None:
    dev = Add1Device()
    src, dst = dev.create_buffer(2), dev.create_buffer(3)
    ks, cbs = dev.program(src, dst, 2)
    ks["writer"].runtime_args = [dst.address, 3]     # one tile more than the others make
    dev.host.launch(ks.values(), cbs, add1_build.KERNEL_CONFIG_BASE)
    with pytest.raises(TileDeadlock, match=r"brisc: pc 0x[0-9a-f]+ <writer:_start\+0x[0-9a-f]+>"):
        dev.host.run_program()


def test_cli(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from isaforge.cli import main

    x = _tiles(2, seed=7)
    np.save(tmp_path / "in.npy", x)
    r = CliRunner().invoke(main, ["tensix", "example", "add1", "--input",
                                  str(tmp_path / "in.npy"), "--output",
                                  str(tmp_path / "out.npy"), "--stats"])
    assert r.exit_code == 0, r.output
    np.testing.assert_array_equal(np.load(tmp_path / "out.npy"), add1_reference(x))
    assert '"tiles": 2' in r.output
    np.save(tmp_path / "bad.npy", x.astype(np.int32))
    r = CliRunner().invoke(main, ["tensix", "example", "add1", "--input",
                                  str(tmp_path / "bad.npy"), "--output",
                                  str(tmp_path / "out.npy")])
    assert r.exit_code == 1
    assert r.output.strip().endswith("must be uint16 BF16 bits, not int32")
    assert "Traceback" not in r.output


def test_circular_buffers_that_overflow_are_refused(device: Add1Device) -> None:
    from isaforge.tensix.tile.errors import CircularBufferError
    from isaforge.tensix.tile.program import CircularBuffer

    src, dst = device.create_buffer(1), device.create_buffer(1)
    ks, _ = device.program(src, dst, 1)
    big = [CircularBuffer(0, 0x20000, 2, 2048), CircularBuffer(16, 0x20800, 2, 2048)]
    with pytest.raises(CircularBufferError, match="16 and 0 overlap"):
        device.host.launch(ks.values(), big, add1_build.KERNEL_CONFIG_BASE)
    past_l1 = [CircularBuffer(0, 0x17F000, 4, 2048)]
    with pytest.raises(CircularBufferError, match="not in free L1"):
        device.host.launch(ks.values(), past_l1, add1_build.KERNEL_CONFIG_BASE)
