"""The redactor: a table of texts and their redacted forms, and properties over generated text."""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from orbmcp.redact import MASK, mask_value, redact, redact_field, redact_mapping

M = MASK

TABLE = [
    # The basic cases: a header, URL userinfo and query, JSON secrets, a JWT.
    ("Authorization: Bearer abc", f"Authorization: Bearer {M}"),
    ("Authorization: Token abc", f"Authorization: {M}"),
    ("https://u:p@h/x?code=1&sig=2&q=ok", f"https://{M}:{M}@h/x?code={M}&sig={M}&q=ok"),
    ('{"refresh_token":"r-1","client_secret":"c-1"}', f'{{"refresh_token":"{M}","client_secret":"{M}"}}'),
    ("got eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl back", f"got {M} back"),
    # Authorization in any scheme and quoting; the scheme is kept only when it is a known one.
    ("authorization: basic dXNlcjpwYXNz", f"authorization: basic {M}"),
    ("Proxy-Authorization: Bearer abc", f"Proxy-Authorization: Bearer {M}"),
    ("X-Authorization: Bearer abc", f"X-Authorization: Bearer {M}"),
    ("Authorization: abc123", f"Authorization: {M}"),
    ("Authorization: Bearer", "Authorization: Bearer"),
    ('{"Authorization": "Bearer abc.def"}', f'{{"Authorization": "Bearer {M}"}}'),
    ('{"authorization": "Token abc"}', f'{{"authorization": "{M}"}}'),
    ("curl -H 'Authorization: Bearer abc' https://x", f"curl -H 'Authorization: Bearer {M}' https://x"),
    (
        "[(b'authorization', b'Bearer abc'), (b'host', b'x')]",
        f"[(b'authorization', b'Bearer {M}'), (b'host', b'x')]",
    ),
    ('Authorization: Digest username="a", response="b" tail', f"Authorization: Digest {M} tail"),
    ('{\\"Authorization\\": \\"Bearer abc\\"}', f'{{\\"Authorization\\": \\"Bearer {M}\\"}}'),
    (
        "Authorization: Bearer a, Authorization: Bearer b",
        f"Authorization: Bearer {M}, Authorization: Bearer {M}",
    ),
    ("Authorization failed for server x", "Authorization failed for server x"),
    # Key/value secrets in every syntax, prefixed and camelCase forms.
    ("api_key=abc q=ok", f"api_key={M} q=ok"),
    ("x-api-key: abc", f"x-api-key: {M}"),
    ("private_key = 'abc'", f"private_key = '{M}'"),
    ("password: hunter2, user: bob", f"password: {M}, user: bob"),
    ("secret=abc&other=1", f"secret={M}&other=1"),
    ("token: abc (expired)", f"token: {M} (expired)"),
    ("db_password=hunter2", f"db_password={M}"),
    ("AWS_SECRET_ACCESS_KEY=abc", f"AWS_SECRET_ACCESS_KEY={M}"),
    ("accessToken=abc clientSecret=def", f"accessToken={M} clientSecret={M}"),
    ("Mcp-Session-Id: 1f2e-3d4c", f"Mcp-Session-Id: {M}"),
    ("--api-key abc --verbose", f"--api-key {M} --verbose"),
    ("--password=abc", f"--password={M}"),
    ("'password': b'abc'", f"'password': b'{M}'"),
    ('"password": "cut off', f'"password": "{M}'),
    ('"token": "a\\"b", "n": 1', f'"token": "{M}", "n": 1'),
    ("error:password=abc", f"error:password={M}"),
    ('{"token": null, "secret": true}', '{"token": null, "secret": true}'),
    ("Cookie: a=b; c=d", f"Cookie: {M}"),
    ("Set-Cookie: sid=abc; Path=/; HttpOnly", f"Set-Cookie: {M}; HttpOnly"),
    # OAuth codes, verifiers and state.
    (
        "grant_type=authorization_code&code=SplxlOBeZQQYbYS6WxSbIA&code_verifier=dBjftJeZ4CVP",
        f"grant_type=authorization_code&code={M}&code_verifier={M}",
    ),
    ("code=SplxlOBeZQQYbYS6WxSbIA", f"code={M}"),
    (
        "https://app/cb?state=xyz&code=abc#access_token=t",
        f"https://app/cb?state={M}&code={M}#access_token={M}",
    ),
    (
        "https://h/mcp?api_key=k1&apikey=k2&key=k3&token=k4",
        f"https://h/mcp?api_key={M}&apikey={M}&key={M}&token={M}",
    ),
    (
        "https://s3/o?X-Amz-Signature=ab&X-Amz-Credential=cd",
        f"https://s3/o?X-Amz-Signature={M}&X-Amz-Credential={M}",
    ),
    # URL userinfo: the whole userinfo goes, since a token is often the user name.
    ("https://user:pw@host/x", f"https://{M}:{M}@host/x"),
    ("https://ghtoken@github.com/o/r.git", f"https://{M}@github.com/o/r.git"),
    ("https://u:p@ss@host/x", f"https://{M}:{M}@host/x"),
    # Value patterns as a backstop.
    ("ghp_abcdefghijklmnopqrstuvwxyz0123", M),
    ("github_pat_11ABCDEFG0123456789_abcdefghij", M),
    ("xoxb-1234567890-abcdefghij", M),
    ("xoxp-1234567890-abcdefghij", M),
    ("key sk-proj-abcdefghijklmnop1234", f"key {M}"),
    ("AKIAABCDEFGHIJKLMNOP", M),
    ("-----BEGIN PRIVATE KEY-----\nMIIEvQIB\n-----END PRIVATE KEY-----", M),
    # Left alone: nothing secret-looking.
    ("q=ok&page=2", "q=ok&page=2"),
    (
        "token_type: Bearer, token_endpoint=https://as/token",
        "token_type: Bearer, token_endpoint=https://as/token",
    ),
    ("password_file=/etc/pw expires_in=3600", "password_file=/etc/pw expires_in=3600"),
    ("exit code=1, code: -32601, code: invalid_grant", "exit code=1, code: -32601, code: invalid_grant"),
    ("state: ready", "state: ready"),
    (
        "The password is wrong. Your token expired, please log in.",
        "The password is wrong. Your token expired, please log in.",
    ),
    ("mailto:someone@example.com", "mailto:someone@example.com"),
    ("https://example.com/a?b=c", "https://example.com/a?b=c"),
    ("", ""),
]


@pytest.mark.parametrize(("text", "expected"), TABLE)
def test_redaction_table(text: str, expected: str) -> None:
    assert redact(text) == expected
    assert redact(expected) == expected


def test_extra_secrets_are_masked_exactly_including_json_and_url_forms() -> None:
    secret = 'p@ss"w/rd'
    text = f'raw={secret} json="p@ss\\"w/rd" url=p%40ss%22w%2Frd short=abc'
    out = redact(text, extra_secrets=[secret, "abc", ""])
    assert out == f'raw={M} json="{M}" url={M} short=abc'


def test_a_secret_with_a_lone_surrogate_masks_itself_only() -> None:
    # An env value that was not UTF-8 (os.environ keeps its bytes as surrogates) or a lone
    # surrogate from JSON: it must not turn every other line into the mask.
    escaped, lone = "ab\udc80cdef", "x\ud800yyyy"
    secrets = [escaped, lone, "ordinary-secret"]
    assert redact("server a: connection refused", extra_secrets=secrets) == "server a: connection refused"
    text = f"one {escaped} two {lone} three ab%80cdef four ordinary-secret"
    assert redact(text, extra_secrets=secrets) == f"one {M} two {M} three {M} four {M}"


def test_extra_secret_longest_first_and_inside_words() -> None:
    assert redact("xxSECRETVALUEyy SECRET", extra_secrets=["SECRET", "SECRETVALUE"]) == f"xx{M}yy {M}"


def test_extra_secret_that_is_part_of_the_mask_is_ignored() -> None:
    assert redact("redacted stays", extra_secrets=["redacted", "dact"]) == "redacted stays"


def test_never_raises_on_wrong_input_type() -> None:
    assert redact(b"token=abc") == f"b'token={M}'"  # type: ignore[arg-type]
    assert redact(12345) == "12345"  # type: ignore[arg-type]


def test_redact_field_uses_the_field_name_as_a_key() -> None:
    assert redact_field("code", "SplxlOBeZQQYbYS6WxSbIA") == M
    assert redact_field("code", "-32601") == "-32601"
    assert redact_field("token", "abc def") == f"{M} def"
    assert redact_field("reason", "retry after password=x") == f"retry after password={M}"
    assert redact_field("url", "https://h/?sig=1") == f"https://h/?sig={M}"


def test_mask_value_keeps_only_a_known_scheme() -> None:
    assert mask_value("Bearer abc") == f"Bearer {M}"
    assert mask_value("Basic dXNlcg==") == f"Basic {M}"
    assert mask_value("Token abc") == M
    assert mask_value("abc") == M
    assert mask_value("Bearer") == M
    assert mask_value("") == ""


def test_redact_mapping_masks_sensitive_keys_at_any_depth() -> None:
    data = {
        "a": [{"b": {"refresh_token": "r1", "client_secret": "c1", "keep": "k"}}],
        "headers": {"Authorization": "Bearer x", "X-Api-Key": "y", "Accept": "json"},
        "tokens": {"access": "t1", "expires": 5},
        "clientSecret": "cs",
        "Set-Cookie": "sid=1",
        "token_type": "Bearer",
        "token_endpoint": "https://as/token",
        "url": "https://u:p@h/?code=1",
        "note": "password=hunter2",
        "count": 3,
        "ok": True,
        "none": None,
        "pair": ("x", "token=abc"),
    }
    out = redact_mapping(data)
    assert out == {
        "a": [{"b": {"refresh_token": M, "client_secret": M, "keep": "k"}}],
        "headers": {"Authorization": f"Bearer {M}", "X-Api-Key": M, "Accept": "json"},
        "tokens": {"access": M, "expires": M},
        "clientSecret": M,
        "Set-Cookie": M,
        "token_type": "Bearer",
        "token_endpoint": "https://as/token",
        "url": f"https://{M}:{M}@h/?code={M}",
        "note": f"password={M}",
        "count": 3,
        "ok": True,
        "none": None,
        "pair": ("x", f"token={M}"),
    }
    assert data["headers"] == {"Authorization": "Bearer x", "X-Api-Key": "y", "Accept": "json"}


def test_redact_mapping_handles_odd_objects_and_depth() -> None:
    class Opaque:
        def __str__(self) -> str:
            return "Opaque(password=hunter2)"

    assert redact_mapping({"x": Opaque()}) == {"x": f"Opaque(password={M})"}
    deep: object = "token=abc"
    for _ in range(200):
        deep = [deep]
    flat = redact_mapping(deep)
    while isinstance(flat, list):
        flat = flat[0]
    assert flat == M


# --- properties ---------------------------------------------------------------------------

SENSITIVE_KEYS = [
    "api_key",
    "x-api-key",
    "private_key",
    "password",
    "secret",
    "token",
    "client_secret",
    "code_verifier",
    "refresh_token",
    "access_token",
    "id_token",
    "session",
    "mcp-session-id",
    "cookie",
    "db_password",
    "aws_secret_access_key",
    "apiKey",
    "accessToken",
    "GITHUB_TOKEN",
    "passwd",
    "Set-Cookie",
]
SYNTAXES = [
    "{k}={s}",
    "{k}: {s}",
    "{k}:{s}",
    "{k} = {s}",
    '"{k}": "{s}"',
    '"{k}":"{s}"',
    "'{k}': '{s}'",
    "{k}='{s}'",
    '{{"{k}": "{s}", "x": 1}}',
    '{{\\"{k}\\": \\"{s}\\"}}',
    "--{k} {s}",
    "--{k}={s}",
    "{k}={s}; Path=/",
    "https://host/p?{k}={s}&q=ok",
]
QUERY_KEYS = ["code", "state", "sig", "signature", "key", "apikey", "assertion", "client_secret", "password"]
HEADER_SYNTAXES = [
    "Authorization: Bearer {s}",
    "Authorization: {s}",
    "Authorization: Token {s}",
    "authorization: Basic {s}",
    '"Authorization": "Bearer {s}"',
    "'Proxy-Authorization': 'DPoP {s}'",
    "https://{s}@host/x",
    "https://user:{s}@host/x",
    "https://host/x?q=ok&{k}={s}",
]
secrets = st.from_regex(r"[A-Za-z0-9]{16,40}", fullmatch=True)
context = st.sampled_from(["", "note ", "x=1 ", "ERROR ", "{", "[", "line1\n", "a, "])
after = st.sampled_from(["", " trailing", "\nnext line", ", more", " q=ok"])


@given(st.text())
@settings(max_examples=200)
def test_redact_never_raises_and_is_idempotent_on_any_text(text: str) -> None:
    once = redact(text)
    assert isinstance(once, str)
    assert redact(once) == once


FRAGMENTS = [
    "password",
    "token",
    "api_key",
    "Authorization",
    "Proxy-Authorization",
    "Cookie",
    "session",
    "code",
    "Bearer ",
    "Basic ",
    "Token ",
    "Digest ",
    ": ",
    ":",
    "=",
    " = ",
    '"',
    "'",
    "\\",
    '\\"',
    " ",
    ",",
    ";",
    "&",
    "?",
    "#",
    "--",
    "-",
    "://",
    "https://",
    "@",
    "\n",
    "b'",
    "{",
    "}",
    "<redacted>",
    "<",
    ">",
    "eyJhbGciOiJIUzI1NiJ9.",
    "ghp_abcdefghijklmnopqrstuvwxyz",
    "sk-",
    "AKIA",
    "SplxlOBeZQQYbYS6WxSbIA1",
    "abc",
    "null",
]
fragment_text = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=4), max_size=25).map("".join)


@given(fragment_text, st.lists(st.sampled_from(["abcd", "token", "Bearer x", "s3cr3t!"]), max_size=2))
@settings(max_examples=500, suppress_health_check=[HealthCheck.too_slow])
def test_redact_is_idempotent_on_secret_shaped_fragments(text: str, extra: list[str]) -> None:
    once = redact(text, extra_secrets=extra)
    assert redact(once, extra_secrets=extra) == once
    for secret in extra:
        assert secret not in once


@given(st.sampled_from(SENSITIVE_KEYS), st.sampled_from(SYNTAXES), secrets, context, after)
@settings(max_examples=150)
def test_planted_secret_after_a_sensitive_key_never_leaks(
    key: str, syntax: str, secret: str, before: str, tail: str
) -> None:
    text = before + syntax.format(k=key, s=secret) + tail
    assume(secret not in (before + syntax.format(k=key, s="") + tail))
    assert secret not in redact(text), text


@given(st.sampled_from(QUERY_KEYS), st.sampled_from(HEADER_SYNTAXES), secrets, context, after)
@settings(max_examples=200)
def test_planted_secret_in_headers_urls_and_query_never_leaks(
    key: str, syntax: str, secret: str, before: str, tail: str
) -> None:
    text = before + syntax.format(k=key, s=secret) + tail
    assume(secret not in (before + syntax.format(k=key, s="") + tail))
    assert secret not in redact(text), text


WORDS = [
    "the", "server", "password", "token", "secret", "session", "key", "code", "state", "cookie",
    "authorization", "Bearer", "is", "was", "expired", "wrong", "please", "log", "in", "again",
    "tool", "call", "failed", "after", "retries", "connected", "to", "GitHub", "and", "ready",
]  # fmt: skip
sentences = st.lists(
    st.tuples(st.sampled_from(WORDS), st.sampled_from(["", "", "", ",", ".", "!", "?"])),
    min_size=1,
    max_size=20,
).map(lambda ws: " ".join(w + p for w, p in ws))


@given(sentences)
@settings(max_examples=150)
def test_plain_english_is_left_unchanged(text: str) -> None:
    assert redact(text) == text


def test_short_lines_need_no_more_than_their_own_masks() -> None:
    lines = {
        "server github state starting -> ready in 412 ms": "server github state starting -> ready in 412 ms",
        "GET https://api.example.com/mcp?page=2 200 OK": "GET https://api.example.com/mcp?page=2 200 OK",
        "Authorization: Bearer abcdef0123456789": "Authorization: Bearer <redacted>",
        '{"jsonrpc":"2.0","id":7,"result":{"tools":[]}}': '{"jsonrpc":"2.0","id":7,"result":{"tools":[]}}',
        "npm WARN deprecated some-package@1.0.0: use other": "npm WARN deprecated some-package@1.0.0: use other",
    }
    assert {line: redact(line) for line in lines} == lines


# Each hostile pattern repeated REPEAT times: 300 to 900 KB per line.
REPEAT = 40000
ADVERSARIAL = {
    "key chain": "token=" * 2 * REPEAT,
    "header chain": "Authorization: " * REPEAT,
    "bearer chain": "Authorization: Bearer " * REPEAT,
    "cookie chain": "Cookie=a;" * REPEAT,
    "open quotes": 'password: "' * REPEAT,
    "long key": "password" * 2 * REPEAT + "=x",
    "schemes": "https://" * REPEAT + "@",
}
# Linear matching takes at most 0.3 s a line here even on a loaded machine; the quadratic
# versions of these patterns took 1.5 to 4 s a line at a quarter of this length, so 24 s and more
# at this one on a quiet machine. The bound tells those two apart with room on both sides; it is
# no speed budget.
NOT_QUADRATIC_S = 10.0


@pytest.mark.parametrize("line", list(ADVERSARIAL.values()), ids=list(ADVERSARIAL))
def test_hostile_long_lines_stay_linear(line: str) -> None:
    start = time.perf_counter()
    out = redact(line)
    assert time.perf_counter() - start < NOT_QUADRATIC_S
    assert redact(out) == out
