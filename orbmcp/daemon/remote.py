"""A client's terminal as the daemon sees it: a ``Console`` whose writes are frames to the client.

Output written by the renderer or a progress bar becomes ``out``/``err`` frames. A question (a
line the person types, stdin for ``call -``, opening a URL) is a frame to the client, answered by
an ``answer``/``stdin`` frame that the connection's reader hands back here.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Mapping
from typing import Any

import anyio

from orbmcp.session.console import Console
from orbmcp.session.daemon_frames import FrameWriter

STDIN_LIMIT = 16 * 1024 * 1024  # what a client sends in one frame; a larger limit runs one-shot


class _Sink:
    def __init__(self, writer: FrameWriter, kind: str) -> None:
        self._writer = writer
        self._kind = kind

    def write(self, text: str, /) -> int:
        self._writer.send_text(self._kind, text)
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:  # rich asks the file itself when nobody forces it
        return False


class Answers:
    """Questions in flight on one connection, by id."""

    def __init__(self) -> None:
        self._ids = itertools.count(1)
        self._waiting: dict[int, tuple[anyio.Event, list[dict[str, Any]]]] = {}

    def open(self) -> tuple[int, anyio.Event, list[dict[str, Any]]]:
        qid = next(self._ids)
        event, box = anyio.Event(), list[dict[str, Any]]()
        self._waiting[qid] = (event, box)
        return qid, event, box

    def deliver(self, message: dict[str, Any]) -> None:
        qid = message.get("id")
        entry = self._waiting.pop(qid, None) if isinstance(qid, int) else None
        if entry is not None:
            entry[1].append(message)
            entry[0].set()

    def forget(self, qid: int) -> None:
        """A question no longer waited for (timed out): a late answer to it is dropped."""
        self._waiting.pop(qid, None)

    def abandon(self) -> None:
        """The client is gone: every question gets no answer."""
        for event, _box in self._waiting.values():
            event.set()
        self._waiting.clear()


class RemoteConsole(Console):
    def __init__(
        self,
        writer: FrameWriter,
        answers: Answers,
        *,
        tty: Mapping[str, Any],
        env: Mapping[str, str],
        columns: int | None,
        input_limit: int = STDIN_LIMIT,
    ) -> None:
        super().__init__(
            out=_Sink(writer, "out"),
            err=_Sink(writer, "err"),
            stdout_isatty=bool(tty.get("stdout")),
            stderr_isatty=bool(tty.get("stderr")),
            stdin_isatty=bool(tty.get("stdin")),
            env=dict(env),
            columns=columns,
            remote=True,
        )
        self._writer = writer
        self._answers = answers
        self._input_limit = min(input_limit, STDIN_LIMIT)
        self._loop_thread = threading.get_ident()
        self.readline = self._readline
        self.read_stdin = self._read_stdin
        self.open_url = self._open_url

    async def _ask(self, kind: str, **fields: Any) -> dict[str, Any] | None:
        qid, event, box = self._answers.open()
        self._writer.send_nowait({"t": kind, "id": qid, **fields})
        await event.wait()
        return box[0] if box else None

    def _readline(self) -> str | None:
        if threading.get_ident() == self._loop_thread:
            # Asked on the event loop itself (a synchronous prompt in async code): waiting here
            # would stop every other client. Nobody answers; the prompt takes its "no".
            return None
        answer = anyio.from_thread.run(self._ask, "readline")
        value = answer.get("value") if answer else None
        return value if isinstance(value, str) else None

    async def _read_stdin(self) -> str | None:
        answer = await self._ask("read_stdin")
        if not answer:
            return None
        data = answer.get("data")
        if answer.get("tooLarge") or (
            isinstance(data, str) and len(data.encode("utf-8", "surrogatepass")) > self._input_limit
        ):
            from orbmcp.commands.bounded_input import too_large

            # The client's ORBMCP_MAX_INPUT_MIB, worded as one-shot words it.
            raise too_large("stdin ('-')", self._input_limit, reason="stdin_too_large")
        return data if isinstance(data, str) else None

    def _open_url(self, url: str) -> bool:
        # The browser is the client's: ask it to open the URL. The answer is not awaited (this may
        # run on the event loop); the client says on its terminal when it could not.
        self._writer.send_nowait({"t": "open_url", "id": 0, "url": url})
        return True
