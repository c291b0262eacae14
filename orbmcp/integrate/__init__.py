"""Wiring orbmcp into coding agents: the files ``orbmcp integrate AGENT`` writes, edits and removes.

``agents`` says what each agent gets and where (its command files, an extension, or ``orbmcp
serve`` in its MCP config); ``pieces`` applies a plan: whole files orbmcp owns (each carries
``MARKER``, so a file orbmcp did not write is never overwritten or removed) and one entry in
another program's config file (the rest of the file kept as it was). ``toml_entry`` edits a table
of a TOML file as text. The templates are package data under ``templates/``.
"""

MARKER = "orbmcp-integrate: managed"
