"""The version, imported by whoever needs it (the package root re-exports it)."""

__version__ = "0.1.0"
