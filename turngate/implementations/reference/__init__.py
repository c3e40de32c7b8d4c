"""turngate's reference orchestrator: the spec in ../shared/spec/ made executable, one module per part."""
