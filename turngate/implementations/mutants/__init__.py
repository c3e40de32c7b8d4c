"""Spec mutants of the reference orchestrator: each breaks named spec sentences (docs/mutants.md)."""

from turngate.implementations.mutants.model import Mutant, Replacement, activate

__all__ = ["Mutant", "Replacement", "activate"]
