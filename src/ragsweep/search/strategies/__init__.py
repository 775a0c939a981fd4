"""Search strategies, one module each, behind ``base.Strategy``; ``registry.REGISTRY`` names them."""
