"""The installed package's version, in a module of its own: importing the package root
would pull in its lazy exports, which the layering contracts keep out of the core."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    VERSION = version("otel-reliability")
except PackageNotFoundError:  # a source tree that was never installed
    VERSION = "0+unknown"
