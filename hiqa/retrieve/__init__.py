"""The query side: parameters, the retrieval routes and fusion (Eq. 2)."""
