"""The session layer under the fronts (issue 25 item 2).

What every front shares, and what no front owns: the one command-line parser
(``command_line``: Typer's Click commands built from the command table), the slash dispatcher
(``slash``), the error boundary (``runner``: an error becomes its message and exit status), the
session holders (``one_shot``: connect per command; ``persistent``: servers stay connected across
commands), and the text sink a command prints on and asks from (``console``, with the terminal's
UI over it in ``terminal`` and ``asking``). The fronts (``frontends``, ``daemon``, ``serve``,
``host``, ``testing``) import this layer and the ones below it, never each other.
"""
