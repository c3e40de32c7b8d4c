"""Scripted stand-ins for the codex, gemini, iflow and opencode engine CLIs."""
