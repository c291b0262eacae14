"""Plain text of ``call``: the tool's transcript, escaped, cut at ``--max-output`` bytes.

Rich output shows the same text (it falls back to plain for call results), so structured content
is laid out in one place: ``orbmcp.commands.results.call.transcript``.
"""

from __future__ import annotations

from orbmcp.commands.results.call import CallOutcome, TranscriptPart, transcript
from orbmcp.core.tooling.results import format_size
from orbmcp.render.plain.basic import interaction_notes
from orbmcp.render.plain.dispatch import renders
from orbmcp.text import one_line, safe_text

# After an image or audio line that was not saved: how to get the data (``call --save-images``).
SAVE_HINT = " (--save-images DIR saves it)"


def escaped(part: TranscriptPart) -> str:
    if part.kind == "text":
        return safe_text(part.value, multiline=True)
    return one_line(part.value) + (SAVE_HINT if part.unsaved_media else "")


@renders
def call_text(outcome: CallOutcome) -> str:
    notes = interaction_notes(outcome.interactions)
    return "\n".join([_transcript(outcome), *notes]) if notes else _transcript(outcome)


def _transcript(outcome: CallOutcome) -> str:
    if outcome.output_file is not None and outcome.max_output is None:
        return f"[output: {format_size(outcome.output_bytes)} written to {one_line(outcome.output_file)}]"
    shown = "\n".join(escaped(part) for part in transcript(outcome.result, outcome.saved))
    if outcome.max_output is not None:
        shown, total = truncate_bytes(shown, outcome.max_output)
        if total is not None:
            where = (
                f"the full output is in {one_line(outcome.output_file)}"
                if outcome.output_file
                else "use --output FILE to keep all of it"
            )
            shown += f"\n[output truncated: showed {outcome.max_output} of {total} bytes; {where}]"
    return shown


def truncate_bytes(text: str, limit: int) -> tuple[str, int | None]:
    """``text`` cut to at most ``limit`` UTF-8 bytes on a character boundary, and the original size
    when something was cut (None otherwise)."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text, None
    return data[: max(limit, 0)].decode("utf-8", "ignore"), len(data)
