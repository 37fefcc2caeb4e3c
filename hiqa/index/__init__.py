"""The index side: registry, store, payload schema, lexical index, ingest, dense fill, repair."""
