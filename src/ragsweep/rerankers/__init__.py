"""Rerankers: reorder a base retriever's candidates for one question (``config/rerankers.py``).

One module per kind, registered in ``registry.py``; ``retrievers.reranked`` shares each reordering
among every top_k of a (retriever, reranker) pair.
"""
