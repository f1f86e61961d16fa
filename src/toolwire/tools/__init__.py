"""Tools: define them from functions or Pydantic models, inject what they need, run them safely.

```python
from toolwire.tools import Dependency, Depends, tool

ROOT = Dependency("root", lambda: Path.cwd())

@tool(risk="low")
def read(path: str, root: Path = Depends(ROOT)) -> str:
    '''Read a text file under the project root.'''
    return (root / path).read_text()
```

`await read.execute_raw('{"path": "a.txt"}', ToolContext(), call=call)` parses, validates,
runs and returns a `ToolResult`; model mistakes and tool failures come back as `error` results.
This package is independent of providers: it imports `toolwire.types`, `toolwire.errors`,
pydantic and json_repair, never a codec, the transport or the runtime. `Tool`, `tool` and
`define_tool` (and with them pydantic) load on first use, so the agent imports light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolwire.tools._context import DEFAULT_TOOL_TIMEOUT, CancelSignal, Dependency, Depends, ToolContext
from toolwire.tools._results import ToolError

if TYPE_CHECKING:
    from toolwire.tools._tool import Risk, Tool, define_tool, tool

__all__ = [
    "DEFAULT_TOOL_TIMEOUT",
    "CancelSignal",
    "Dependency",
    "Depends",
    "Risk",
    "Tool",
    "ToolContext",
    "ToolError",
    "define_tool",
    "tool",
]

_LAZY = ("Risk", "Tool", "define_tool", "tool")


def __getattr__(name: str) -> Any:
    """`Tool`, `tool`, `define_tool` and `Risk`, from `toolwire.tools._tool` on first access."""
    if name in _LAZY:
        from toolwire.tools import _tool

        return getattr(_tool, name)
    raise AttributeError(f"module 'toolwire.tools' has no attribute {name!r}")
