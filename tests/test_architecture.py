"""The package's structure as docs/architecture.md states it: no import cycles anywhere (the
layer and capability contracts themselves are import-linter's, run by .ci/run), and no module of
the services or the store longer than a reader takes in at once without its reason at its top."""

from __future__ import annotations

from pathlib import Path

import grimp

BERTH = Path(__file__).resolve().parents[1] / "src" / "berth"
LONGEST = 500
# A module past LONGEST lines says why among its first lines, on a line starting so.
REASON = "# Over 500 lines:"
REASON_WITHIN = 15


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan's algorithm)."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        order[module] = low[module] = len(order)
        stack.append(module)
        on_stack.add(module)
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            if imported not in order:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], order[imported])
        if low[module] == order[module]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for module in sorted(graph.modules):
        if module not in order:
            visit(module)
    return found


def test_no_module_imports_itself_through_others() -> None:
    graph = grimp.build_graph("berth")  # type-only imports included
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = grimp.ImportGraph()
    for module in ("a", "a.x", "a.y", "a.z"):
        graph.add_module(module)
    graph.add_import(importer="a.x", imported="a.y")
    graph.add_import(importer="a.y", imported="a.x")
    graph.add_import(importer="a.z", imported="a.x")
    assert _cycles(graph) == [["a.x", "a.y"]]


def _long_without_reason(root: Path) -> list[str]:
    """The modules under `root` (Alembic's migrations aside) over LONGEST lines that do not
    say why near their top."""
    found = []
    for module in sorted(root.rglob("*.py")):
        if "migrations" in module.relative_to(root).parts:
            continue
        lines = module.read_text().splitlines()
        if len(lines) > LONGEST and not any(line.startswith(REASON) for line in lines[:REASON_WITHIN]):
            found.append(f"{module.relative_to(root.parent)}: {len(lines)} lines")
    return found


def test_no_long_module_of_the_services_or_store_without_its_reason() -> None:
    assert _long_without_reason(BERTH / "services") + _long_without_reason(BERTH / "store") == []


def test_the_length_check_finds_a_long_module_and_hears_its_reason(tmp_path: Path) -> None:
    root = tmp_path / "store"
    (root / "migrations").mkdir(parents=True)
    body = "x = 1\n" * LONGEST
    (root / "short.py").write_text(body)
    (root / "long.py").write_text(body + "y = 2\n")
    (root / "explained.py").write_text(f'"""Doc."""\n{REASON} one schema\n' + body)
    (root / "migrations" / "0001.py").write_text(body * 2)
    assert _long_without_reason(root) == ["store/long.py: 501 lines"]
