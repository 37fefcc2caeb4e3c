"""One module per embedder; ``hiqa.embed`` is the public entry point (``get_embedder``)."""
