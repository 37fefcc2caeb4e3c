"""Shared fixtures: only the local model server (see ``llm_server.py``)."""

from index_fixtures import corpus, embed_cache, settings  # noqa: F401
from llm_server import dead_url, llm_server  # noqa: F401
