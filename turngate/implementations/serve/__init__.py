"""`turngate serve`: the reference orchestrator behind the job API of HTTP_API.md."""
