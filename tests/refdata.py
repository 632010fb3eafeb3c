"""The one place tests find the reference data in ``../shared/refdata``, and the packages a
test needs.

Outside CI a missing refdata tree (or a missing test dependency) skips the test with a loud
reason; under ``CI=true`` it fails, because CI always has both.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from types import ModuleType
from typing import NoReturn

import pytest

REPO = Path(__file__).resolve().parent.parent


def missing(msg: str) -> NoReturn:
    """Skip with ``msg`` (also at module level), or fail under ``CI=true``."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(msg)
    pytest.skip(msg, allow_module_level=True)


def refdata_root() -> Path | None:
    env = os.environ.get("ISAFORGE_REFDATA")
    candidates = [Path(env)] if env else []
    candidates.append(REPO.parent / "shared" / "refdata")
    for c in candidates:
        if c.is_dir():
            return c
    return None


def refdata_path(*parts: str) -> Path | None:
    """Path of a reference-data file, or None when it is absent (for collection time, when
    a test cannot be skipped yet; the test itself then calls :func:`refdata`)."""
    root = refdata_root()
    path = root.joinpath(*parts) if root else None
    return path if path is not None and path.exists() else None


def refdata(*parts: str) -> Path:
    """Path of a reference-data file; skip (or fail under CI=true) when it is absent."""
    path = refdata_path(*parts)
    if path is None:
        missing(f"REFERENCE DATA MISSING: {'/'.join(parts)} not found "
                f"(looked in $ISAFORGE_REFDATA and {REPO.parent / 'shared' / 'refdata'})")
    return path


def npz_files(*parts: str, placeholder: str) -> list[str]:
    """The ``.npz`` files of a reference-data folder, sorted; ``[placeholder]`` when the folder
    is absent, so that the placeholder's test reaches :func:`refdata` and skips or fails."""
    folder = refdata_path(*parts)
    if folder is None:
        return [placeholder]
    return sorted(f.name for f in folder.glob("*.npz"))


def requires(module: str, what: str) -> ModuleType:
    """Import ``module``, a dependency of the tests; without it, skip loudly (naming
    ``what`` goes untested), or fail under ``CI=true``."""
    try:
        return importlib.import_module(module)
    except ImportError:
        missing(f"{module.split('.')[0].upper()} MISSING: {what} not tested "
                f"(pip install '.[test]')")
