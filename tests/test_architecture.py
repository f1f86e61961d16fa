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
    "_serialize": (1, "types"),
    "schema": (2, "schema"),
    "codecs": (3, "codecs"),
    "tools": (3, "tools"),
    "textcalls": (3, "textcalls"),
    "transport": (4, "transport"),
    "client": (5, "client"),
    "providers": (5, "client"),
    "session": (5, "client"),
    "agent": (6, "runtime"),
    "cache": (6, "runtime"),
    "reviewers": (6, "runtime"),
    "gateway": (6, "runtime"),
    "stdtools": (7, "edge"),
    "testing": (7, "edge"),
    "cli": (7, "edge"),
    "config": (7, "edge"),
    "copilot": (7, "edge"),
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


def test_codecs_never_import_each_other() -> None:
    violations = []
    for path in (SRC / "codecs").glob("_*.py"):
        name = _module_name(path)
        for imported in _imports(path):
            if not imported.startswith("toolwire.codecs._") or imported == "toolwire.codecs._shared":
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
