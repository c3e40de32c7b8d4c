"""The real engine CLIs (codex, gemini, opencode, claude, qwen, kilo, codebuddy), installed from npm or
PyPI, pointed at the model server."""
