"""One LLM client for generation, judging and query rewrites: cached, rate-limited, retried, priced."""
