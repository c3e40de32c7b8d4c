"""What an implementation and the judge share: the connector protocol and its value types
(observations), the line-JSON command protocol, the runtime patch's module vocabulary."""
