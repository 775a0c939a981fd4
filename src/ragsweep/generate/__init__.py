"""Test sets from the user's corpus: questions, reference answers and verified evidence (``ragsweep generate``)."""
