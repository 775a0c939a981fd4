"""The stages of a sweep, one module each: chunk, index (embed + index), queries, graph, answer (retrieve +
extractive answer), generate (LLM answers), score (BERTScore), judge (stage 2).

A stage is a set of public functions with small typed inputs and outputs. It reads what it needs
from a ``StageContext`` and writes rows to a sink (the journal, or a task's list); it never knows
which executor runs it. ``pipelines.plan`` says which units of work a sweep has and what each
depends on; ``ragsweep.executors`` schedule them.
"""
