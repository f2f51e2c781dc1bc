"""The package version, in a module of its own so that any module can read it without importing the root."""

__version__ = "0.12.0"
