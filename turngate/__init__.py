"""turngate: conformance harness for the interactive run lifecycle of skill-run orchestrators."""

__version__ = "0.1.0"
