"""Request bodies, validated by schema: the seed's document-split request, search and chunk."""

import email.message
from typing import Literal, TypeVar

from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ConfigDict, Field, ValidationError

Model = TypeVar("Model", bound=BaseModel)


def is_json(content_type: str | None) -> bool:
    """Whether a body of this Content-Type is JSON, as FastAPI decides it: none given,
    `application/json` or `application/*+json`."""
    if not content_type:
        return True
    message = email.message.Message()
    message["content-type"] = content_type
    subtype = message.get_content_subtype()
    return message.get_content_maintype() == "application" and (subtype == "json" or subtype.endswith("+json"))


def parse_body(model: type[Model], raw: bytes, content_type: str | None) -> Model:
    """A JSON body validated by its model, straight from its bytes (no intermediate dict), its
    problems raised as FastAPI raises those of a body it parses itself."""
    if not is_json(content_type):
        raise RequestValidationError([{"type": "model_attributes_type", "loc": ("body",),
                                       "msg": "Input should be a valid dictionary or object to extract fields from",
                                       "input": None}])
    try:
        return model.model_validate_json(raw)
    except ValidationError as exc:
        raise RequestValidationError([{**error, "loc": ("body", *error["loc"])}
                                      for error in exc.errors(include_url=False)]) from None


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
