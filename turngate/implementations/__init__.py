"""What turngate ships to be judged: the reference orchestrator (in process and as `turngate serve`),
the command-protocol example, the second orchestrator, the conforming variants and the spec mutants."""
