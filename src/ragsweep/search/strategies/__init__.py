"""Search strategies, one module each, behind ``base.Strategy``; ``config/search.STRATEGIES`` declares them
(``registry.strategy_class`` loads one)."""
