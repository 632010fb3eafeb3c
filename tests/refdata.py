"""The one place tests find the reference data in ``../shared/refdata``.

Outside CI a missing refdata tree skips the test with a loud reason; under ``CI=true``
it fails, because CI always has it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def refdata_root() -> Path | None:
    env = os.environ.get("ISAFORGE_REFDATA")
    candidates = [Path(env)] if env else []
    candidates.append(REPO.parent / "shared" / "refdata")
    for c in candidates:
        if c.is_dir():
            return c
    return None


def refdata(*parts: str) -> Path:
    """Path of a reference-data file; skip (or fail under CI=true) when it is absent."""
    root = refdata_root()
    path = root.joinpath(*parts) if root else None
    if path is None or not path.exists():
        msg = (
            f"REFERENCE DATA MISSING: {'/'.join(parts)} not found "
            f"(looked in $ISAFORGE_REFDATA and {REPO.parent / 'shared' / 'refdata'})"
        )
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(msg)
        pytest.skip(msg)
    return path
