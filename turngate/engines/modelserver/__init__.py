"""turngate's scripted model server: the real engine CLIs talk to it instead of a model provider."""
