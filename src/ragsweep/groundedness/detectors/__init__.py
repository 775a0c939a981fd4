"""Groundedness detectors, one module each, registered in ``registry.py``."""
