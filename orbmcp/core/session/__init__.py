"""The session and its supervisors: every server's lifecycle inside one ``Manager``.

Owns the ``Manager`` (the supervisors of one session and the task group that owns them), the
``Supervisor`` of each server (state, retries, reconnects), what they share (``Runtime``), start-up
waits and authorization prompts, paged discovery, what a failure means (classification) and the
one actionable hint per failed server, and the locked read-modify-write of orbmcp's cache files.
"""
