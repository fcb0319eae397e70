# SPDX-License-Identifier: BSD-3-Clause
"""The harness's modules import each other without a cycle, and its folders follow the flow: machine, engine,
results, campaign, report, run (a run writes its report); results and report never import run/. Every import
counts, those inside functions too."""

import ast
from pathlib import Path

import gmb

ROOT = Path(gmb.__file__).parent


def _module_name(path: Path) -> str:
    parts = ["gmb", *path.relative_to(ROOT).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in ROOT.rglob("*.py")}


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The gmb modules ``name`` imports, anywhere in it (``from .x import y``: module x.y when it is one, else x)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            for a in node.names:
                out.add(f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base)
    return {m for m in out if m in modules and m != name}


def graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def _cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph (its nodes, the first repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node):
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        state[node] = 2
        path.pop()
        return None

    for node in sorted(edges):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


# the command line: the only modules that see argparse, above every folder
COMMAND_LINE = ("gmb.cli", "gmb.__main__", "gmb.arguments")


def _folder(module: str) -> str:
    """The folder a module lies in; "base" for the top-level modules every folder may use (errors, outputs,
    options, ...), "cli" for the command line."""
    if module in COMMAND_LINE:
        return "cli"
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and (ROOT / parts[1]).is_dir() else "base"


def folder_graph() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for module, imported in graph().items():
        out.setdefault(_folder(module), set()).update(_folder(m) for m in imported if _folder(m) != _folder(module))
    return out


def test_the_cycle_finder_finds_one():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_the_import_graph_sees_imports_inside_functions():
    assert "gmb.report.commands" in graph()["gmb.cli"]  # imported inside cmd_report, cmd_tables, cmd_compare only


def test_no_module_import_cycle():
    assert _cycle(graph()) is None, " -> ".join(_cycle(graph()))


def test_no_folder_import_cycle():
    assert _cycle(folder_graph()) is None, " -> ".join(_cycle(folder_graph()))


# each folder imports only folders before it
ORDER = ["base", "machine", "engine", "results", "campaign", "report", "run", "tune", "app", "cli"]


def test_folders_follow_the_flow():
    folders = folder_graph()
    assert set(folders) <= set(ORDER)
    against = sorted(f"{folder} imports {other}" for folder, others in folders.items()
                     for other in others if ORDER.index(other) > ORDER.index(folder))
    assert against == []
    assert "run" not in folders["results"] | folders["report"]
