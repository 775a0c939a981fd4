"""Query transforms as retriever wrappers: one module per kind, registered in ``registry``.

A transform either replaces one part's shared results (RM3: the BM25 part; HyDE: the vector part)
or runs the whole retriever once per query it wrote and fuses the lists (multi_query, decompose).
What an LLM writes for a question is produced once per process (``base.TransformMemo``) and
shared by every index, retriever, top_k and reranker that uses the transform.
"""
