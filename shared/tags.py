"""Tags: how many a document may carry and how long each may be, checked where they enter.

Tags are copied into every chunk's Qdrant payload and shown in every listing, so one upload
with 100,000 tags would cost everybody (more so with a quadratic de-duplication in the
request thread).
The upload form, the webhook and front matter all go through `clean_tags`: linear, and a
`TagError` (the API's 422, the worker's `front_matter_refused`) past the limits.
"""

from __future__ import annotations

from collections.abc import Iterable

#: A page has a handful of labels; a hundred is far beyond any real use.
MAX_TAGS = 100
#: A label is a word or two.
MAX_TAG_CHARS = 100


class TagError(ValueError):
    """Too many tags, or one too long; the message says which limit."""


def clean_tags(values: Iterable[object], *, split: bool = False) -> list[str]:
    """Trimmed, empty ones dropped, de-duplicated in order (linear). `split`: each value may
    hold several, comma-separated (the upload form). Raises `TagError` past the limits; the
    count is checked while reading, so a huge list is refused without being held twice."""
    tags: dict[str, None] = {}
    for value in values:
        for tag in str(value).split(",") if split else (str(value),):
            tag = tag.strip()
            if not tag:
                continue
            if len(tag) > MAX_TAG_CHARS:
                raise TagError(
                    f"A tag is {len(tag)} characters long; at most {MAX_TAG_CHARS} are accepted "
                    f"({tag[:40]!r}...)."
                )
            tags[tag] = None
            if len(tags) > MAX_TAGS:
                raise TagError(f"More than {MAX_TAGS} tags; at most {MAX_TAGS} are accepted.")
    return list(tags)
