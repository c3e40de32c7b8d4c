"""The mutation score: each spec mutant (turngate.implementations.mutants) against the catalog
cases that cite its sentences."""
