"""Using a follow-up question's conversation (``config/history.py``'s modes): what a configuration searches
with and what its LLM generator reads. One module per kind; ``base`` is the contract."""
