"""Reference baselines (``baselines: [no_retrieval, oracle, full_document]``): answers from a context no retriever
chose, scored like configurations and never chosen, so the verdict can say how good its pick is. ``contexts``
gives each kind's context; ``pipelines.stages.baselines`` answers; ``evaluation.reference`` measures the pick."""
