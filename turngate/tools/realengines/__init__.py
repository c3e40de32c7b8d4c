"""Real engine CLIs against the fake engines: fidelity of shapes and live captures."""
