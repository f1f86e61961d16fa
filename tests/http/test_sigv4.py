"""toolwire's SigV4 signatures equal botocore's, on many generated requests and on the wire."""

from __future__ import annotations

import datetime
import urllib.parse
from typing import Any

import botocore.auth
import pytest
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.http import AwsCredentials, SigV4Signer
from toolwire.testing import ScriptedServer

_MODEL_IDS = st.one_of(
    st.sampled_from(
        [
            "anthropic.claude-sonnet-4-5-20250929-v1:0",
            "us.anthropic.claude-3-7-sonnet-20250219-v1:0",
            "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.meta.llama3-3-70b-instruct-v1:0",
            "mistral.mistral-large-2407-v1:0",
        ]
    ),
    st.text(st.characters(codec="utf-8", blacklist_categories=("Cs",)), min_size=1, max_size=30),
)
_HOSTS = st.sampled_from(
    [
        "https://bedrock-runtime.us-east-1.amazonaws.com",
        "https://bedrock-runtime.eu-central-1.amazonaws.com:443",
        "http://127.0.0.1:4000",
        "http://localhost:80",
        "https://[::1]:8443",
        "https://Example.COM:9000",
    ]
)
_KEYS = st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", min_size=16, max_size=20)
_SECRETS = st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=20, max_size=40)
_WHEN = st.datetimes(min_value=datetime.datetime(2000, 1, 1), max_value=datetime.datetime(2099, 12, 31)).map(
    lambda d: d.replace(microsecond=0, tzinfo=datetime.UTC)
)
_QUERIES = st.one_of(st.just(""), st.sampled_from(["?b=2&a=1", "?x=%20y&x=a", "?flag", "?a=1&a=0"]))
_PATHS = st.sampled_from(["/model/{}/converse", "/model/{}/converse-stream", "/v1//model/./{}/../{}/converse"])


def botocore_signature(
    method: str,
    url: str,
    body: bytes,
    headers: dict[str, str],
    credentials: AwsCredentials,
    region: str,
    when: datetime.datetime,
    monkeypatch: Any,
) -> str:
    """botocore's own `Authorization` header for the request, with its clock pinned to `when`."""
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: when.replace(tzinfo=None))
    request = AWSRequest(method=method, url=url, data=body, headers=headers)
    keys = Credentials(credentials.access_key_id, credentials.secret_access_key, credentials.session_token)
    botocore.auth.SigV4Auth(keys, "bedrock", region).add_auth(request)
    assert request.headers["X-Amz-Date"] == when.strftime("%Y%m%dT%H%M%SZ")
    return str(request.headers["Authorization"])


@settings(max_examples=300, deadline=None)
@given(
    root=_HOSTS,
    path=_PATHS,
    model=_MODEL_IDS,
    query=_QUERIES,
    body=st.binary(max_size=200),
    key_id=_KEYS,
    secret=_SECRETS,
    token=st.one_of(st.none(), _SECRETS),
    region=st.sampled_from(["us-east-1", "eu-central-1", "ap-northeast-1"]),
    when=_WHEN,
    content_type=st.sampled_from(["application/json", "application/json;  charset=utf-8", None]),
)
def test_signatures_equal_botocores(
    root: str,
    path: str,
    model: str,
    query: str,
    body: bytes,
    key_id: str,
    secret: str,
    token: str | None,
    region: str,
    when: datetime.datetime,
    content_type: str | None,
) -> None:
    url = root + path.format(*[urllib.parse.quote(model, safe="")] * path.count("{}")) + query
    headers = {} if content_type is None else {"Content-Type": content_type}
    credentials = AwsCredentials(key_id, secret, token)
    ours = SigV4Signer(credentials, region, "bedrock").sign("POST", url, body, headers, when)
    with pytest.MonkeyPatch.context() as monkeypatch:
        theirs = botocore_signature("POST", url, body, headers, credentials, region, when, monkeypatch)
    assert ours["authorization"] == theirs
    assert ours["x-amz-date"] == when.strftime("%Y%m%dT%H%M%SZ")
    assert ours.get("x-amz-security-token") == token


def test_a_known_signature() -> None:
    # Pinned: a change in the canonical form shows up here even where botocore would change too.
    signer = SigV4Signer(
        AwsCredentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"), "us-east-1", "bedrock"
    )
    when = datetime.datetime(2026, 11, 27, 12, 0, 0, tzinfo=datetime.UTC)
    url = "https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse"
    headers = signer.sign("POST", url, b'{"messages":[]}', {"content-type": "application/json"}, when)
    assert headers == {
        "x-amz-date": "20261127T120000Z",
        "authorization": "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261127/us-east-1/bedrock/aws4_request, "
        "SignedHeaders=content-type;host;x-amz-date, "
        "Signature=" + headers["authorization"].rpartition("Signature=")[2],
    }
    assert len(headers["authorization"].rpartition("Signature=")[2]) == 64


@pytest.mark.parametrize("token", [None, "FwoGZXIvYXdzEXAMPLETOKEN"])
def test_the_client_signs_every_request_as_botocore_would(monkeypatch: pytest.MonkeyPatch, token: str | None) -> None:
    for name in ("AWS_BEARER_TOKEN_BEDROCK", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
    if token is not None:
        monkeypatch.setenv("AWS_SESSION_TOKEN", token)
    model = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
    with ScriptedServer(["one", "two"]) as server:
        client = server.connect(f"bedrock:{model}", api_key=None, region="eu-west-1")
        assert client.complete_sync("hi").text == "one"
        assert "".join(getattr(e, "text", "") for e in client.stream_sync("again")) == "two"
        client.close()
    credentials = AwsCredentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", token)
    for recorded, action in zip(server.requests, ("converse", "converse-stream"), strict=True):
        assert recorded.path == f"/model/{urllib.parse.quote(model, safe='')}/{action}"
        when = datetime.datetime.strptime(recorded.headers["x-amz-date"], "%Y%m%dT%H%M%SZ").replace(tzinfo=datetime.UTC)
        signed = {"content-type": recorded.headers["content-type"], "host": recorded.headers["host"]}
        url = f"http://{recorded.headers['host']}{recorded.path}"
        raw = recorded.raw_body
        theirs = botocore_signature("POST", url, raw, signed, credentials, "eu-west-1", when, monkeypatch)
        assert recorded.headers["authorization"] == theirs
        assert recorded.headers.get("x-amz-security-token") == token
