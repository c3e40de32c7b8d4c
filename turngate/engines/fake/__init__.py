"""Scripted stand-ins for the codex, gemini, iflow, opencode, claude, qwen and codebuddy engine CLIs."""
