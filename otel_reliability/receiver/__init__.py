"""The standalone OTLP receiver: the second front door to the engine (SPEC §8)."""
