"""Request bodies, validated by schema: the seed's document-split request, search and chunk."""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


# Strict: `"max_chunk_size": true` or `"need_sentence": "yes"` is a mistake to report, not to coerce.
class SplitDocument(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)

    content: str = Field(description="The document: UTF-8 text, or base64 of its UTF-8 bytes.")
    content_encoding: Literal["utf8", "base64"] = "utf8"
    content_type: Literal["text", "markdown", "html"] = "text"


class SplitStrategy(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)

    type: Literal["default"] = "default"
    max_chunk_size: int = Field(300, gt=0, le=1_000_000, description="Largest leaf, in tokens or characters.")
    compute_type: Literal["token", "character"] = "token"
    need_sentence: bool = False


class SplitRequest(BaseModel):
    """The body of `POST /v3/openapi/workspaces/{workspace}/document-split/{service_id}`."""

    model_config = ConfigDict(extra="ignore")

    document: SplitDocument
    strategy: SplitStrategy = Field(default_factory=SplitStrategy)


class SearchRequest(BaseModel):
    """The body of `POST /v1/search`; the filters mean what `indx search`'s do."""

    model_config = ConfigDict(extra="forbid", strict=True)

    query: str = Field(min_length=1, description="What to look for.")
    k: int = Field(5, ge=1, le=1000, description="How many hits.")
    mode: Literal["hybrid", "vector", "fts"] = "hybrid"
    expand: bool = Field(False, description="Give each hit its section: the chunks around it.")
    source_prefix: str | None = Field(None, description="Only sources whose id starts with this.")
    chunk_type: str | None = Field(None, description="Only chunks of this type (content, table, image, sentence, …).")
    page: int | None = Field(None, ge=1, description="Only chunks of this page.")
