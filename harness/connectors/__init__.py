"""Connectors: how turngate drives an implementation under test, one case at a time."""

from harness.connectors.base import CaseSetup, Connector, Observation, ReplyResult

__all__ = ["CaseSetup", "Connector", "Observation", "ReplyResult"]
