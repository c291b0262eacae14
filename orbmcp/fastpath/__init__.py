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
  ``--project``, ``--config``, ``--json``, ``--help``), for the paths above and the daemon; and,
  for the daemon's client, which commands the daemon runs (``DAEMON_COMMANDS``) and whether a line
  names an ad-hoc server, from the words alone: the command table imports the config's models
  (``typing``, ``dataclasses``; ~15 ms), so the commands the daemon runs are a block of that module
  ``scripts/gen_docs.py`` writes from the table, and the program's options a copy
  ``tests/fastpath/test_routes.py`` checks; the ad-hoc options come from the transports' kinds.

The warm call through the daemon is a Python start (~10 ms), ``re`` (pip's console script imports
it), this client and the daemon's answer; its budget is 0.10x mcporter's warm daemon call
(``bench/bench_daemon.py``). So the client and the modules it shares with the daemon
(``session/daemon_scope.py``, ``daemon_trust.py``, ``daemon_protocol.py``, ``daemon/policy.py``,
``daemon/signals.py``, ``environment.py``, ``text.py``; the ``orbmcp`` package itself and
``__main__``) import no ``typing`` (``TYPE_CHECKING = False`` where it is only for types; mypy
reads any ``TYPE_CHECKING``), ``pathlib``, ``dataclasses``, ``contextlib``, ``struct``,
``socket`` (``_socket``, its C module: ~2 ms less) or ``hashlib`` (the builtin SHA-256, the same
digest: ``hashlib`` loads OpenSSL, ~2.5 ms). ``tests/daemon/test_trust.py`` pins that import set
(``test_the_forwarding_client_imports_only_what_it_uses``).

Four tricks outside this package stay because a benchmark shows they matter (the first two:
``bench/bench_fastpath_tricks.py``, each on and off, alternately, in one run; 9 runs on this
project's 2-core machine, loaded):

- ``frontends/sdk_trim.py`` (the MCP SDK's client without its server stack, in the program's own
  client process): 420 modules instead of 588, 781 ms CPU instead of 986 (-21 %) for the SDK
  import; wall median 3.2 s instead of 4.1 s.
- ``core/processes/detached_stop.py`` (a one-shot command's servers stopped after it exits, by a detached
  child): nothing measurable on a server that exits at stdin EOF (2.44 s against 2.48 s), but a
  server whose process group outlives EOF costs the command the stdin grace period and SIGTERM
  without it: 2.57 s instead of 4.74 s.
- ``config/deferred_asyncio.py`` (pydantic-settings imported without asyncio, which it imports
  for a method orbmcp never calls): ~40 ms CPU less on every config-only command, ~0.4x of their
  baseline, ``import typer, rich.console`` (their budget is 3x; ``bench/bench_startup.py``).
- ``config/pydantic_plugins.py`` (the program's pydantic without its plugin loader, which imports
  ``importlib.metadata`` and scans every distribution's entry points): ~7 % of every config-only
  command (``bench/bench_startup.py``); an embedder's process keeps its plugins.

Outside the fast paths, modules import at module top like ordinary Python.
"""
