"""What OrbOAuthProvider relies on in the SDK beyond its public API is still there.

The provider overrides a few private methods of ``OAuthClientProvider`` (listed, with the reason
for each, in ``SDK_PRIVATE_OVERRIDES``) and reads one private attribute. ``mcp`` is pinned to the
minor version they were read in; an upgrade that drops or reshapes one fails here, not in a
user's login.
"""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import OAuthClientMetadata
from pydantic import AnyUrl

from orbmcp.auth.provider import SDK_PRIVATE_ATTRIBUTES, SDK_PRIVATE_OVERRIDES, OrbOAuthProvider
from orbmcp.auth.storage import AuthStore
from tests.auth.oauth_server import make_cfg

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", SDK_PRIVATE_OVERRIDES)
def test_each_overridden_private_method_still_exists_with_its_parameters(name: str) -> None:
    sdk = getattr(OAuthClientProvider, name, None)
    assert callable(sdk), f"OAuthClientProvider.{name} is gone: re-read the SDK's flow before upgrading"
    ours = vars(OrbOAuthProvider)[name]
    assert len(inspect.signature(sdk).parameters) == len(inspect.signature(ours).parameters), name
    assert inspect.iscoroutinefunction(sdk) == inspect.iscoroutinefunction(ours), name


def test_every_private_override_is_listed() -> None:
    overridden = {
        name
        for name in vars(OrbOAuthProvider)
        if name.startswith("_")
        and not name.startswith("__")
        and callable(getattr(OAuthClientProvider, name, None))
    }
    assert overridden == set(SDK_PRIVATE_OVERRIDES)


def test_the_private_attributes_read_exist(tmp_path: Path) -> None:
    cfg = make_cfg("https://mcp.example.test/mcp")
    sdk = OAuthClientProvider(
        server_url="https://mcp.example.test/mcp",
        client_metadata=OAuthClientMetadata(redirect_uris=[AnyUrl("http://127.0.0.1/callback")]),
        storage=AuthStore(tmp_path, cfg),
    )
    for name in SDK_PRIVATE_ATTRIBUTES:
        assert hasattr(sdk, name), f"OAuthClientProvider instances no longer have {name}"


def test_mcp_is_pinned_to_the_minor_version_the_overrides_were_read_in() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text()
    pin = re.search(r'"mcp>=(\d+)\.(\d+),<(\d+)\.(\d+)"', pyproject)
    assert pin is not None, "pin mcp to one minor version (mcp>=X.Y,<X.Y+1)"
    major, minor, next_major, next_minor = map(int, pin.groups())
    assert (next_major, next_minor) == (major, minor + 1)
    assert version("mcp").startswith(f"{major}.{minor}.")


def test_the_sdk_log_scrubber_is_installed_by_a_call_not_by_an_import() -> None:
    code = (
        "import logging\n"
        "import orbmcp.auth.provider\n"
        "from orbmcp.auth.sdk_logging import SDK_OAUTH_LOGGER, SdkLogScrubber, install_sdk_log_scrubber\n"
        "def count():\n"
        "    return sum(isinstance(f, SdkLogScrubber) for f in logging.getLogger(SDK_OAUTH_LOGGER).filters)\n"
        "before = count()\n"
        "install_sdk_log_scrubber(); install_sdk_log_scrubber()\n"
        "print(before, count())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.split() == ["0", "1"]
