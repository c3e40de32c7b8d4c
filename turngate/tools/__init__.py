"""Tools around the judge: drift (engine output that changed), mutation scores, sensitivity,
fuzzing, benchmarks, coverage, real-engine fidelity."""
