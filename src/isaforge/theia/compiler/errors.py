"""The compiler's error type and the map from preprocessed lines back to source files."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...core.errors import IsaforgeError, SourceLoc


class CompileError(IsaforgeError):
    """A T-Language program the compilers reject (one line: ``file:line:col: error: ...``)."""


@dataclass
class LineMap:
    """Where each line of the preprocessed text came from: (file, 1-based line)."""

    origins: list[tuple[str, int]] = field(default_factory=list)
    default_file: str = "<input>"

    def loc(self, line: int, col: int = 1) -> SourceLoc:
        """Location of 1-based ``line`` / ``col`` of the preprocessed text."""
        if 1 <= line <= len(self.origins):
            f, n = self.origins[line - 1]
            return SourceLoc(f, n, max(col, 1))
        last = self.origins[-1] if self.origins else (self.default_file, 1)
        return SourceLoc(last[0], last[1], max(col, 1))
