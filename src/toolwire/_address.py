"""Where a `provider:model` target is reached: URLs, key and auth headers, checked without any I/O.

`connect_http` builds a client on it, and `check_target` lets a gateway check its routes at
start with the very same rules. Imports only the provider table, the errors and the standard library.
"""

from __future__ import annotations

import dataclasses
import os
import re
import urllib.parse
from collections.abc import Mapping
from typing import Any

from toolwire.errors import AuthenticationError
from toolwire.http import AwsCredentials, Signer, SigV4Signer, redact_urls
from toolwire.providers import PROVIDERS, Provider

__all__ = [
    "PARAM_OPTIONS",
    "Address",
    "api_root",
    "auth_headers",
    "check_target",
    "resolve_address",
    "secret_header_values",
]

# Options every client accepts; the rest are per provider (`Provider.options`).
PARAM_OPTIONS = ("max_tokens", "temperature", "parallel_tool_calls", "extra")
_CLIENT_OPTIONS = (
    "retry_base_delay",
    "retry_max_delay",
    "headers",
    "access_token",
    "deadline",
    "max_connections",
    *PARAM_OPTIONS,
)


def _parse_target(target: str) -> tuple[Provider, str]:
    name, sep, model = target.partition(":")
    known = ", ".join(sorted(PROVIDERS))
    provider = PROVIDERS.get(name)
    if provider is None:
        raise ValueError(f"Unknown provider {name!r} in {target!r}; use one of: {known}.")
    if not sep or not model:
        raise ValueError(
            f"No model in {target!r}; write 'provider:model', e.g. '{name}:my-model' (providers: {known})."
        )
    return provider, model


def _option_values(provider: Provider, options: Mapping[str, Any]) -> dict[str, str]:
    values: dict[str, str] = {}
    for name, (env_names, default) in provider.options.items():
        value = options.get(name) or next((os.environ[e] for e in env_names if os.environ.get(e)), default)
        if value is None:
            env = " or ".join(env_names)
            raise ValueError(f"{provider.name} needs the {name!r} option; pass {name}=... to connect() or set {env}.")
        values[name] = str(value)
    location = values.get("location")
    if location is not None:
        # Vertex's global endpoint has no region prefix in its host name.
        values["location_host"] = (
            "aiplatform.googleapis.com" if location == "global" else f"{location}-aiplatform.googleapis.com"
        )
    return values


def _resolve_key(provider: Provider, api_key: str | None) -> str | None:
    key = api_key or next((os.environ[e] for e in provider.key_env if os.environ.get(e)), None)
    if key is None and provider.key_required:
        where = " or ".join(provider.key_env)
        raise AuthenticationError(
            f"No API key for {provider.name}: pass api_key=... to connect() or set {where}.",
            provider=provider.name,
        )
    return key


_SECRET_HEADER = ("auth", "key", "token", "secret", "cookie", "signature", "password")


def secret_header_values(headers: Mapping[str, str]) -> list[str]:
    """Values of `headers=` that carry credentials: scrubbed from errors like the API key."""
    return [str(v) for k, v in headers.items() if any(word in k.lower() for word in _SECRET_HEADER)]


def auth_headers(provider: Provider, key: str | None) -> dict[str, str]:
    """The provider's fixed headers plus the key, where and how it travels."""
    headers = dict(provider.headers)
    if key is None or provider.auth == "none":
        return headers
    if provider.auth in ("bearer", "aws"):  # a Bedrock API key goes as a bearer token
        headers["authorization"] = f"Bearer {key}"
    else:
        headers[provider.auth] = key
    return headers


_VERSION = re.compile(r"/v\d+(?:(?:alpha|beta)\d*)?$")


def api_root(provider: Provider, base_url: str) -> str:
    """The URL the provider's paths go below: `base_url`, plus the version its SDK would add.

    Raises:
        ValueError: When `base_url` is not an http(s) URL with a host, or carries a query string or
            fragment (the provider's paths would land inside it: `/v1?token=X/chat/completions`).
    """
    parts = urllib.parse.urlsplit(base_url)
    shown = redact_urls(base_url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"base_url {shown!r} for {provider.name} is not an http(s) URL; {provider.address_hint()}.")
    if parts.query or parts.fragment or base_url.rstrip().endswith(("?", "#")):
        raise ValueError(
            f"base_url {shown!r} for {provider.name} has a query string or fragment, which the request paths "
            "would be appended to; remove it and pass a token as the API key (api_key_env) instead."
        )
    root = base_url.rstrip("/")
    if provider.version_segment and not _VERSION.search(parts.path.rstrip("/")):
        root += provider.version_segment
    return root


def check_target(target: str, *, api_key: str | None = None, base_url: str | None = None, **options: Any) -> str:
    """Check what `connect_http` would check, without building a client; return the call URL.

    A gateway checks its routes at start with it, so a wrong route is said once, not per request.

    Raises:
        ValueError: For an unknown provider, a missing model, a missing or malformed base URL or option.
        AuthenticationError: When the provider needs a key and none was given or found.
    """
    return resolve_address(target, api_key, base_url, options).url


@dataclasses.dataclass(frozen=True, slots=True)
class Address:
    """Where one `provider:model` is reached: its provider, model, key and call URLs."""

    provider: Provider
    model: str
    key: str | None
    url: str
    stream_url: str
    signer: Signer | None = None
    secrets: tuple[str, ...] = ()


def resolve_address(target: str, api_key: str | None, base_url: str | None, options: Mapping[str, Any]) -> Address:
    """The checked address of `target` (what `connect_http` and `check_target` both need)."""
    provider, model = _parse_target(target)
    unknown = sorted(set(options) - set(_CLIENT_OPTIONS) - set(provider.options))
    if unknown:
        allowed = ", ".join(sorted({*_CLIENT_OPTIONS, *provider.options}))
        raise ValueError(f"Unknown option(s) {', '.join(map(repr, unknown))} for {provider.name}; known: {allowed}.")
    values = _option_values(provider, options)
    url = base_url or provider.base_url
    if url is None:
        raise ValueError(f"{provider.name} needs base_url=..., the server's OpenAI-compatible URL ending in /v1.")
    key = _resolve_key(provider, api_key or options.get("access_token"))
    signer = _aws_signer(provider, values) if provider.auth == "aws" and key is None else None
    root = api_root(provider, url.format(**values))
    in_path = urllib.parse.quote(model, safe="") if provider.quote_model else model
    return Address(
        provider=provider,
        model=model,
        key=key,
        url=root + provider.path.format(model=in_path, **values),
        stream_url=root + provider.stream_path.format(model=in_path, **values),
        signer=signer,
        secrets=(values.get("aws_secret_access_key", ""), values.get("aws_session_token", "")) if signer else (),
    )


def _aws_signer(provider: Provider, values: Mapping[str, str]) -> Signer:
    """SigV4 from the `aws_*` options (or their variables), when no Bedrock API key was found."""
    key_id, secret = values.get("aws_access_key_id"), values.get("aws_secret_access_key")
    if not key_id or not secret:
        looked = ", ".join([*provider.key_env, "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"])
        raise AuthenticationError(
            f"No credentials for {provider.name}: pass api_key=... (a Bedrock API key) or set "
            f"{provider.key_env[0]}, or set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (plus AWS_SESSION_TOKEN "
            f"for temporary credentials) to sign with SigV4; looked at {looked}.",
            provider=provider.name,
        )
    credentials = AwsCredentials(key_id, secret, values.get("aws_session_token") or None)
    return SigV4Signer(credentials, values["region"], "bedrock")
