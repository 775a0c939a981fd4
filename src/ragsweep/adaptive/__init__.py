"""Adaptive retrieval (HyPA-RAG; Kalra et al. 2024, arXiv:2409.09046): a question-complexity classifier
(``classifier``), how well it agrees with the labels (``agreement``), where the labels come from
(``labels``) and what each class retrieves with (``config_map``)."""
