"""The command line: one module per command, wiring the layers below into what a user types (top layer)."""
