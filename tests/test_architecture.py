"""The layering in SPEC.md/STYLE.md, read from the imports with `ast`, plus the public surface."""

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
    "telemetry": (2, "telemetry"),
    "codecs": (3, "codecs"),
    "tools": (3, "tools"),
    "textcalls": (3, "toolmodes"),
    "constrained": (3, "toolmodes"),
    "transport": (4, "transport"),
    "client": (5, "client"),
    "providers": (5, "client"),
    "session": (5, "client"),
    "agent": (6, "runtime"),
    "cache": (6, "runtime"),
    "reviewers": (6, "runtime"),
    "gateway": (6, "runtime"),
    "stdtools": (7, "edge"),
    "batch": (7, "edge"),
    "testing": (7, "edge"),
    "cli": (7, "edge"),
    "config": (7, "edge"),
    "copilot": (7, "edge"),
    "mcp": (7, "edge"),
    "connect": (7, "edge"),
    "evals": (7, "edge"),
    "demo": (8, "demo"),
}


def _layer(module: str) -> tuple[int, str] | None:
    if module == "toolwire.codecs._shared":
        return (2, "shared")  # argument parsing and ids, used by codecs and the text fallback alike
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


def _codec_family(module: str) -> str:
    """The codec a module under toolwire.codecs belongs to (`_gemini_stream` belongs to gemini)."""
    from toolwire.codecs import CODEC_NAMES

    stem = module.rsplit(".", 1)[-1].lstrip("_")
    matches = [n.replace("-", "_") for n in CODEC_NAMES if stem.startswith(n.replace("-", "_"))]
    return max(matches, key=len) if matches else stem


# Shared by every codec, owned by none: helpers, the decoding boundary and the wire shapes it checks.
_CODEC_INFRASTRUCTURE = {
    "toolwire.codecs._shared",
    "toolwire.codecs._guard",
    "toolwire.codecs._shapes",
    "toolwire.codecs._stream_encoding",
}


def test_codecs_never_import_each_other() -> None:
    violations = []
    for path in (SRC / "codecs").glob("_*.py"):
        name = _module_name(path)
        for imported in _imports(path):
            if not imported.startswith("toolwire.codecs._") or imported in _CODEC_INFRASTRUCTURE:
                continue
            if _codec_family(imported) != _codec_family(name):
                violations.append(f"{name} imports {imported}")
    assert violations == []


def test_only_transport_imports_httpx2_and_agent_never_imports_codecs() -> None:
    violations = []
    for path in _sources():
        name = _module_name(path)
        for imported in _imports(path):
            if imported.split(".")[0] in ("httpx2", "httpx") and not name.startswith("toolwire.transport"):
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
    # The agent's import cost (bench/b_import.py, target <= 80 ms over a bare start) is mostly
    # pydantic; tools build on first use, so importing the agent must not load it.
    code = (
        "import sys, toolwire.agent, toolwire.cache; "
        "print(sorted(m for m in ('pydantic', 'httpx2', 'rich', 'json_repair') if m in sys.modules), "
        "toolwire.cache.cache_tools.cache_info().currsize)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[] 0"
