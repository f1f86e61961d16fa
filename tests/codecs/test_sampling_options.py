"""The common sampling options cross providers in each one's own spelling.

`top_p`, `stop`, `seed` and `user` are neutral fields; a provider without one leaves it out
and says so once; options toolwire does not model (`n`, `logprobs`) go back only to the
codec they came from.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from toolwire import ResponseFormat
from toolwire.codecs import get_codec
from toolwire.codecs.common.degradations import collect_degradations
from toolwire.errors import CodecError

OPENAI_BODY = {
    "model": "m",
    "messages": [{"role": "user", "content": "hi"}],
    "top_p": 0.9,
    "stop": ["END", "STOP"],
    "seed": 42,
    "user": "u-7",
    "n": 2,
    "logprobs": True,
}

# What each target puts in its body for the options, and what it has no place for.
EXPECTED: dict[str, tuple[dict[str, Any], list[str]]] = {
    "anthropic": ({"top_p": 0.9, "stop_sequences": ["END", "STOP"], "metadata": {"user_id": "u-7"}}, ["seed"]),
    "gemini": ({"generationConfig": {"topP": 0.9, "stopSequences": ["END", "STOP"], "seed": 42}}, ["user"]),
    "ollama": ({"options": {"top_p": 0.9, "stop": ["END", "STOP"], "seed": 42}}, ["user"]),
    "openai-responses": ({"top_p": 0.9, "user": "u-7"}, ["stop", "seed"]),
}
OPTION_KEYS = {"top_p", "stop_sequences", "metadata", "generationConfig", "options", "user", "seed", "stop"}


@pytest.mark.parametrize("target", sorted(EXPECTED))
def test_openai_options_reach_every_provider_in_its_spelling(target: str) -> None:
    request = get_codec("openai").decode_request(dict(OPENAI_BODY))
    assert (request.top_p, request.stop, request.seed, request.user) == (0.9, ["END", "STOP"], 42, "u-7")
    assert request.extra == {"n": 2, "logprobs": True}
    with collect_degradations() as degraded:  # every time, where the log says it once per process
        body = get_codec(target).encode_request(request)
    mapped, missing = EXPECTED[target]
    assert {k: v for k, v in body.items() if k in OPTION_KEYS} == mapped
    assert "n" not in body and "logprobs" not in body
    assert [key for key in degraded if key.split(":")[1] in ("top_p", "stop", "seed", "user")] == [
        f"{target}:{option}" for option in missing
    ]
    # and back: the target's own spelling decodes to the same neutral options
    back = get_codec(target).decode_request(body)
    expected = {"top_p": 0.9, "stop": ["END", "STOP"], "seed": 42, "user": "u-7"}
    assert {o: getattr(back, o) for o in expected} == {o: (None if o in missing else v) for o, v in expected.items()}


def test_same_codec_round_trip_keeps_every_option() -> None:
    codec = get_codec("openai")
    assert codec.encode_request(codec.decode_request(dict(OPENAI_BODY))) == OPENAI_BODY


def test_one_stop_string_is_one_stop_sequence() -> None:
    request = get_codec("openai").decode_request({"model": "m", "messages": [], "stop": "END"})
    assert request.stop == ["END"]
    assert get_codec("anthropic").encode_request(request)["stop_sequences"] == ["END"]


def test_anthropic_metadata_keeps_its_other_keys_for_anthropic() -> None:
    body = {
        "model": "claude-x",
        "max_tokens": 10,
        "messages": [{"role": "user", "content": "hi"}],
        "metadata": {"user_id": "u-1", "trace": "t"},
    }
    request = get_codec("anthropic").decode_request(dict(body))
    assert (request.user, request.extra) == ("u-1", {"metadata": {"trace": "t"}})
    assert get_codec("anthropic").encode_request(request) == body


@pytest.mark.parametrize(
    ("codec", "body", "message"),
    [
        (
            "openai",
            {"model": "m", "messages": [], "temperature": "hot"},
            "temperature should be an integer or a number",
        ),
        ("openai", {"model": "m", "messages": [], "seed": "42"}, "seed should be an integer"),
        (
            "anthropic",
            {"model": "m", "max_tokens": 1, "messages": [], "stop_sequences": [1]},
            "stop_sequences[0] should be a string",
        ),
        (
            "gemini",
            {"contents": [], "generationConfig": {"topP": "high"}},
            "generationConfig.topP should be an integer or a number",
        ),
        ("openai-responses", {"model": "m", "input": [], "user": 7}, "user should be a string"),
    ],
)
def test_an_option_of_the_wrong_type_is_an_error_naming_it(codec: str, body: dict[str, Any], message: str) -> None:
    with pytest.raises(CodecError) as info:
        get_codec(codec).decode_request(body)
    assert info.value.message == f"The {codec} request cannot be read: {message}."


SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}

# JSON output with a schema, in each provider's spelling.
JSON_OUTPUT: dict[str, dict[str, Any]] = {
    "openai": {
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "place", "schema": SCHEMA, "strict": True},
        }
    },
    "openai-responses": {
        "text": {"format": {"type": "json_schema", "name": "place", "schema": SCHEMA, "strict": True}}
    },
    "anthropic": {"output_config": {"format": {"type": "json_schema", "schema": SCHEMA}}},
    "gemini": {"generationConfig": {"responseMimeType": "application/json", "responseJsonSchema": SCHEMA}},
    "ollama": {"format": SCHEMA},
}


@pytest.mark.parametrize("target", sorted(JSON_OUTPUT))
def test_json_output_reaches_every_provider_in_its_spelling(target: str) -> None:
    request = get_codec("openai").decode_request({"model": "m", "messages": [], **JSON_OUTPUT["openai"]})
    assert request.response_format == ResponseFormat(schema=SCHEMA, name="place", strict=True)
    body = get_codec(target).encode_request(request)
    assert {k: v for k, v in body.items() if k in JSON_OUTPUT[target]} == JSON_OUTPUT[target]
    back = get_codec(target).decode_request(body).response_format
    assert back is not None and back.schema == SCHEMA  # name and strict only where the provider has them


BASES: dict[str, dict[str, Any]] = {
    "openai": {"model": "m", "messages": []},
    "openai-responses": {"model": "m", "input": []},
    "gemini": {"contents": []},
    "ollama": {"model": "m", "messages": [], "stream": False},
}


@pytest.mark.parametrize(
    ("codec", "wire"),
    [
        ("openai", {"response_format": {"type": "json_object"}}),
        ("openai-responses", {"text": {"format": {"type": "json_object"}, "verbosity": "low"}}),
        ("gemini", {"generationConfig": {"responseMimeType": "application/json"}}),
        ("ollama", {"format": "json"}),
    ],
)
def test_any_json_object_round_trips_and_keeps_its_neighbours(codec: str, wire: dict[str, Any]) -> None:
    base = BASES[codec]
    request = get_codec(codec).decode_request(base | wire)
    assert request.response_format == ResponseFormat()
    assert get_codec(codec).encode_request(request) == base | wire


def test_anthropic_has_no_schemaless_json_and_says_so() -> None:
    request = get_codec("openai").decode_request(
        {"model": "m", "messages": [], "response_format": {"type": "json_object"}}
    )
    with collect_degradations() as degraded:
        body = get_codec("anthropic").encode_request(request)
    assert "output_config" not in body
    assert degraded == ["anthropic:response_format"]


def test_the_missing_option_is_logged_in_words(caplog: pytest.LogCaptureFixture) -> None:
    from toolwire.codecs.gemini import GeminiCodec

    request = get_codec("openai").decode_request(dict(OPENAI_BODY))
    with caplog.at_level(logging.WARNING, logger="toolwire.codecs"):
        GeminiCodec().encode_request(request)
    assert "gemini has no 'user' option; toolwire leaves it out of the request." in caplog.text
