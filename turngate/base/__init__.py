"""The ground floor: turngate's own data files, small YAML option files, pipes, the console.

Imports nothing of turngate.
"""
