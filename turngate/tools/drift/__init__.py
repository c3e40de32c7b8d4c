"""Engine format drift: replay a capture, mutate it, minimise a flip, turn it into a scenario."""
