"""What a document says about itself (`shared.documents.described_fields`): one rule, read by
the pipeline (`repository.describe_document`) and by `ingest eval`'s in-memory index alike."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.orm import Session

from shared import repository as repo
from shared.adapters.qdrant_edge import EdgeIndex
from shared.documents import (
    MAX_DESCRIBED_CHARS,
    MAX_LANGUAGE_CHARS,
    MAX_URL_CHARS,
    check_described,
    described_fields,
    described_tags,
)
from shared.errors import FrontMatterError
from shared.models import Base, Document
from shared.pipeline.chunk import front_matter, normalise
from shared.pipeline.embed.hashing import HashingEmbedder
from shared.retrieval.memory_index import build
from shared.settings import Settings

LONG_TITLE = "Knie " * 300  # 1,500 characters


def test_fields_are_trimmed_aliased_and_kept_to_links() -> None:
    assert described_fields(
        {"title": "  Heup  ", "url": " https://ziekenhuis.example/heup ", "lang": " nl "}
    ) == {"title": "Heup", "source_url": "https://ziekenhuis.example/heup", "language": "nl"}
    # The full names win over the short ones.
    assert described_fields(
        {
            "source_url": "https://a.example/",
            "url": "https://b.example/",
            "language": "en",
            "lang": "nl",
        }
    ) == {"source_url": "https://a.example/", "language": "en"}


def test_nothing_usable_gives_nothing() -> None:
    assert described_fields({}) == {}
    assert described_fields({"title": "   ", "language": 3, "source_url": ["x"]}) == {}
    assert described_fields({"source_url": "javascript:alert(1)"}) == {}
    assert described_fields({"url": "/relative/page"}) == {}


def test_a_long_title_is_cut_a_long_url_or_language_left_out() -> None:
    assert (
        described_fields({"title": LONG_TITLE})["title"] == LONG_TITLE.strip()[:MAX_DESCRIBED_CHARS]
    )
    url = "https://ziekenhuis.example/".ljust(MAX_URL_CHARS, "k")
    assert described_fields({"url": f" {url} "}) == {"source_url": url}
    assert described_fields({"url": url + "k"}) == {}
    assert described_fields({"lang": " " + "x" * MAX_LANGUAGE_CHARS}) == {
        "language": "x" * MAX_LANGUAGE_CHARS
    }
    assert described_fields({"lang": "x" * (MAX_LANGUAGE_CHARS + 1)}) == {}


def test_front_matter_keeps_the_limits_or_is_refused() -> None:
    found: dict[str, Any] = {"tags": [" knie", "knie"], "source_url": " https://a.nl/ "}
    check_described(found)
    assert found["tags"] == ["knie"]
    assert described_fields(found) == {"source_url": "https://a.nl/"}
    relative: dict[str, Any] = {"url": "/knie"}
    check_described(relative)  # passes, and describes nothing
    assert described_fields(relative) == {}
    for refused, code in (
        ({"url": "javascript:alert(1)"}, "url_refused"),
        ({"source_url": "data:text/html,x"}, "url_refused"),
        ({"tags": ["x" * 101]}, "tags_refused"),
    ):
        with pytest.raises(FrontMatterError) as caught:
            check_described(refused)
        assert caught.value.code == code


def test_tags_only_from_a_list() -> None:
    assert described_tags({"tags": [" knie", "knie", "heup ", ""]}) == ["knie", "heup"]
    assert described_tags({"tags": "knie"}) is None
    assert described_tags({}) is None


PAGES = {
    "knie.md": (
        "---\n"
        f"title: '  {LONG_TITLE}'\n"
        "url: '  https://ziekenhuis.example/knie  '\n"
        "lang: ' nl '\n"
        "tags: [' knie', orthopedie, knie]\n"
        "---\n\n# Knie\n\nNa de operatie mag u de knie belasten.\n"
    ),
    # No title, a URL that is no link: the document keeps none (not its file name).
    "heup.md": "---\nurl: /heup\n---\n\n# Heup\n\nNa de operatie mag u de heup belasten.\n",
}


FIELDS = ("title", "source_url", "language", "tags")


def _fields(found: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(tuple(found[key]) if key == "tags" else found[key] for key in FIELDS)


def _described_by_the_repository(name: str, found: dict[str, Any]) -> Document:
    engine = sa.create_engine("sqlite://")
    Base.metadata.create_all(engine)
    with Session(engine) as session:
        document = Document(id=uuid.uuid4(), source="files", external_id=name)
        session.add(document)
        session.flush()
        repo.describe_document(session, document.id, found)
        session.flush()
        session.refresh(document)
        return document


@pytest.mark.parametrize("name", sorted(PAGES))
def test_the_memory_index_describes_a_page_as_the_pipeline_does(tmp_path: Path, name: str) -> None:
    page = tmp_path / name
    page.write_text(PAGES[name], encoding="utf-8")
    index = EdgeIndex.temporary("eval", 64)
    build([page], tmp_path, Settings(_env_file=None), HashingEmbedder(64), index)  # type: ignore[call-arg]
    points = [payload for page in index.payload_pages() for _, payload in page]
    index.close()
    assert points
    shown = {_fields(payload) for payload in points}

    found = front_matter(normalise(PAGES[name]))[0]
    document = _described_by_the_repository(name, found)
    described = _fields({key: getattr(document, key) for key in FIELDS})
    assert shown == {described}


def test_what_the_pipeline_keeps_of_a_page() -> None:
    found = front_matter(normalise(PAGES["knie.md"]))[0]
    document = _described_by_the_repository("knie.md", found)
    assert document.title == LONG_TITLE.strip()[:MAX_DESCRIBED_CHARS]
    assert document.source_url == "https://ziekenhuis.example/knie"
    assert document.language == "nl"
    assert document.tags == ["knie", "orthopedie"]
    untitled = _described_by_the_repository("heup.md", front_matter(normalise(PAGES["heup.md"]))[0])
    assert (untitled.title, untitled.source_url, untitled.tags) == (None, None, [])
