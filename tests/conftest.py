"""Test-session settings: the afuc CLI's generated-code cache (afuc.machine.codecache) goes
to a directory of the session's, not the user's cache."""

from __future__ import annotations

import os
import shutil
import tempfile

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
