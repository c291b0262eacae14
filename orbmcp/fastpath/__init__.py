"""The start-up tricks, in one place: what runs before anything heavy is imported.

Every ``orbmcp`` invocation starts here, and most end here: a probe for the version, a Tab in a
shell, a command a warm daemon answers. These modules import the standard library and orbmcp's
own stdlib-only modules, never ``mcp``, ``httpx2``, ``anyio``, ``pydantic``, Typer or rich at their
top (``tests/test_cli_foundation.py``, ``tests/commands/test_complete.py`` and
``tests/fastpath/test_import_sets.py`` pin the import set of each path):

- ``entry``: the program's ``main``: ``--version``, the hand-off to a daemon, ``complete`` (on
  every Tab), bare ``status``; everything else goes to the one parser (``session/command_line``).
- ``daemon_client``: forwards a command line to the scope's session daemon and relays its
  frames (stdlib sockets only); runs first on every invocation.
- ``argv``: reads the program's own options off a command line without a parser (which command,
  ``--project``, ``--config``, ``--json``, ``--help``), for the paths above and the daemon.

Two tricks outside this package stay because ``bench/bench_fastpath_tricks.py`` shows they matter
(each on and off, alternately, in one run; 9 runs on this project's 2-core machine, loaded):

- ``frontends/sdk_trim.py`` (the MCP SDK's client without its server stack, in the program's own
  client process): 420 modules instead of 588, 781 ms CPU instead of 986 (-21 %) for the SDK
  import; wall median 3.2 s instead of 4.1 s.
- ``core/processes/detached_stop.py`` (a one-shot command's servers stopped after it exits, by a detached
  child): nothing measurable on a server that exits at stdin EOF (2.44 s against 2.48 s), but a
  server whose process group outlives EOF costs the command the stdin grace period and SIGTERM
  without it: 2.57 s instead of 4.74 s.

Outside the fast paths, modules import at module top like ordinary Python.
"""
