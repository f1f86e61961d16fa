"""Reviewers decide whether a high-risk tool call may run: a person, a rule, or a quorum of models.

A reviewer is anything with `async review(call, tool) -> ReviewDecision`. The agent asks it
just before running each high-risk call, one at a time, so the reviewer sees the state the call
would run in. Imports no codec and no transport: quorum voters are any clients with `complete`.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from toolwire.contract import ModelClient
from toolwire.types import Message, NamedToolChoice, Response, SystemMessage, ToolCall, ToolDefinition, UserMessage

__all__ = [
    "AutoApprove",
    "ConsoleReviewer",
    "DenyAll",
    "QuorumReviewer",
    "ReviewDecision",
    "ReviewedTool",
    "Reviewer",
    "Vote",
]


@dataclass(slots=True, frozen=True)
class Vote:
    """One reviewer model's opinion on a proposed call."""

    voter: str
    approve: bool
    reason: str


@dataclass(slots=True, frozen=True)
class ReviewDecision:
    """A reviewer's answer: approve or not, why, and the votes behind it (for a quorum)."""

    approved: bool
    reason: str = ""
    votes: tuple[Vote, ...] = ()


class ReviewedTool(Protocol):
    """What a reviewer may know about the tool: its name, description and risk."""

    @property
    def name(self) -> str: ...  # noqa: D102 - protocol member
    @property
    def description(self) -> str | None: ...  # noqa: D102 - protocol member
    @property
    def risk(self) -> str: ...  # noqa: D102 - protocol member


class Reviewer(Protocol):
    """Decides whether a proposed high-risk call may run."""

    async def review(self, call: ToolCall, tool: ReviewedTool) -> ReviewDecision:
        """Approve or reject `call` of `tool`, with a short reason the model will see on rejection."""
        ...


class AutoApprove:
    """Approves everything (the caller chose the tools and trusts them)."""

    async def review(self, call: ToolCall, tool: ReviewedTool) -> ReviewDecision:
        """Approve."""
        return ReviewDecision(approved=True, reason="approved automatically")


class DenyAll:
    """Rejects every high-risk call: a read-only agent."""

    def __init__(self, reason: str = "high-risk tools are disabled in this run") -> None:
        self.reason = reason

    async def review(self, call: ToolCall, tool: ReviewedTool) -> ReviewDecision:
        """Reject with the configured reason."""
        return ReviewDecision(approved=False, reason=self.reason)


def _stderr(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


class ConsoleReviewer:
    """Asks a person on the terminal: shows the tool, its risk and arguments, reads y/n.

    Anything but `y`/`yes` rejects; text after `n` (e.g. `n: wrong file`) becomes the reason the
    model sees. `ask` and `show` are replaceable (the CLI uses rich; tests use a pseudo-terminal).
    """

    def __init__(self, ask: Callable[[str], str] = input, show: Callable[[str], None] = _stderr) -> None:
        self._ask = ask
        self._show = show
        self._lock = asyncio.Lock()

    async def review(self, call: ToolCall, tool: ReviewedTool) -> ReviewDecision:
        """Show the call and wait for the person's answer (in a thread, so the loop keeps running)."""
        arguments = json.dumps(call.arguments, indent=2, ensure_ascii=False)
        self._show(f"\n{tool.name} wants to run ({tool.risk} risk)\narguments: {arguments}")
        async with self._lock:
            try:
                answer = await asyncio.to_thread(self._ask, "Run this tool? [y/N] ")
            except EOFError:
                return ReviewDecision(approved=False, reason="no one was there to approve it (end of input)")
        answer = answer.strip()
        if answer.lower() in ("y", "yes"):
            return ReviewDecision(approved=True, reason="approved by the user")
        reason = re.sub(r"^(n|no)\b[:\s]*", "", answer, flags=re.IGNORECASE).strip()
        return ReviewDecision(approved=False, reason=reason or "the user declined")


VoterClient = ModelClient
"""The client a quorum's voter is: the one client contract (`toolwire.contract.ModelClient`)."""


_VOTE_TOOL = ToolDefinition(
    name="vote",
    description="Cast your vote on the proposed tool call.",
    parameters={
        "type": "object",
        "properties": {
            "approve": {"type": "boolean", "description": "true to let the call run, false to block it"},
            "reason": {"type": "string", "description": "one short sentence explaining the vote"},
        },
        "required": ["approve", "reason"],
        "additionalProperties": False,
    },
)

_VOTER_SYSTEM = (
    "You review tool calls proposed by an AI agent before they run. Approve calls that are safe and "
    "match the tool's purpose; reject destructive, irreversible or suspicious ones. Answer by calling "
    "the vote tool exactly once."
)


class QuorumReviewer:
    """Several models vote on each call; it runs when at least `threshold` of them approve.

    `threshold` is a count (an int >= 1) or a fraction of the voters (a float in (0, 1]). A voter
    that fails or answers unclearly counts as a rejection, with the reason recorded.
    """

    def __init__(self, clients: Sequence[VoterClient], threshold: float = 0.5) -> None:
        if not clients:
            raise ValueError("QuorumReviewer needs at least one voter client.")
        self.clients = list(clients)
        if isinstance(threshold, int) and not isinstance(threshold, bool) and threshold >= 1:
            needed = threshold
        elif isinstance(threshold, float) and 0 < threshold <= 1:
            needed = max(1, math.ceil(threshold * len(clients) - 1e-9))
        else:
            raise ValueError(f"threshold must be a count >= 1 or a fraction in (0, 1], got {threshold!r}.")
        if needed > len(self.clients):
            raise ValueError(f"threshold {threshold!r} needs {needed} approvals but there are {len(clients)} voters.")
        self.needed = needed

    async def review(self, call: ToolCall, tool: ReviewedTool) -> ReviewDecision:
        """Ask every voter at once and count the approvals."""
        prompt = (
            f"Proposed call: tool {tool.name!r} ({tool.risk} risk)\n"
            f"Tool description: {tool.description or '(none)'}\n"
            f"Arguments: {json.dumps(call.arguments, ensure_ascii=False)}"
        )
        messages: list[Message] = [SystemMessage(content=_VOTER_SYSTEM), UserMessage(content=prompt)]
        votes = await asyncio.gather(*(self._vote(i, c, messages) for i, c in enumerate(self.clients)))
        approvals = sum(v.approve for v in votes)
        approved = approvals >= self.needed
        summary = "; ".join(f"{v.voter}: {'approve' if v.approve else 'reject'} ({v.reason})" for v in votes)
        reason = f"{approvals} of {len(votes)} reviewers approved (needed {self.needed}): {summary}"
        return ReviewDecision(approved=approved, reason=reason, votes=tuple(votes))

    async def _vote(self, index: int, client: VoterClient, messages: list[Message]) -> Vote:
        voter = client.model or f"voter-{index + 1}"
        try:
            response = await client.complete(messages, tools=[_VOTE_TOOL], tool_choice=NamedToolChoice("vote"))
        except Exception as exc:  # a broken voter is a rejection, never a crash of the run
            return Vote(voter=voter, approve=False, reason=f"voter failed: {type(exc).__name__}: {exc}")
        return _read_vote(voter, response)


def _read_vote(voter: str, response: Response) -> Vote:
    for call in response.tool_calls:
        if call.name == "vote" and isinstance(call.arguments.get("approve"), bool):
            return Vote(voter=voter, approve=call.arguments["approve"], reason=str(call.arguments.get("reason", "")))
    text = response.text.strip()
    match = re.search(r"\b(approve|reject)\b", text, re.IGNORECASE)
    if match:
        return Vote(voter=voter, approve=match.group(1).lower() == "approve", reason=text[:200])
    return Vote(voter=voter, approve=False, reason=f"no clear vote in the answer: {text[:200]!r}")
