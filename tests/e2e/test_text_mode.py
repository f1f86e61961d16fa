"""Text mode against a real model on a plain `chatml` server: the prompt arrives as written, the reply is parsed.

`chatml-function-calling` HTML-escapes every message (`TOOL_CALL: {&#34;name&#34;...`), so text
mode needs a server with a plain chat format. What the model wrote goes to the test log (`-rA`).
"""

from __future__ import annotations

from tests.e2e.llama_server import LlamaServer
from tests.e2e.test_native_calls import QUESTION, connect, get_weather
from toolwire import SystemMessage, UserMessage
from toolwire.textcalls import parse_tool_calls, to_text_messages


def _chatml(messages: list[dict[str, str]]) -> str:
    """The prompt llama-cpp-python's `chatml` format renders, unescaped."""
    turns = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
    return turns + "<|im_start|>assistant\n"


async def test_the_text_mode_prompt_reaches_the_model_unescaped_and_the_reply_is_parsed(
    text_server: LlamaServer,
) -> None:
    sent = to_text_messages([UserMessage(content=QUESTION)], [get_weather.definition])
    assert isinstance(sent[0], SystemMessage) and '"name"' in sent[0].content
    wire = [{"role": "system", "content": sent[0].content}, {"role": "user", "content": QUESTION}]
    async with connect(text_server) as client:
        response = await client.complete(sent)
    # Every token of the prompt is accounted for by the unescaped rendering: `"` stayed `"`.
    assert response.usage is not None
    assert response.usage.input_tokens == len(text_server.tokenize(_chatml(wire)))
    text, calls = parse_tool_calls(response.text, [get_weather.definition])
    print(f"the model wrote: {response.text!r}\nparsed: {len(calls)} calls, text {text[:80]!r}")
    assert all(call.name == "get_weather" and isinstance(call.arguments, dict) for call in calls)
    assert text.strip() or calls
