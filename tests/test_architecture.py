"""The layering of toolwire, read from the imports with `ast` (docs/architecture.md), plus the public surface."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import toolwire

SRC = Path(__file__).resolve().parents[1] / "src" / "toolwire"

# Lowest first; a module may import from lower ranks, and from its own rank only inside its group.
LAYERS: dict[str, tuple[int, str]] = {
    "errors": (0, "errors"),
    "types": (1, "types"),
    "definitions": (1, "types"),
    "_serialize": (1, "types"),
    "schema": (2, "schema"),
    "schema_support": (2, "schema"),  # what a server's schema engine enforces (toolwire.schema re-exports it)
    "telemetry": (2, "telemetry"),
    "contract": (3, "contract"),  # the one client contract: what every model client offers
    "codecs": (4, "codecs"),
    "tools": (4, "tools"),
    "textcalls": (4, "toolmodes"),
    "constrained": (4, "toolmodes"),
    "toolmodes": (4, "toolmodes"),  # the engine: one strategy per mode, for every caller
    "http": (5, "http"),
    "transport": (5, "http"),  # kept for old imports: re-exports toolwire.http
    "routes": (5, "routes"),  # what a gateway route declares (config and gateway read it)
    "client": (6, "client"),
    "base_client": (6, "client"),  # BaseClient: the client contract written once over two methods
    "address": (6, "client"),  # where a provider:model is reached (connect_http, check_target)
    "providers": (6, "client"),
    "session": (6, "client"),
    "testing": (7, "offline"),  # the scripted server: no model, no key
    "offline": (7, "offline"),  # the offline scripted model (the CLI's default, a gateway target)
    "agent": (8, "runtime"),
    "cache": (8, "runtime"),
    "reviewers": (8, "runtime"),
    "gateway": (8, "runtime"),
    "stdtools": (9, "edge"),
    "batch": (9, "edge"),
    "cli": (9, "edge"),
    "config": (9, "edge"),
    "copilot": (9, "edge"),
    "mcp": (9, "edge"),
    "connect": (9, "edge"),
    "evals": (9, "edge"),
    "demo": (10, "demo"),
}


def _layer(module: str) -> tuple[int, str] | None:
    if module == "toolwire.codecs.common" or module.startswith("toolwire.codecs.common."):
        return (2, "shared")  # argument parsing, ids, JSON text: used by codecs, tools and the text fallback
    parts = module.split(".")
    if parts[0] != "toolwire" or len(parts) == 1:
        return None
    return LAYERS.get(parts[1].lstrip("_") if parts[1] != "_serialize" else "_serialize")


def _module_name(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
    return found


def _sources() -> list[Path]:
    return sorted(p for p in SRC.rglob("*.py") if p.parent != SRC or p.name != "__init__.py")


def test_every_module_belongs_to_a_layer() -> None:
    unknown = [_module_name(p) for p in _sources() if _layer(_module_name(p)) is None]
    assert unknown == []


def test_modules_import_only_from_lower_layers() -> None:
    violations = []
    for path in _sources():
        name = _module_name(path)
        own = _layer(name)
        assert own is not None
        for imported in _imports(path):
            target = _layer(imported)
            if target is None:
                continue
            if target[0] > own[0] or (target[0] == own[0] and target[1] != own[1]):
                violations.append(f"{name} imports {imported}")
    assert violations == []


CODECS = SRC / "codecs"
ROOMS = {"__init__.py", "requests.py", "replies.py", "stream_decoder.py", "stream_encoder.py"}


def _codec_folders() -> list[Path]:
    return sorted(p for p in CODECS.iterdir() if p.is_dir() and p.name not in ("common", "__pycache__"))


def test_every_codec_is_a_folder_with_the_same_rooms() -> None:
    from toolwire.codecs import CODEC_NAMES

    assert [p.name for p in _codec_folders()] == sorted(n.replace("-", "_") for n in CODEC_NAMES)
    assert sorted(p.name for p in CODECS.glob("*.py")) == ["__init__.py"]  # nothing loose beside the folders
    for folder in _codec_folders():
        rooms = {p.name for p in folder.glob("*.py")}
        assert ROOMS <= rooms, f"{folder.name} lacks {sorted(ROOMS - rooms)}"


def test_codecs_never_import_each_other() -> None:
    violations = []
    for path in CODECS.rglob("*.py"):
        name = _module_name(path)
        parts = name.split(".")
        own = parts[2] if len(parts) > 2 else None  # toolwire.codecs.<own>...
        for imported in _imports(path):
            target = imported.split(".")
            if imported == "toolwire.codecs" and own is not None:
                violations.append(f"{name} imports {imported}")  # the registry: codecs stay below it
            elif len(target) > 2 and target[:2] == ["toolwire", "codecs"] and target[2] not in (own, "common"):
                violations.append(f"{name} imports {imported}")
    assert violations == []


def _targets(path: Path, modules: set[str]) -> set[str]:
    """The toolwire modules a file imports, wherever the import stands (TYPE_CHECKING included)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in modules)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                if submodule in modules:
                    found.add(submodule)
                elif node.module in modules:
                    found.add(node.module)
    return found


def test_the_module_graph_has_no_cycle() -> None:
    paths = {_module_name(p): p for p in SRC.rglob("*.py")}
    graph = {name: _targets(path, set(paths)) - {name} for name, path in paths.items()}
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append([*trail[trail.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*trail, nxt])
        state[node] = 2

    for start in sorted(graph):
        if start not in state:
            visit(start, [start])
    assert cycles == []


def test_only_the_http_layer_imports_httpx2_and_agent_never_imports_codecs() -> None:
    violations = []
    for path in _sources():
        name = _module_name(path)
        for imported in _imports(path):
            if imported.split(".")[0] in ("httpx2", "httpcore2", "httpx") and _layer(name) != (5, "http"):
                violations.append(f"{name} imports {imported}")
            if name.startswith("toolwire.agent") and imported.startswith("toolwire.codecs"):
                violations.append(f"{name} imports {imported}")
    assert violations == []


def test_all_is_sorted_and_complete() -> None:
    assert list(toolwire.__all__) == sorted(toolwire.__all__)
    for name in toolwire.__all__:
        assert getattr(toolwire, name) is not None


def test_import_toolwire_stays_light() -> None:
    code = "import sys, toolwire; print(sorted(m for m in ('httpx2', 'rich', 'json_repair') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def _runtime_imports(path: Path) -> list[str]:
    """Imports that run (function-level ones included), leaving out `if TYPE_CHECKING:` blocks."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(child) for stmt in node.body for child in ast.walk(stmt))
    found: list[str] = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
        elif (  # importlib.import_module("toolwire.x") hides an import from the statements above
            isinstance(node, ast.Call)
            and ast.unparse(node.func).endswith("import_module")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.append(node.args[0].value)
    return found


def _unit(module: str) -> str:
    """A package or top-level module of toolwire: `toolwire.copilot`, `toolwire.client`."""
    return ".".join(module.split(".")[:2])


def test_the_layers_form_no_circle() -> None:
    graph: dict[str, set[str]] = {}
    for path in _sources():
        name = _unit(_module_name(path))
        for imported in _runtime_imports(path):
            target = _unit(imported)
            if imported.startswith("toolwire.") and target != name:
                graph.setdefault(name, set()).add(target)

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for nxt in graph.get(start, ()):
            if nxt == goal or (nxt not in seen and (seen.add(nxt) or reaches(nxt, goal, seen))):
                return True
        return False

    circles = sorted(f"{a} -> {b}" for a in graph for b in graph[a] if reaches(b, a, set()))
    assert circles == []


def test_import_toolwire_agent_loads_no_pydantic_and_builds_no_tool() -> None:
    # The agent's import cost (bench/micro/import_rows.py, target <= 80 ms over a bare start) is mostly
    # pydantic; tools build on first use, so importing the agent must not load it.
    code = (
        "import sys, toolwire.agent, toolwire.cache; "
        "print(sorted(m for m in ('pydantic', 'httpx2', 'rich', 'json_repair') if m in sys.modules), "
        "toolwire.cache.cache_tools.cache_info().currsize)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[] 0"


def test_no_module_is_over_600_lines() -> None:
    long = {_module_name(p): n for p in _sources() if (n := p.read_text(encoding="utf-8").count("\n")) > 600}
    assert long == {}
