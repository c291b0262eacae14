"""The client side of the official MCP conformance suite: ``python -m tests.conformance.client URL``.

Not part of the orbmcp package: ``scripts/conformance.sh`` runs it (also runnable as
``python tests/conformance/client.py URL``). The suite (npm ``@modelcontextprotocol/conformance``,
client mode) starts a mock server, then runs ``<command> URL`` with ``MCP_CONFORMANCE_SCENARIO``
naming the scenario and, for some auth scenarios, ``MCP_CONFORMANCE_CONTEXT`` (JSON) carrying
credentials. This client connects through orbmcp's own core (Manager → Supervisor → transport →
OAuth provider), exactly as a configured server would be, and then makes the one tool call the
scenario asks for. It prints one line on success; on failure ``orbmcp: error: ...`` on stderr
(the script matches expected failures against that line) and orbmcp's exit status.

Differences from a user's session, each forced by the suite:

- state lives in a throw-away global dir: each scenario starts unregistered and unauthorized, and
  nothing touches the user's tokens or era cache;
- connections authorize interactively, with a headless browser as the person: the suite's
  authorization servers approve without a user, so fetching the authorization URL and delivering
  its ``Location`` to orbmcp's loopback callback listener completes the authorization-code flow.
  The provider is orbmcp's own (``build_auth(interactive=True)``, as ``orbmcp auth`` uses),
  handed to the core through ``Runtime.auth_factory``;
- elicitation requests are accepted with the defaults of the requested schema (SEP-1034);
- grants the entry format has no settings for (client credentials, private_key_jwt, identity
  assertion) are built from the context with the SDK's extension providers, the same way; their
  tokens still go to orbmcp's ``AuthStore``.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from orbmcp.config.model import AuthConfig, ProjectInfo, ResolvedConfig, ServerConfig
from orbmcp.config.settings import Settings
from orbmcp.errors import AuthError, OrbError, ToolError, UsageError

if TYPE_CHECKING:
    from orbmcp.core.session.manager import Manager
    from tests.auth.browser import HeadlessBrowser

SERVER_NAME = "conformance"
SCENARIO_ENV = "MCP_CONFORMANCE_SCENARIO"
CONTEXT_ENV = "MCP_CONFORMANCE_CONTEXT"
# The client ID that auth/basic-cimd expects when the authorization server supports CIMD.
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
# The suite kills a client after 30 s; a connect (with a full OAuth flow) must fit well inside.
CONNECT_TIMEOUT_MS = 20_000
REQUEST_TIMEOUT_MS = 20_000
# The suite's authorization servers answer at once; a redirect that has not arrived by then never will.
BROWSER_TIMEOUT_S = 15.0
IDP_TIMEOUT_S = 10.0

# The tool call each scenario's mock server checks for; every auth/* server offers "test-tool"
# (and auth/scope-step-up only asks for more scope on tools/call).
_CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    "tools_call": ("add_numbers", {"a": 5, "b": 3}),
    "elicitation-sep1034-client-defaults": ("test_client_elicitation_defaults", {}),
    "sse-retry": ("test_reconnection", {}),
}
_AUTH_TOOL = "test-tool"

AuthFactory = Callable[[ServerConfig], Any]
# Grants without an entry setting, built from the context with the SDK's extension providers.
Grant = Literal["client_credentials", "private_key_jwt", "identity_assertion"]


@dataclass(frozen=True)
class Report:
    """What a run did: one line for the suite's log, and the details the tests check."""

    text: str
    data: dict[str, Any]


@dataclass(frozen=True)
class Plan:
    """What one scenario needs: the server entry's auth, an optional grant override, one call."""

    scenario: str
    auth: AuthConfig | None
    call: tuple[str, dict[str, Any]] | None
    grant: Grant | None = None
    context: Mapping[str, Any] = field(default_factory=dict)


def plan_for(scenario: str, context: Mapping[str, Any]) -> Plan:
    """The plan for a scenario name and its context (credentials); unknown names get the default."""
    call = _CALLS.get(scenario)
    if not scenario.startswith("auth/"):
        # OAuth stays configured: a server that never answers 401 never starts the flow.
        return Plan(scenario, AuthConfig(client_metadata_url=CLIENT_METADATA_URL), call, context=context)
    call = call or (_AUTH_TOOL, {})
    if scenario == "auth/client-credentials-basic":
        return Plan(scenario, None, call, grant="client_credentials", context=context)
    if scenario == "auth/client-credentials-jwt":
        return Plan(scenario, None, call, grant="private_key_jwt", context=context)
    if scenario.startswith("auth/cross-app-access"):
        return Plan(scenario, None, call, grant="identity_assertion", context=context)
    client_id = _str(context, "client_id")
    auth = AuthConfig(
        client_id=client_id,
        client_secret=_str(context, "client_secret"),
        # A pre-registered client is its own identity; otherwise CIMD when offered, else DCR.
        client_metadata_url=None if client_id else CLIENT_METADATA_URL,
    )
    return Plan(scenario, auth, call, context=context)


def _str(context: Mapping[str, Any], key: str) -> str | None:
    value = context.get(key)
    return value if isinstance(value, str) and value else None


def read_context(environ: Mapping[str, str] | None = None) -> tuple[str, dict[str, Any]]:
    env = os.environ if environ is None else environ
    scenario = env.get(SCENARIO_ENV, "").strip()
    raw = env.get(CONTEXT_ENV, "").strip()
    if not raw:
        return scenario, {}
    try:
        context = json.loads(raw)
    except ValueError:
        raise UsageError(f"{CONTEXT_ENV} is not valid JSON") from None
    if not isinstance(context, dict):
        raise UsageError(f"{CONTEXT_ENV} must be a JSON object")
    return scenario, context


def scenario_config(url: str, global_dir: Path, plan: Plan) -> ResolvedConfig:
    """A one-server configuration for the scenario's mock server, state kept in ``global_dir``."""
    server = ServerConfig(
        name=SERVER_NAME,
        transport="streamable-http",
        url=url,
        auth=plan.auth,
        timeout_ms=CONNECT_TIMEOUT_MS,
        request_timeout_ms=REQUEST_TIMEOUT_MS,
        max_retries=0,
        source="config",
    )
    project = ProjectInfo(dir=global_dir, files=(), trusted=False, loaded=False)
    return ResolvedConfig(
        servers={SERVER_NAME: server},
        settings=Settings(),
        warnings=(),
        project=project,
        global_dir=global_dir,
    )


async def run(url: str, environ: Mapping[str, str] | None = None) -> Report:
    """The scenario the environment names, against the suite's mock server at ``url``."""
    scenario, context = read_context(environ)
    plan = plan_for(scenario, context)
    with tempfile.TemporaryDirectory(prefix="orbmcp-conformance-") as tmp:
        return await run_plan(url, Path(tmp), plan)


def main(argv: list[str] | None = None) -> int:
    """Run one scenario; the exit status is orbmcp's for the error that ended it (0 on success)."""
    import anyio

    from orbmcp.commands.outcome import exit_code_for
    from orbmcp.text import one_line

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0].startswith("-"):
        sys.stderr.write("usage: python -m tests.conformance.client URL\n")
        return 2
    try:
        report = anyio.run(run, args[0])
    except OrbError as err:
        sys.stderr.write(f"orbmcp: error: {one_line(err.message)}\n")
        if err.hint:
            sys.stderr.write(f"hint: {one_line(err.hint)}\n")
        return int(exit_code_for(err))
    sys.stdout.write(one_line(report.text) + "\n")
    return 0


async def run_plan(url: str, global_dir: Path, plan: Plan) -> Report:
    """Connect through the Manager, make the scenario's call, and report what happened."""
    from orbmcp.core.session.manager import Manager
    from tests.auth.browser import HeadlessBrowser

    browser = HeadlessBrowser(mode="callback", timeout_s=BROWSER_TIMEOUT_S)
    config = scenario_config(url, global_dir, plan)
    error: OrbError | None = None
    message: Report | None = None
    async with Manager(config, retries=False) as manager:
        manager.runtime.elicitation = accept_with_defaults
        manager.runtime.auth_factory = auth_factory(plan, global_dir, browser)
        try:
            message = await _exercise(manager, plan)
        except AuthError as err:
            error = _with_browser_errors(err, browser)
        except OrbError as err:
            error = err  # raised below, outside the Manager's task group: no ExceptionGroup
    if error is not None:
        raise error
    assert message is not None
    return message


async def _exercise(manager: Manager, plan: Plan) -> Report:
    from orbmcp.core.tooling.calls import call_tool

    sup = await manager.ready(SERVER_NAME)
    data: dict[str, Any] = {
        "scenario": plan.scenario,
        "protocolVersion": sup.snap.protocol_version,
        "tools": sorted(t.name for t in manager.tools.for_server(SERVER_NAME)),
    }
    text = f"{plan.scenario or 'conformance'}: connected ({sup.snap.protocol_version})"
    if plan.call is None:
        return Report(text, data)
    tool, arguments = plan.call
    if tool not in data["tools"]:
        raise ToolError(f"the server does not offer tool '{tool}'", server=SERVER_NAME)
    result = await call_tool(sup, tool, arguments)
    if result.is_error:
        raise ToolError(f"tool '{tool}' returned an error: {result.text()[:200]}", server=SERVER_NAME)
    data["call"] = {"tool": tool, "text": result.text()}
    return Report(f"{text}; {tool}: {result.text()[:200]}", data)


def _with_browser_errors(err: AuthError, browser: HeadlessBrowser) -> AuthError:
    if browser.errors:
        err.template += f" (headless browser: {', '.join(browser.errors)})"
    return err


# -- elicitation -----------------------------------------------------------------------------------


def schema_defaults(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The ``default`` of every top-level property of an elicitation schema that declares one."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return {}
    return {
        name: spec["default"]
        for name, spec in properties.items()
        if isinstance(name, str) and isinstance(spec, dict) and "default" in spec
    }


async def accept_with_defaults(context: Any, params: Any) -> Any:
    """SDK elicitation callback: accept a form with the schema's defaults; refuse URL mode."""
    import mcp_types as types

    if isinstance(params, types.ElicitRequestFormParams):
        return types.ElicitResult(action="accept", content=schema_defaults(params.requested_schema))
    return types.ElicitResult(action="decline")


# -- authorization ----------------------------------------------------------------------------------


def auth_factory(plan: Plan, global_dir: Path, browser: HeadlessBrowser) -> AuthFactory:
    """``Runtime.auth_factory`` for the plan: the provider each connection of the scenario uses.

    Connections of a normal session never authorize interactively (a person does, through
    ``orbmcp auth``); here the headless browser is that person, so the provider is orbmcp's own,
    built interactive — the one ``orbmcp auth`` uses — including step-up mid-session.
    """
    grant = grant_factory(plan, global_dir)

    def build(cfg: ServerConfig) -> Any:
        if plan.grant is not None:
            return grant(cfg)
        if cfg.auth is None:
            return None
        from orbmcp.auth.provider import build_auth

        return build_auth(cfg, global_dir, interactive=True, ui=browser, callback_timeout_s=BROWSER_TIMEOUT_S)

    return build


def grant_factory(plan: Plan, global_dir: Path) -> AuthFactory:
    """The provider for a grant the entry format has no settings for; tokens go to orbmcp's store."""

    def build(cfg: ServerConfig) -> Any:
        from orbmcp.auth.storage import AuthStore

        assert cfg.url is not None
        store = AuthStore(global_dir, cfg)
        context = plan.context
        client_id = _required(context, "client_id", plan.scenario)
        # The context names no issuer: the authorization server is the one the server's protected
        # resource metadata names (the SDK's discovery), which is what "issuer=None" means.
        from mcp.shared.exceptions import MCPDeprecationWarning

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)  # "pass issuer=": see above
            if plan.grant == "client_credentials":
                from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider

                return ClientCredentialsOAuthProvider(
                    cfg.url,
                    store,
                    client_id,
                    _required(context, "client_secret", plan.scenario),
                    token_endpoint_auth_method="client_secret_basic",
                )
            if plan.grant == "private_key_jwt":
                from mcp.client.auth.extensions.client_credentials import (
                    PrivateKeyJWTOAuthProvider,
                    SignedJWTParameters,
                )

                signer = SignedJWTParameters(
                    issuer=client_id,
                    subject=client_id,
                    signing_key=_required(context, "private_key_pem", plan.scenario),
                    signing_algorithm=_str(context, "signing_algorithm") or "RS256",
                )
                return PrivateKeyJWTOAuthProvider(
                    cfg.url, store, client_id, assertion_provider=signer.create_assertion_provider()
                )
        if plan.grant == "identity_assertion":
            return _identity_assertion_auth(cfg, store, context, plan.scenario)
        raise UsageError(f"unknown grant '{plan.grant}' for scenario '{plan.scenario}'")

    return build


def _required(context: Mapping[str, Any], key: str, scenario: str) -> str:
    value = _str(context, key)
    if value is None:
        raise UsageError(f"{CONTEXT_ENV} of scenario '{scenario}' lacks '{key}'")
    return value


# RFC 8693 / SEP-990 identifiers, not secrets.
TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG_TYPE = "urn:ietf:params:oauth:token-type:id-jag"


def _identity_assertion_auth(cfg: ServerConfig, store: Any, context: Mapping[str, Any], scenario: str) -> Any:
    """SEP-990 enterprise-managed authorization: ID token → ID-JAG at the IdP → access token at the AS.

    The SDK's provider wants the authorization server's issuer as configuration; the suite's
    context names only the IdP, so the issuer is read once from the server's protected resource
    metadata (RFC 9728) on the first request.
    """
    import httpx2
    from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider

    from orbmcp.auth.urlpolicy import check_fetch_url
    from orbmcp.net.http import make_http_client

    assert cfg.url is not None
    server_url = cfg.url
    id_token = _required(context, "idp_id_token", scenario)
    idp_token_endpoint = _required(context, "idp_token_endpoint", scenario)
    check_fetch_url(idp_token_endpoint, server_url, server=cfg.name)

    async def id_jag(audience: str, resource: str) -> str:
        form = {
            "grant_type": TOKEN_EXCHANGE_GRANT,
            "subject_token": id_token,
            "subject_token_type": ID_TOKEN_TYPE,
            "requested_token_type": ID_JAG_TYPE,
            "audience": audience,
            "resource": resource,
        }
        idp_client = _str(context, "idp_client_id")
        if idp_client:
            form["client_id"] = idp_client
        async with make_http_client(timeout_s=IDP_TIMEOUT_S, request_timeout_s=IDP_TIMEOUT_S) as client:
            response = await client.post(idp_token_endpoint, data=form)
        if response.status_code != 200:
            raise AuthError(
                f"the identity provider refused the token exchange (HTTP {response.status_code})",
                server=cfg.name,
            )
        token = response.json().get("access_token")
        if not isinstance(token, str) or not token:
            raise AuthError("the identity provider returned no ID-JAG", server=cfg.name)
        return token

    class _Lazy(httpx2.Auth):
        """Resolves the issuer from protected resource metadata, then delegates to the SDK provider."""

        requires_response_body = True

        def __init__(self) -> None:
            self._inner: IdentityAssertionOAuthProvider | None = None

        async def async_auth_flow(self, request: httpx2.Request) -> Any:
            if self._inner is None:
                prm_url = _prm_url(server_url)
                check_fetch_url(prm_url, server_url, server=cfg.name)
                response = yield httpx2.Request("GET", prm_url)
                await response.aread()
                issuer = _first_authorization_server(response, cfg.name)
                check_fetch_url(issuer, server_url, server=cfg.name)
                self._inner = IdentityAssertionOAuthProvider(
                    server_url,
                    store,
                    _required(context, "client_id", scenario),
                    _required(context, "client_secret", scenario),
                    issuer,
                    id_jag,
                    token_endpoint_auth_method="client_secret_basic",
                )
            flow = self._inner.async_auth_flow(request)
            outgoing = await flow.__anext__()
            while True:
                response = yield outgoing
                try:
                    outgoing = await flow.asend(response)
                except StopAsyncIteration:
                    return

    return _Lazy()


def _prm_url(server_url: str) -> str:
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(server_url)
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme, parts.netloc, f"/.well-known/oauth-protected-resource{path}", "", ""))


def _first_authorization_server(response: Any, server: str) -> str:
    try:
        servers = response.json().get("authorization_servers") if response.status_code == 200 else None
    except ValueError:
        servers = None
    if not isinstance(servers, list) or not servers or not isinstance(servers[0], str):
        raise AuthError(
            f"server '{server}' publishes no protected resource metadata naming an authorization server",
            server=server,
        )
    return servers[0]


if __name__ == "__main__":
    raise SystemExit(main())
