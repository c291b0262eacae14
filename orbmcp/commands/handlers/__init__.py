"""Command handlers: each takes a CommandContext and parameters and returns a result model."""
