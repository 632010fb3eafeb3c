"""Find import circles among isaforge's modules.

Every import counts: at module level, inside functions, under ``TYPE_CHECKING``. A module
importing ``pkg.mod`` depends on ``pkg.mod``; ``from pkg import name`` depends on
``pkg.name`` when that is a module, else on ``pkg`` (its ``__init__``). Prints each circle
(a strongly connected component of more than one module, or a module importing itself) and
exits 1 if there is one.

    python tools/import_cycles.py [SRC_DIR]
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path


def module_names(src: Path) -> dict[str, Path]:
    out: dict[str, Path] = {}
    for path in src.rglob("*.py"):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    is_pkg = path.name == "__init__.py"
    package = name if is_pkg else name.rpartition(".")[0]
    deps: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    deps.add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if sub in modules:
                    deps.add(sub)
                elif target in modules:
                    deps.add(target)
    return deps


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of size > 1 (or with a self-edge)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = 0

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph.get(v, ()):
                out.append(sorted(comp))

    sys.setrecursionlimit(10_000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def import_graph(src: Path) -> dict[str, set[str]]:
    modules = module_names(src)
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def main(argv: list[str]) -> int:
    src = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent.parent / "src"
    found = cycles(import_graph(src))
    for comp in found:
        print("import circle: " + " <-> ".join(comp))
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
