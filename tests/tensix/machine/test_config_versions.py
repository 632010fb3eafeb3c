"""ConfigVersions (state.py): the content keys the unpackers, the Matrix Unit and the packer
cache their configuration records under; a write changes a unit's key exactly when it changes
what the unit reads, whatever the write path."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from isaforge.tensix.machine import matrix, pack, unpack
from isaforge.tensix.machine.coprocessor import Coprocessor
from isaforge.tensix.machine.state import (
    Config,
    ConfigVersions,
    ThreadConfig,
    config_versions,
)

from ..switched import add1_on_off, counting, matmul_on_off, setting

# what each unit derives from the configuration, for one thread
DERIVE = {
    "unpack": (unpack._words_read, lambda c, tc: [
        unpack.read_regs(c, tc, 1, which, multi, context)
        for which, contexts in ((0, 4), (1, 2)) for multi in (False, True)
        for context in range(contexts)]),
    "pack": (pack._words_read, lambda c, tc: pack.read_regs(c, tc, 2)),
    "matrix": (matrix._math_words, lambda c, tc: matrix.MathRegs(c, tc, 1).signature),
}


@pytest.mark.parametrize("unit", sorted(DERIVE))
def test_words_outside_a_group_do_not_change_the_record(unit: str) -> None:
    """The words a unit registers are all it reads: random values in every other word (both
    banks) leave its record as it was."""
    words, derive = DERIVE[unit]
    group = sorted(words())
    rng = np.random.default_rng(7)
    for trial in range(6):
        c, tc = Config(), ThreadConfig()
        base = rng.integers(0, 1 << 32, c.words.shape, dtype=np.uint64).astype(np.uint32)
        base[:, 1] &= ~np.uint32(1 << 31)  # (keep every context's fields defined)
        c.words = base
        tc.regs[:, 41] = 0  # (context offsets 0)
        tc.regs[1, 0] = trial & 1  # (either bank)
        try:
            want = derive(c, tc)
        except Exception:  # noqa: BLE001 (a configuration the model refuses: draw again)
            continue
        other = base.copy()
        outside = np.setdiff1d(np.arange(Config.N_WORDS), group)
        other[:, outside] = rng.integers(0, 1 << 32, (2, len(outside)),
                                         dtype=np.uint64).astype(np.uint32)
        c.words = other
        assert derive(c, tc) == want


def _machine() -> tuple[Config, ThreadConfig, ConfigVersions, int, int]:
    c, tc = Config(), ThreadConfig()
    v = config_versions(c, tc)
    return c, tc, v, v.group([3, 5]), v.group([7])


def test_a_write_changes_the_keys_of_its_groups_only() -> None:
    c, tc, v, g35, g7 = _machine()
    a, b = v.key(g35, 0), v.key(g7, 0)
    c.words[1, 7] = 9  # (a logged write)
    assert v.key(g35, 0) == a and v.key(g7, 0) != b
    b2 = v.key(g7, 0)
    c.words[0, 7] = 0  # the same value again
    assert v.key(g7, 0) == b2
    c.words[1, 7] = 0  # back to the first values: the first key
    assert v.key(g7, 0) == b and v.key(g35, 0) == a
    c.words[0, 100] = 1  # a word of no group
    assert (v.key(g35, 0), v.key(g7, 0)) == (a, b)
    c.words[0, 2:6] = 4  # a slice
    assert v.key(g35, 0) != a and v.key(g7, 0) == b


@pytest.mark.parametrize("how", ["view", "ufunc", "fill", "replace", "set", "negative",
                                 "numpy index", "many"])
def test_every_write_path_is_seen(how: str) -> None:
    c, tc, v, g35, g7 = _machine()
    before = v.key(g35, 2)
    words = c.words
    if how == "view":
        words[1][5] = 3
    elif how == "ufunc":
        words[:, 3:4] += 1
    elif how == "fill":
        words.fill(1)
    elif how == "replace":
        new = np.zeros_like(words)
        new[0, 3] = 1
        c.words = new
    elif how == "set":
        c.words[0, 3] = 0  # (an unchanged word first)
        c.words[0, 100] = 1
        c.words[1, 5] = 2
    elif how == "negative":
        words[-1, -219] = 6  # word 5 of bank 1
    elif how == "numpy index":
        words[np.int64(0), np.int64(3)] = 8
    else:  # more writes than the log keeps
        for i in range(200):
            words[0, 100 + i % 50] = i
        words[0, 5] = 1
    assert v.key(g35, 2) != before


def test_thread_config_rows_have_their_own_keys() -> None:
    c, tc, v, g35, _ = _machine()
    keys = [v.key(g35, t) for t in range(3)]
    tc.regs[1, 4] = 1
    assert [v.key(g35, t) for t in range(3)] == [keys[0], v.key(g35, 1), keys[2]]
    assert v.key(g35, 1) != keys[1]
    tc.regs[2] = 5  # (not a logged key: every row is looked at)
    assert v.key(g35, 2) != keys[2] and v.key(g35, 0) == keys[0]
    tc.regs[:] = 0
    assert [v.key(g35, t) for t in range(3)] == keys


def test_copies_and_pickles_keep_their_own_keys() -> None:
    cp = Coprocessor()
    v = config_versions(cp.config, cp.thread_config)
    g = v.group([3])
    k = v.key(g, 0)
    dup = copy.deepcopy(cp)
    dv = config_versions(dup.config, dup.thread_config)
    assert dv is not v and dv.key(g, 0) == k
    dup.config.words[0, 3] = 1
    assert dv.key(g, 0) != k and v.key(g, 0) == k
    back = pickle.loads(pickle.dumps(cp.config))
    bv = config_versions(back, back._versions.thread_config)
    assert bv.key(g, 0) == k
    back.words[1, 3] = 1
    assert bv.key(g, 0) != k and v.key(g, 0) == k


def test_off_every_write_changes_every_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ConfigVersions, "enabled", False)
    c, tc, v, g35, g7 = _machine()
    a = v.key(g35, 0)
    c.words[0, 100] = 1
    assert v.key(g35, 0) != a


def test_add1_with_and_without_config_versions(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same add1 results and counts; with the versions, the units read their records by
    bytes (a write changed the versions) far less often."""
    reads = [counting(monkeypatch, unpack.Unpackers, "_by_bytes"),
             counting(monkeypatch, matrix.MatrixUnit, "_regs_by_bytes"),
             counting(monkeypatch, pack.Packer, "_by_bytes")]
    on, off = add1_on_off(monkeypatch, setting(monkeypatch, ConfigVersions, "enabled"), 41,
                          reads)
    for n_on, n_off in zip(on, off, strict=True):
        assert n_on * 3 < n_off


def test_matmul_with_and_without_config_versions(monkeypatch: pytest.MonkeyPatch,
                                                 made: tuple[list, list]) -> None:
    matmul_on_off(setting(monkeypatch, ConfigVersions, "enabled"), 42, made)
