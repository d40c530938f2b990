"""The memory store: SQLite, FTS5 and a vector index, running FSRS-6, dual strength, heat and
the gate.

Examples
--------
>>> from memlab.store import MemoryStore
>>> store = MemoryStore()            # in memory, HashingEmbedder: nothing to download
"""

from memlab.secrets import SecretFoundError
from memlab.store.budget import Budget
from memlab.store.core import EmbedderMismatchError
from memlab.store.fusion import RRF_K
from memlab.store.index import IndexOptions
from memlab.store.ingest import IngestMeta
from memlab.store.records import IngestResult, Memory, SearchHit
from memlab.store.relevance import SearchOptions
from memlab.store.schema import Durability, ForeignDatabaseError, StoreBusy
from memlab.store.store import MemoryStore
from memlab.store.validation import MAX_CONTENT_BYTES

__all__ = [
    "MAX_CONTENT_BYTES",
    "RRF_K",
    "Budget",
    "Durability",
    "EmbedderMismatchError",
    "ForeignDatabaseError",
    "IndexOptions",
    "IngestMeta",
    "IngestResult",
    "Memory",
    "MemoryStore",
    "SearchHit",
    "SearchOptions",
    "SecretFoundError",
    "StoreBusy",
]
