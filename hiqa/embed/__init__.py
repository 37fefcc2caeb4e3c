"""One module per embedder; ``hiqa.embed.factory`` is the public entry point (``get_embedder``)."""
