"""Knowledge graphs: extraction, building and caching, stores."""
