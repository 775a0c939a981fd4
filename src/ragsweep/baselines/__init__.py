"""Reference baselines (``baselines: [no_retrieval, oracle, full_document]``): answers from a context no retriever
chose, scored like configurations and never chosen, so the verdict can say how good its pick is (work in
progress: see BASELINES-WIP.md)."""
