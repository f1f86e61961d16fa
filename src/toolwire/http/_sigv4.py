"""AWS Signature Version 4: the request signing Bedrock takes besides its API keys.

Written here, to the AWS SigV4 specification, rather than imported from botocore: signing is
~60 lines of hashing, and botocore would add a 15 MB dependency (and its import time) to every
install for them. It follows botocore's `SigV4Auth` to the byte, which tests/http/test_sigv4.py
checks on many generated requests: the canonical URI is the path with dot segments and empty
segments removed, percent-encoded again (an encoded model id's `%3A` signs as `%253A`), the
query sorted as sent, the payload's SHA-256, and the headers signed are `host`, `content-type`,
`x-amz-date` and, with temporary credentials, `x-amz-security-token`. Imports only the standard
library.
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from urllib.parse import quote, urlsplit

__all__ = ["AwsCredentials", "SigV4Signer"]

_ALGORITHM = "AWS4-HMAC-SHA256"
_DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True, slots=True)
class AwsCredentials:
    """An AWS access key pair, with the session token of temporary credentials."""

    access_key_id: str
    secret_access_key: str = field(repr=False)
    session_token: str | None = field(default=None, repr=False)


def _utc_now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


@dataclass(frozen=True, slots=True)
class SigV4Signer:
    """Signs one service's requests in one region; called with each request's URL, body and headers.

    Attributes:
        credentials: The key pair (and session token) to sign with.
        region: The AWS region (`us-east-1`).
        service: The signing name (`bedrock` for `bedrock-runtime`).
        clock: The current time in UTC (tests pin it).
    """

    credentials: AwsCredentials
    region: str
    service: str
    clock: Callable[[], datetime.datetime] = _utc_now

    def __call__(self, url: str, body: bytes, headers: Mapping[str, str]) -> dict[str, str]:
        """The headers that sign a POST of `body` to `url`: `x-amz-date`, the token, `authorization`."""
        return self.sign("POST", url, body, headers, self.clock())

    def sign(
        self, method: str, url: str, body: bytes, headers: Mapping[str, str], when: datetime.datetime
    ) -> dict[str, str]:
        """The signing headers for a request sent at `when` (its `content-type` is signed when present)."""
        timestamp = when.strftime("%Y%m%dT%H%M%SZ")
        added = {"x-amz-date": timestamp}
        if self.credentials.session_token:
            added["x-amz-security-token"] = self.credentials.session_token
        signed = {"host": _host(url)} | added
        content_type = next((v for k, v in headers.items() if k.lower() == "content-type"), None)
        if content_type is not None:
            signed["content-type"] = content_type
        names = sorted(signed)
        canonical = "\n".join(
            [
                method.upper(),
                _canonical_path(urlsplit(url).path),
                _canonical_query(urlsplit(url).query),
                "".join(f"{name}:{' '.join(signed[name].split())}\n" for name in names),
                ";".join(names),
                hashlib.sha256(body).hexdigest(),
            ]
        )
        scope = f"{timestamp[:8]}/{self.region}/{self.service}/aws4_request"
        to_sign = f"{_ALGORITHM}\n{timestamp}\n{scope}\n{hashlib.sha256(canonical.encode()).hexdigest()}"
        signature = hmac.new(self._key(timestamp[:8]), to_sign.encode(), hashlib.sha256).hexdigest()
        credential = f"{self.credentials.access_key_id}/{scope}"
        added["authorization"] = (
            f"{_ALGORITHM} Credential={credential}, SignedHeaders={';'.join(names)}, Signature={signature}"
        )
        return added

    def _key(self, day: str) -> bytes:
        key = ("AWS4" + self.credentials.secret_access_key).encode()
        for part in (day, self.region, self.service, "aws4_request"):
            key = hmac.new(key, part.encode(), hashlib.sha256).digest()
        return key


def _host(url: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 literal
        host = f"[{host}]"
    if parts.port is not None and parts.port != _DEFAULT_PORTS.get(parts.scheme):
        host = f"{host}:{parts.port}"
    return host


def _canonical_path(path: str) -> str:
    # RFC 3986 dot segments go, and so do empty segments (AWS requires it); then the path is
    # percent-encoded once more, as every AWS service but S3 expects.
    if not path:
        return "/"
    kept: list[str] = []
    for segment in path.split("/"):
        if segment == "..":
            if kept:
                kept.pop()
        elif segment and segment != ".":
            kept.append(segment)
    normalized = ("/" if path.startswith("/") else "") + "/".join(kept) + ("/" if path.endswith("/") and kept else "")
    return quote(normalized, safe="/~")


def _canonical_query(query: str) -> str:
    if not query:
        return ""
    pairs = sorted(pair.partition("=")[::2] for pair in query.split("&"))
    return "&".join(f"{key}={value}" for key, value in pairs)
