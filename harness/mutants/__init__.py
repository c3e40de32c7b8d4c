"""Spec mutants of the reference orchestrator: each breaks named spec sentences (docs/mutants.md)."""

from harness.mutants.model import Mutant, Patch, activate

__all__ = ["Mutant", "Patch", "activate"]
