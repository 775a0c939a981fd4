"""Write a run directory from the journal: manifest.json, records.parquet, summary.csv, comparisons.csv.

Everything here is derived from the journal, so it is rewritten in full by every invocation
(cheap) and is always consistent with what was computed. One module per output.
"""
