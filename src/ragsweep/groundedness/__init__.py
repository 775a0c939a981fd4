"""Groundedness detectors and judges checked against human labels (``ragsweep judges evaluate``)."""
