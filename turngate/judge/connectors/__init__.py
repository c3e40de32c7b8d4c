"""Connectors: how turngate drives an implementation under test, one case at a time."""

from turngate.protocol.connector import CaseSetup, Connector, Observation, ReplyResult

__all__ = ["CaseSetup", "Connector", "Observation", "ReplyResult"]
