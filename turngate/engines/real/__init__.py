"""The real engine CLIs (codex, gemini, opencode), installed from npm, pointed at the model server."""
