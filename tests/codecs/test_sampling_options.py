"""The common sampling options cross providers in each one's own spelling (issue 11.1).

`top_p`, `stop`, `seed` and `user` are neutral fields; a provider without one leaves it out
and says so once; options toolwire does not model (`n`, `logprobs`) go back only to the
codec they came from.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from toolwire.codecs import get_codec
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
def test_openai_options_reach_every_provider_in_its_spelling(target: str, caplog: pytest.LogCaptureFixture) -> None:
    request = get_codec("openai").decode_request(dict(OPENAI_BODY))
    assert (request.top_p, request.stop, request.seed, request.user) == (0.9, ["END", "STOP"], 42, "u-7")
    assert request.extra == {"n": 2, "logprobs": True}
    with caplog.at_level(logging.WARNING, logger="toolwire.codecs"):
        body = get_codec(target).encode_request(request)
    mapped, missing = EXPECTED[target]
    assert {k: v for k, v in body.items() if k in OPTION_KEYS} == mapped
    assert "n" not in body and "logprobs" not in body
    for option in missing:
        assert f"{target} has no {option!r} option; toolwire leaves it out of the request." in caplog.text
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
