"""matmul from isaforge's own kernels (issue 15 item 5): bit for bit what the Matrix Unit model
gives for the same tiles, numpy within the fidelity's bound, the same result on a grid."""

from __future__ import annotations

import numpy as np
import pytest

from isaforge.tensix.matmul import ERROR_BOUND, k_block, matmul, matmul_reference
from isaforge.tensix.tile.errors import TileError
from isaforge.tensix.tile.layout import from_bf16_bits, to_bf16_bits

SPECIALS = np.array([0x0000, 0x8000, 0x0001, 0x807F, 0x7F80, 0xFF80, 0x7FC0, 0xFFC1, 0x7F7F,
                     0xFF7F, 0x0080, 0x3F80], np.uint16)


def _random(rng: np.random.Generator, m: int, k: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    return (to_bf16_bits(rng.standard_normal((m * 32, k * 32))),
            to_bf16_bits(rng.standard_normal((k * 32, n * 32))))


def _check_numpy(a: np.ndarray, b: np.ndarray, c: np.ndarray, fidelity: str) -> None:
    fa, fb = (from_bf16_bits(x).astype(np.float64) for x in (a, b))
    exact = fa @ fb
    scale = np.abs(fa) @ np.abs(fb)
    err = np.abs(from_bf16_bits(c) - exact)
    assert (err <= ERROR_BOUND[fidelity] * scale).all(), float((err / scale).max())


@pytest.mark.parametrize(("shape", "fidelity"), [((1, 1, 1), "hifi4"), ((2, 3, 2), "lofi"),
                                                 ((2, 3, 2), "hifi2"), ((1, 2, 1), "hifi3")])
def test_random_tiles_match_the_matrix_unit_and_numpy(shape: tuple[int, int, int],
                                                     fidelity: str) -> None:
    rng = np.random.default_rng(sum(shape) + len(fidelity))
    a, b = _random(rng, *shape)
    c, stats = matmul(a, b, fidelity)
    assert c.dtype == np.uint16 and c.shape == (shape[0] * 32, shape[2] * 32)
    np.testing.assert_array_equal(c, matmul_reference(a, b, fidelity))
    _check_numpy(a, b, c, fidelity)
    assert stats.tiles == shape[0] * shape[2]
    assert stats.riscv_instructions > 0
    # per output tile and k: 16 MVMULs per fidelity phase went through the Tensix threads
    assert stats.tensix_instructions > shape[0] * shape[1] * shape[2] * 16


def test_k_in_several_blocks_and_rows_of_a_shared_by_a_grid() -> None:
    """K = 18 tiles: two blocks of 9 along K; on 1x3 workers the second starts mid-row of A."""
    rng = np.random.default_rng(18)
    a, b = _random(rng, 2, 18, 2)
    c, stats = matmul(a, b, "lofi", (1, 3))
    np.testing.assert_array_equal(c, matmul_reference(a, b, "lofi"))
    _check_numpy(a, b, c, "lofi")
    assert [w["first"] for w in stats.per_worker] == [0, 1, 2]


def test_fidelity_changes_the_result() -> None:
    rng = np.random.default_rng(7)
    a, b = _random(rng, 1, 1, 1)
    lofi, _ = matmul(a, b, "lofi")
    hifi4, _ = matmul(a, b, "hifi4")
    assert (lofi != hifi4).any()
    _check_numpy(a, b, lofi, "lofi")


@pytest.mark.parametrize("fidelity", ["hifi4", "lofi"])
def test_edge_values_bit_exact(fidelity: str) -> None:
    """Subnormals, infinities, NaNs (with payloads), -0 and the largest finite values: the
    Matrix Unit has no IEEE special cases, and the kernels' result is still the model's."""
    rng = np.random.default_rng(5)
    a, b = _random(rng, 1, 2, 1)
    for x in (a, b):
        at = rng.integers(0, x.size, 40)
        x.flat[at] = SPECIALS[rng.integers(0, len(SPECIALS), 40)]
    c, _ = matmul(a, b, fidelity)
    np.testing.assert_array_equal(c, matmul_reference(a, b, fidelity))


def test_grid_splits_the_output_tiles_with_the_same_result() -> None:
    rng = np.random.default_rng(11)
    a, b = _random(rng, 2, 3, 2)
    one, s1 = matmul(a, b, "hifi4", (1, 1))
    four, s4 = matmul(a, b, "hifi4", (2, 2))
    np.testing.assert_array_equal(one, four)
    assert [w["tiles"] for w in s4.per_worker] == [1, 1, 1, 1]
    assert len({(w["x"], w["y"]) for w in s4.per_worker}) == 4
    three, s3 = matmul(a, b, "hifi4", (1, 3))  # 4 tiles over 3 workers: 1, 1, 2
    np.testing.assert_array_equal(one, three)
    assert sorted(w["tiles"] for w in s3.per_worker) == [1, 1, 2]


def test_grid_with_more_tiles_than_output_tiles() -> None:
    rng = np.random.default_rng(12)
    a, b = _random(rng, 1, 2, 1)
    c, stats = matmul(a, b, "hifi4", (2, 2))
    np.testing.assert_array_equal(c, matmul_reference(a, b, "hifi4"))
    assert sorted(w["tiles"] for w in stats.per_worker) == [0, 0, 0, 1]


@pytest.mark.parametrize(("a_shape", "b_shape", "dtype", "message"), [
    ((32, 64), (32, 32), np.uint16, "A's columns must equal B's rows"),
    ((32, 33), (33, 32), np.uint16, "multiples of 32"),
    ((32, 32), (32, 32), np.float32, "uint16"),
])
def test_bad_input_is_one_clear_error(a_shape: tuple[int, int], b_shape: tuple[int, int],
                                      dtype: type, message: str) -> None:
    with pytest.raises(TileError, match=message):
        matmul(np.zeros(a_shape, dtype), np.zeros(b_shape, np.uint16))


def test_k_blocks_and_the_l1_limit() -> None:
    assert [k_block(k) for k in (1, 2, 16, 17, 20, 32, 48)] == [1, 2, 16, 1, 10, 16, 16]
    with pytest.raises(TileError, match="circular buffers"):
        matmul(np.zeros((32, 32 * 800), np.uint16), np.zeros((32 * 800, 32), np.uint16))


def test_bad_fidelity_and_grid() -> None:
    z = np.zeros((32, 32), np.uint16)
    with pytest.raises(TileError, match="fidelity"):
        matmul(z, z, "hifi5")
    with pytest.raises(TileError, match="does not fit"):
        matmul(z, z, "hifi4", (1, 99))


# -- the command ------------------------------------------------------------------------------

def test_cli_matches_the_api(tmp_path) -> None:  # noqa: ANN001
    from click.testing import CliRunner

    from isaforge.cli import main

    rng = np.random.default_rng(3)
    a, b = _random(rng, 2, 1, 1)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    out = tmp_path / "c.npy"
    r = CliRunner().invoke(main, ["tensix", "example", "matmul", "--a", str(tmp_path / "a.npy"),
                                  "--b", str(tmp_path / "b.npy"), "--output", str(out),
                                  "--fidelity", "hifi2", "--grid", "2x1"])
    assert r.exit_code == 0, r.stderr
    assert "2 output tiles on 2x1 worker tile(s)" in r.stderr
    c = np.load(out)
    np.testing.assert_array_equal(c, matmul(a, b, "hifi2")[0])
    np.testing.assert_array_equal(c, matmul_reference(a, b, "hifi2"))


def test_cli_errors_are_one_line(tmp_path) -> None:  # noqa: ANN001
    from click.testing import CliRunner

    from isaforge.cli import main

    np.save(tmp_path / "a.npy", np.zeros((32, 64), np.uint16))
    np.save(tmp_path / "f.npy", np.zeros((32, 32), np.float32))

    def run(*args: str) -> tuple[int, str]:
        r = CliRunner().invoke(main, ["tensix", "example", "matmul", *args,
                                      "--output", str(tmp_path / "c.npy")])
        return r.exit_code, r.stderr

    for args, text in (((str(tmp_path / "a.npy"), str(tmp_path / "a.npy")), "must equal"),
                       ((str(tmp_path / "f.npy"), str(tmp_path / "a.npy")), "uint16"),
                       ((str(tmp_path / "nope.npy"), str(tmp_path / "a.npy")), "cannot read")):
        code, err = run("--a", args[0], "--b", args[1])
        assert code == 1 and err.startswith("isaforge: ") and err.count("\n") == 1, err
        assert text in err
    code, err = run("--a", str(tmp_path / "a.npy"), "--b", str(tmp_path / "a.npy"),
                    "--grid", "2by2")
    assert code == 1 and "bad grid" in err
