"""The tool mode one caller uses now: a session's, an agent's, a gateway target's.

`auto` turns into `text` for good the first time a server refuses the tools parameter; the
state is the caller's own (no global), so one refusing server never changes another's mode.
"""

from __future__ import annotations

import logging

from toolwire.errors import BadRequestError
from toolwire.textcalls import TOOL_MODES, ToolMode

__all__ = ["ModeState"]

logger = logging.getLogger("toolwire.toolmodes")


class ModeState:
    """A tool mode that `auto` may leave once, for `text`.

    Args:
        mode: `native`, `text`, `auto` or `constrained`.
        owner: Who uses it, as the switch's warning names it ("this client", "route 'x' target y").

    Raises:
        ValueError: For a mode that is not one of `TOOL_MODES`.
    """

    __slots__ = ("mode", "owner")

    def __init__(self, mode: ToolMode, owner: str = "this client") -> None:
        if mode not in TOOL_MODES:
            raise ValueError(f"tool_mode must be one of {', '.join(TOOL_MODES)}, got {mode!r}.")
        self.mode: ToolMode = mode
        self.owner = owner

    def __repr__(self) -> str:
        return f"ModeState({self.mode!r}, owner={self.owner!r})"

    def tools_refused(self, exc: BadRequestError) -> None:
        """The server said it takes no tools: text mode from now on, said once (concurrent refusals too)."""
        if self.mode != "auto":
            return
        self.mode = "text"
        logger.warning(
            "The server refused the tools parameter (%s); switching to text mode for %s.", exc.message, self.owner
        )
