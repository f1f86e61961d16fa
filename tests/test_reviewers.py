from __future__ import annotations

import pytest

from toolwire import ToolCall
from toolwire.reviewers import ConsoleReviewer, DenyAll, QuorumReviewer, ReviewDecision, Vote
from toolwire.testing import ScriptedModel, reply
from toolwire.tools import tool


@tool(risk="high")
def delete(path: str) -> str:
    """Delete a file."""
    return path


CALL = ToolCall(id="c1", name="delete", arguments={"path": "a.txt"})


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("y", ReviewDecision(approved=True, reason="approved by the user")),
        ("YES ", ReviewDecision(approved=True, reason="approved by the user")),
        ("n: wrong file", ReviewDecision(approved=False, reason="wrong file")),
        ("", ReviewDecision(approved=False, reason="the user declined")),
        ("no", ReviewDecision(approved=False, reason="the user declined")),
    ],
)
async def test_console_reviewer_shows_the_call_and_reads_the_answer(answer: str, expected: ReviewDecision) -> None:
    shown: list[str] = []
    prompts: list[str] = []

    def ask(prompt: str) -> str:
        prompts.append(prompt)
        return answer

    decision = await ConsoleReviewer(ask=ask, show=shown.append).review(CALL, delete)
    assert decision == expected
    assert shown == ['\ndelete wants to run (high risk)\narguments: {\n  "path": "a.txt"\n}']
    assert prompts == ["Run this tool? [y/N] "]


async def test_console_reviewer_rejects_at_end_of_input() -> None:
    def ask(prompt: str) -> str:
        raise EOFError

    decision = await ConsoleReviewer(ask=ask, show=lambda _: None).review(CALL, delete)
    assert decision == ReviewDecision(approved=False, reason="no one was there to approve it (end of input)")


async def test_deny_all() -> None:
    assert await DenyAll().review(CALL, delete) == ReviewDecision(
        approved=False, reason="high-risk tools are disabled in this run"
    )


async def test_quorum_counts_failed_and_unclear_voters_as_rejections() -> None:
    broken = ScriptedModel([RuntimeError("voter down")], model="broken")
    unclear = ScriptedModel([reply("hmm, not sure")], model="unclear")
    texty = ScriptedModel([reply("I approve this one.")], model="texty")
    decision = await QuorumReviewer([broken, unclear, texty], threshold=1).review(CALL, delete)
    assert decision.approved
    assert decision.votes == (
        Vote(voter="broken", approve=False, reason="voter failed: RuntimeError: voter down"),
        Vote(voter="unclear", approve=False, reason="no clear vote in the answer: 'hmm, not sure'"),
        Vote(voter="texty", approve=True, reason="I approve this one."),
    )
    assert decision.reason.startswith("1 of 3 reviewers approved (needed 1): broken: reject")


def test_quorum_threshold_is_validated() -> None:
    voters = [ScriptedModel(), ScriptedModel()]
    assert QuorumReviewer(voters, threshold=0.5).needed == 1
    assert QuorumReviewer(voters, threshold=0.51).needed == 2
    with pytest.raises(ValueError, match="needs 3 approvals but there are 2 voters"):
        QuorumReviewer(voters, threshold=3)
    with pytest.raises(ValueError, match=r"threshold must be a count >= 1 or a fraction in \(0, 1\], got 0"):
        QuorumReviewer(voters, threshold=0)
    with pytest.raises(ValueError, match="at least one voter"):
        QuorumReviewer([], threshold=1)
