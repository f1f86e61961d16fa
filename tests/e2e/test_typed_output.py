"""Typed results against the real model (SmolLM2-135M on llama-cpp-python): the reply validates, whatever it says.

The server's default output strategy is `constrained` (its profile): the type's schema, cut to
what llama-cpp-python's grammar holds, decodes the reply, so a 135M model's answer parses and
validates by construction; the `tool` strategy gets the same from the server's named tool
choice. The assertions are on validity (an instance of the type, no re-ask needed), never on
whether the model read the text right.
"""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel

import toolwire
from tests.e2e.llama_server import MODEL_NAME, LlamaServer
from toolwire.agent import Agent
from toolwire.toolmodes import OutputResult, PartialOutput


class Person(BaseModel):
    name: str
    age: int
    city: str


class Review(BaseModel):
    sentiment: Literal["positive", "negative", "neutral"]


PERSON = "Extract the person's name, age and city.\n\nAlice is 34 years old and lives in Paris."
REVIEW = "What is the sentiment of this review?\n\nGreat book, I could not put it down."


def connect(server: LlamaServer) -> toolwire.Client:
    return toolwire.connect(f"llama-cpp-python:{MODEL_NAME}", base_url=server.base_url, temperature=0, max_tokens=96)


@pytest.mark.parametrize(("prompt", "output_type"), [(PERSON, Person), (REVIEW, Review)], ids=["person", "review"])
async def test_the_default_strategy_validates_first_time(
    text_server: LlamaServer, prompt: str, output_type: type
) -> None:
    async with connect(text_server) as client:
        agent = Agent(client, output_type=output_type, output_retries=0)
        assert agent.output_strategy == "constrained"
        result = await agent.run(prompt)
    print(f"{output_type.__name__}: {result.output!r} from {result.text!r}")
    assert isinstance(result.output, output_type)
    assert result.output_attempts == []


async def test_streamed_partial_objects_end_in_a_valid_one(text_server: LlamaServer) -> None:
    async with connect(text_server) as client:
        items = [i async for i in client.stream(PERSON, output_type=Person, output_retries=0)]
    *partials, last = items
    assert isinstance(last, OutputResult) and isinstance(last.output, Person)
    assert all(isinstance(p, PartialOutput) for p in partials)
    final = list(last.output.model_dump().items())
    for partial in partials:  # each holds complete fields, in order (the model may write them as JSON values)
        assert isinstance(partial, PartialOutput)
        assert list(partial.value)[: len(final)] == [k for k, _ in final][: len(partial.value)]


async def test_the_tool_strategy_validates_through_the_named_tool_choice(native_server: LlamaServer) -> None:
    async with connect(native_server) as client:
        result = await client.complete(PERSON, output_type=Person, output_strategy="tool", output_retries=0)
    print(f"tool: {result.output!r} from {result.text!r}")
    assert isinstance(result.output, Person)
