"""The session daemon: one live session per scope on a private Unix socket, and its stdlib-only client."""
