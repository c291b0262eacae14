"""Adapts a front end's UI (commands.context.UI) to what the OAuth provider asks of a person."""

from __future__ import annotations

from typing import Any


class ProviderUI:
    """The provider's ``AuthUI`` over any orbmcp UI: terminal, REPL or agent host."""

    def __init__(self, ui: Any) -> None:
        self._ui = ui

    def open_url(self, url: str) -> bool:
        return bool(self._ui.open_url(url))

    def show_url(self, url: str) -> None:
        self._ui.show_url(url)

    def prompt_paste(self) -> str | None:
        result = self._ui.prompt_paste(
            "Paste the final redirect URL from the browser's address bar "
            "(http://127.0.0.1:<port>/callback?...), or type o to open the browser again, c to cancel:"
        )
        return result if isinstance(result, str) else None

    def notify(self, msg: str) -> None:
        self._ui.notify(msg)
