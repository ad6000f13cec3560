"""Which upload is which document, and what each entry point hands in (`shared.documents`):
the upload API, the CMS webhook and `ingest run` build their versions there, one rule each."""

from __future__ import annotations

import hashlib
from pathlib import Path

from shared import documents

PAGE = b"# Knie\n\nNa de operatie mag u de knie belasten.\n"


def test_an_upload_is_keyed_by_the_id_given_else_its_name_else_its_bytes() -> None:
    key = documents.upload_external_id
    assert key(PAGE, "knie.md", external_id="  knie-2024 ") == "knie-2024"
    assert key(PAGE, "knie.md", external_id="knie", folder="wonden") == "knie"
    assert key(PAGE, "knie.md") == "knie.md"
    assert key(PAGE, "knie.md", external_id="   ", folder="wonden") == "wonden/knie.md"
    assert key(PAGE, None) == hashlib.sha256(PAGE).hexdigest()[:16]
    assert key(PAGE, None, folder="wonden") == "wonden/" + hashlib.sha256(PAGE).hexdigest()[:16]


def test_an_upload_folder_is_trimmed_of_spaces_and_slashes() -> None:
    assert documents.upload_folder(" /wonden/zorg/ ") == "wonden/zorg"
    assert documents.upload_folder(" / ") is None
    assert documents.upload_folder(None) is None


def test_a_file_of_ingest_run_is_keyed_by_its_path_or_the_prefix(tmp_path: Path) -> None:
    folder = tmp_path / "folders"
    page = folder / "orthopedie" / "knie.md"
    page.parent.mkdir(parents=True)
    page.write_bytes(PAGE)
    key = documents.file_external_id
    assert key(page, folder, None) == page.resolve().as_posix()
    assert key(page, folder, "site/") == "site/orthopedie/knie.md"
    assert key(page, None, "site/") == "site/knie.md"


def test_an_uploaded_file() -> None:
    new = documents.uploaded_file(
        PAGE, "text/markdown", "knie.md", folder="wonden", tags=["knie"], uploaded_by="key-1"
    )
    assert (new.source, new.external_id, new.filename) == ("upload", "wonden/knie.md", "knie.md")
    assert new.sha256 == hashlib.sha256(PAGE).hexdigest()
    assert (new.tags, new.uploaded_by, new.content_url) == (["knie"], "key-1", None)


def test_a_cms_page_inline_or_by_url() -> None:
    inline = documents.cms_page("p-1", "# Knie\n", "https://cms.example/p-1", "text/markdown")
    assert (inline.source, inline.external_id, inline.uploaded_by) == ("cms", "p-1", "cms")
    assert inline.content == b"# Knie\n" and inline.content_url is None
    assert inline.sha256 == hashlib.sha256(b"# Knie\n").hexdigest()
    fetched = documents.cms_page("p-1", None, "https://cms.example/p-1", "text/html")
    assert (fetched.content, fetched.sha256) == (b"", "")
    assert fetched.content_url == "https://cms.example/p-1"


def test_a_local_file_is_typed_as_an_upload_is() -> None:
    new = documents.local_file(PAGE, "knie.md", "/abs/knie.md", "files")
    assert (new.source, new.external_id, new.uploaded_by) == ("files", "/abs/knie.md", "cli")
    assert new.media_type == "text/markdown"
    assert documents.local_file(b"%PDF-1.7\n", "knie.md", "k", "files").media_type == (
        "application/pdf"
    )
    assert new.sha256 == hashlib.sha256(PAGE).hexdigest()
