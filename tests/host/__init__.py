"""Tests of orbmcp.host, the embedding API."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from orbmcp.config.model import ResolvedConfig
    from orbmcp.host import McpExtension


def handed(ext: McpExtension, config: ResolvedConfig) -> McpExtension:
    """``ext`` on a configuration resolved by the test (a global dir of its own, ...): orbmcp's
    own hook, not the public API; the extension then does not follow the server registry."""
    ext._config, ext._follows_registry = config, False
    return ext
