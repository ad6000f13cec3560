"""`repository.describe_document` writes what `shared.documents.described_fields` keeps of a
page's front matter, within the columns on Postgres as on SQLite."""

from __future__ import annotations

from sqlalchemy.orm import Session, sessionmaker

from shared import repository as repo
from shared.models import Document
from tests.support.versions import new_version


def test_front_matter_too_long_for_a_column_is_cut_or_left_out(
    factory: sessionmaker[Session],
) -> None:
    with factory.begin() as session:
        registered = repo.register_version(session, new_version(b"# Knie\n\nTekst.", "knie"))
    found = {
        "title": "Knie " * 300,
        "url": "https://ziekenhuis.example/" + "k" * 2000,
        "lang": "x" * 40,  # no language tag; the column holds 35
    }
    with factory.begin() as session:
        repo.describe_document(session, registered.document_id, found)
    with factory() as session:
        document = session.get(Document, registered.document_id)
        assert document is not None
        assert document.title == ("Knie " * 300).strip()[:1000]
        assert (document.source_url, document.language) == (None, None)
