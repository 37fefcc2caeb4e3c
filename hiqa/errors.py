"""Exceptions with messages a user can act on.  The CLI and the app show ``str(error)``."""


class HiqaError(Exception):
    """Base class: anything raised on purpose by the engine."""


class DocumentError(HiqaError):
    """A source file cannot be turned into a document (corrupt, encrypted, empty, ...)."""

    def __init__(self, source: str, reason: str):
        super().__init__(f"{source}: {reason}")
        self.source = source
        self.reason = reason


class UnsupportedFormatError(DocumentError):
    pass


class EmptyDocumentError(DocumentError):
    pass


class EncryptedDocumentError(DocumentError):
    pass


class ScannedDocumentError(DocumentError):
    """A PDF without a text layer; ``pages`` lists the 1-based pages without text."""

    def __init__(self, source: str, pages: list[int]):
        shown = ", ".join(map(str, pages[:20])) + (" ..." if len(pages) > 20 else "")
        super().__init__(
            source,
            f"scanned PDF without a text layer: page(s) {shown} have no extractable text; "
            "run OCR first (e.g. `ocrmypdf in.pdf out.pdf`)",
        )
        self.pages = pages


class CollectionError(HiqaError):
    """Unknown collection, embedder mismatch, locked storage, ..."""


class IngestBusyError(CollectionError):
    """Another ingest holds the collection's lock; retry when it is done."""


class QueryError(HiqaError):
    """A query that cannot be answered as given (empty, too long)."""


class ParameterError(QueryError, ValueError):
    """A ranking parameter out of range (α, β, k, fusion method); see ``hiqa.retrieve.params``.

    Also a ``ValueError``, so callers that guarded ``fuse`` against ValueError keep working.
    """


class StorageError(CollectionError):
    """The data directory cannot be written or read (read-only, permissions, disk full)."""


class LLMError(HiqaError):
    """The OpenAI-compatible endpoint failed, timed out or is not reachable."""


class EmbeddingError(HiqaError):
    """An embedder cannot be chosen or loaded, or its endpoint failed, timed out or is not
    reachable."""
