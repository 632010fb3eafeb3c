"""Test-session settings: the afuc CLI's disk caches (afuc.diskcache) go to a directory of
the session's, not the user's cache, and a test that ran an afuc command in-process (which
turns them on for the process) leaves them off for the next test."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile

import pytest

_CACHE = tempfile.mkdtemp(prefix="isaforge-test-codecache-")


def pytest_configure(config) -> None:
    os.environ["ISAFORGE_CACHE_DIR"] = _CACHE


def pytest_unconfigure(config) -> None:
    try:
        from isaforge.afuc.machine import codecache
    except ImportError:
        pass
    else:
        codecache.discard()  # (else written at exit, into the directory removed here)
    shutil.rmtree(_CACHE, ignore_errors=True)


@pytest.fixture(autouse=True)
def _afuc_caches_off_after_each_test():
    yield
    boot = sys.modules.get("isaforge.afuc.bootcache")
    if boot is not None:
        boot.enable(False)  # (and the data cache)
    code = sys.modules.get("isaforge.afuc.machine.codecache")
    if code is not None and code.enabled():
        code.discard()
