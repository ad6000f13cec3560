"""Dutch throughout: every text the Dutch page can show is Dutch (issue 31, item 6).

The walk: every key of the page's translation tables as the Dutch page gives it (a key without
Dutch words falls back to English), the explanation of every error code the service can store
(found in its source), and the page's views rendered over one document's whole life: every
history detail the service writes, every block kind, every source, a failed version, chunks
with overlap. The API answers of that life are made up here (Playwright routes), so no worker
is needed and every variant is shown at once; the real pipeline's texts are walked by
test_dutch.py. Each view's visible text is checked for English words (a small list; loanwords
an editor uses are allowed).

Also the small things of item 9 that the made-up life shows: each stage's duration on its own
row of the history, and a failed version's chunks the same in the versions table and the facts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Locator, Page, Route, expect

from api.app import create_app
from shared.settings import Settings
from tests.support.api import EDITOR_KEY
from tests.support.dutch_words import english_words
from tests.support.web import ServedApp

Json = dict[str, Any]  # an API answer, made up
ROOT = Path(__file__).resolve().parents[3]
SWITCH_KEYS = {"lang.switch", "lang.switchLabel"}


def error_codes() -> set[str]:
    """Every error code the service can store on a failed version (or put in a refusal)."""
    codes = set()
    for folder in ("shared", "api", "worker"):
        for path in (ROOT / folder).rglob("*.py"):
            text = path.read_text()
            codes |= set(re.findall(r"""\bcode(?:: str)?\s*=\s*["']([a-z_]+)["']""", text))
    # Not failures: a chunker rule's name, a reaper's actor name.
    return codes - {"indent_code"}


def kinds() -> set[str]:
    source = (ROOT / "shared/pipeline/chunk/markdown_blocks.py").read_text()
    table = re.search(r"_KIND = \{(.*?)\}", source, re.S)
    assert table
    return set(re.findall(r':\s*"([a-z]+)"', table.group(1)))


DOC = "0d0c0000-0000-4000-8000-000000000001"
V = [f"0d0c0000-0000-4000-8000-00000000010{n}" for n in range(1, 7)]
PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


def at(seconds: float) -> str:
    minutes, rest = divmod(seconds, 60)
    return f"2026-11-20T10:{int(minutes):02d}:{rest:06.3f}+00:00"


def version(n: int, status: str, chunk_count: int | None, **more: object) -> Json:
    return {
        "id": V[n - 1], "number": n, "status": status, "media_type": "text/markdown",
        "filename": "heup.md", "size_bytes": 120, "sha256": "0" * 64, "uploaded_by": "editors",
        "attempts": 1, "chunk_count": chunk_count, "tokens_spent": 40 if chunk_count else 0,
        "error_code": None, "error_message": None, "retryable": None, "received_at": at(n * 60),
        "finished_at": at(n * 60 + 9), "updated_at": at(n * 60 + 9), "ocr": None,
        **more,
    }  # fmt: skip


def event(seconds: float, n: int | None, before: str | None, after: str, **more: object) -> Json:
    return {
        "at": at(seconds), "version_id": V[n - 1] if n else None, "from_status": before,
        "to_status": after, "actor": more.get("actor"), "detail": more.get("detail"),
    }  # fmt: skip


def life() -> Json:
    """One document's whole life, every detail the service writes on an event among it.
    Version 1 indexed, 2 unchanged, 3 (a CMS fetch) unchanged, 4 indexed (1 superseded),
    5 failed while embedding after it was cut into one chunk (the latest), 6 a metadata
    version (a title and label edit); then the operators deleted it from the command line."""
    lease = "the task working on it stopped (its lease ran out): sent again"
    no_task = "no task for 600s: sent again"
    events = [
        event(60, 1, None, "received", actor="editors"),
        event(61, 1, "received", "converting", actor="ingest.convert"),
        event(63, 1, "converting", "chunking"),  # converting took 2 s
        event(66, 1, "chunking", "embedding"),  # chunking took 3 s
        event(66, 1, "embedding", "embedding", actor="reaper", detail=lease),
        event(76, 1, "embedding", "embedding", actor="reaper", detail=no_task),
        event(80, 1, "embedding", "upserting"),
        event(81, 1, "upserting", "indexed"),
        event(120, 2, None, "received", actor="editors"),
        event(120, 2, "received", "unchanged", detail="same content as version 1"),
        event(180, 3, None, "received", actor="cms"),
        event(181, 3, "received", "unchanged", detail="fetched page is the same as version 1"),
        event(240, 4, None, "received", actor="editors"),
        event(245, 4, "upserting", "indexed"),
        event(245, 1, "indexed", "superseded", detail="version 4 indexed"),
        event(300, 5, None, "received", actor="editors"),
        event(302, 5, "chunking", "embedding"),
        event(304, 5, "embedding", "failed", actor="ingest.embed",
              detail="[internal_error] Unexpected error in ingest.embed; operators: see the logs."),
        event(306, 6, None, "received", actor="editors", detail="metadata updated: title, tags"),
        event(307, 6, "received", "indexed", detail="fields written on 2 points, nothing embedded"),
        event(310, None, None, "deleted", actor="cli", detail="document deleted"),
    ]  # fmt: skip
    failed = {
        "error_code": "internal_error",
        "error_message": "Unexpected error in ingest.embed; operators: see the logs.",
        "retryable": True,
    }
    return {
        "id": DOC, "source": "upload", "external_id": "heup.md", "title": "Heup",
        "source_url": None, "language": "nl", "tags": ["heup"], "status": "failed",
        "current_version_id": V[3], "latest_version_id": V[4], "version_count": 6,
        "created_at": at(60), "updated_at": at(304), "deleted_at": None, "chunk_count": 2,
        "token_count": 80, "tokens_spent": 120, "metadata": {}, "front_matter": None,
        "error": {"code": "internal_error", "message": failed["error_message"], "retryable": True},
        "versions": [
            version(1, "superseded", 2), version(2, "unchanged", None, media_type=PDF),
            version(3, "unchanged", None, media_type="text/plain"),
            version(4, "indexed", 2, media_type="text/html"),
            version(5, "failed", 1, media_type=DOCX, **failed),
            version(6, "indexed", None, kind="metadata", size_bytes=0),
        ],
        "events": events,
    }  # fmt: skip


def chunks(all_kinds: set[str]) -> Json:
    text = "# Heup\n\nDe eerste zin.\n\nDe tweede zin."
    items = [
        {
            "point_id": "0d0c0000-0000-4000-8000-000000000201", "index": 0, "text": text,
            "token_count": 12, "headings": ["Heup"], "sections": [], "kinds": sorted(all_kinds),
            "page_start": None, "page_end": None, "char_start": 0, "char_end": len(text),
            "overlap_tokens": 0, "new_text_offset": 0, "ocr_confidence": None,
        },
        {
            "point_id": "0d0c0000-0000-4000-8000-000000000202", "index": 1, "text": text,
            "token_count": 12, "headings": [], "sections": [], "kinds": ["text"],
            "page_start": 2, "page_end": 3, "char_start": 10, "char_end": 40,
            "overlap_tokens": 4, "new_text_offset": 8, "ocr_confidence": 91.0,
        },
    ]  # fmt: skip
    return {"items": items, "total": 2, "limit": 1000, "offset": 0}


def listing(detail: Json, sources: list[str]) -> Json:
    keys = ["id", "source", "external_id", "title", "source_url", "language", "tags", "status",
            "current_version_id", "latest_version_id", "version_count", "created_at",
            "updated_at", "deleted_at", "chunk_count", "token_count", "tokens_spent"]  # fmt: skip
    items = []
    for n, source in enumerate(sources):
        item = {key: detail[key] for key in keys}
        item.update(id=DOC[:-1] + str(n + 2), source=source, title=f"Heup via {n}")
        items.append(item)
    return {"items": items, "total": len(items), "limit": 50, "offset": 0}


@pytest.fixture
def site(api_settings: Settings) -> Iterator[str]:
    with ServedApp(create_app(api_settings)) as base_url:
        yield base_url


def made_up_life(page: Page, sources: list[str], detail: Json | None = None) -> Json:
    detail = detail or life()
    answers = {
        f"/v1/documents/{DOC}": detail,
        f"/v1/documents/{DOC}/chunks": chunks(kinds()),
        "/v1/documents": listing(detail, sources),
        "/v1/documents/sources": {"items": [{"source": s, "documents": 1} for s in sources]},
    }

    def answer(route: Route) -> None:
        path = "/" + route.request.url.split("/", 3)[3].split("?")[0]
        if route.request.method == "GET" and path in answers:
            route.fulfill(
                status=200, content_type="application/json", body=json.dumps(answers[path])
            )
        else:
            route.continue_()

    page.route("**/v1/documents**", answer)
    return detail


def signed_in(page: Page, site: str) -> None:
    page.goto(site + "/")
    page.get_by_label("API-sleutel").fill(EDITOR_KEY)
    page.get_by_role("button", name="Aanmelden").click()
    expect(page.get_by_role("heading", name="Documenten uploaden", level=1)).to_be_focused()


def visible_english(page: Page) -> set[str]:
    return english_words(page.locator("body").inner_text())


def test_every_text_the_dutch_page_can_show_is_dutch(dutch_page: Page, site: str) -> None:
    page = dutch_page
    signed_in(page, site)
    found: dict[str, set[str]] = {}

    # The translation tables, as the Dutch page gives each key.
    # (i18n.js, and the tables other scripts add with I18n.add.)
    pattern = re.compile(r'^\s+"([a-z]+\.[A-Za-z0-9_]+)":', re.M)
    scripts = (ROOT / "api/static").glob("*.js")
    keys = sorted({k for path in scripts for k in pattern.findall(path.read_text())} - SWITCH_KEYS)
    assert len(keys) > 200
    texts = page.evaluate("(keys) => keys.map((key) => I18n.t(key))", keys)
    for key, text in zip(keys, texts, strict=True):
        if english := english_words(text):
            found[f"key {key}: {text}"] = english

    # Every error code the service stores gets Dutch words (never the server's English).
    for code in sorted(error_codes()):
        if not page.evaluate("(code) => I18n.has(`errors.${code}`)", code):
            found[f"error code {code} has no Dutch explanation"] = {"-"}

    # Refusals the server words itself (no code the page explains).
    problems = page.evaluate("""() => [
        [422, {detail: "Two files in one request have the same name (external id)."}],
        [422, {title: "Unprocessable Entity", errors: [{loc: ["body", "tags"], msg: "too long"}]}],
        [403, {title: "Forbidden", detail: "This key may not do that."}],
        [500, {title: "Internal Server Error", detail: "Unexpected error."}],
        [409, {title: "Conflict", detail: "The document was deleted meanwhile."}],
    ].map(([status, problem]) => Api.describeProblem(status, problem))""")
    for text in problems:
        if english := english_words(text):
            found[f"refusal: {text}"] = english

    # The views over one made-up life: every history detail, kind, source.
    sources = ["upload", "cms", "files"]
    made_up_life(page, sources)
    page.get_by_role("navigation", name="Hoofdmenu").get_by_role("link", name="Documenten").click()
    expect(page.locator("#documents-table tbody tr")).to_have_count(len(sources))
    page.get_by_label("Bron", exact=True).locator("option").nth(len(sources)).wait_for(
        state="attached"
    )
    view = page.locator("#view-documents").inner_text()
    options = page.get_by_label("Bron", exact=True).locator("option").all_inner_texts()
    cells = page.locator("#documents-table tbody tr td:nth-child(3)").all_inner_texts()
    assert sorted(cells) == ["CMS", "bestanden", "geüpload"]  # the sources, not their codes
    assert sorted(options[1:]) == ["CMS (1)", "bestanden (1)", "geüpload (1)"]
    if english := english_words(view + "\n" + "\n".join(options)):
        found[f"documents view: {view} {options}"] = english
    page.goto(f"{site}/#/documents/{DOC}")
    expect(page.locator("article.chunk")).to_have_count(2)
    expect(page.locator("#history li")).to_have_count(len(life()["events"]))
    for part in ["document-facts", "document-error", "versions-table", "history", "chunks-summary"]:
        text = page.locator(f"#{part}").inner_text()
        if english := english_words(text):
            found[f"{part}: {text}"] = english
    for article in page.locator("article.chunk header").all():
        if english := english_words(article.inner_text()):
            found[f"chunk: {article.inner_text()}"] = english
    assert not found, "English on the Dutch page:\n" + "\n".join(
        f"{sorted(words)} in {where}" for where, words in found.items()
    )


def test_each_stage_duration_is_on_its_own_row(dutch_page: Page, site: str) -> None:
    page = dutch_page
    signed_in(page, site)
    made_up_life(page, ["upload"])
    page.goto(f"{site}/#/documents/{DOC}")
    expect(page.locator("#history li")).to_have_count(len(life()["events"]))

    def row(status: str, number: int) -> Locator:
        rows = page.locator(f'#history li[data-status="{status}"]')
        return rows.filter(has_text=f"versie {number}").last  # the first of them (newest on top)

    # Version 1: converting from 61 s to 63 s, chunking from 63 s to 66 s, upserting 80 to 81 s.
    expect(row("converting", 1)).to_contain_text("duurde 2,0 s")
    expect(row("chunking", 1)).to_contain_text("duurde 3,0 s")
    expect(row("upserting", 1)).to_contain_text("duurde 1,0 s")
    # (In Dutch, with a decimal comma.) The end of a version (indexed, unchanged, failed) is no
    # stage: no duration.
    for status, number in [("indexed", 1), ("unchanged", 2), ("failed", 5)]:
        expect(row(status, number)).not_to_contain_text("duurde")


def test_a_failed_versions_chunks_agree_in_table_and_facts(dutch_page: Page, site: str) -> None:
    page = dutch_page
    signed_in(page, site)
    detail = made_up_life(page, ["upload"])
    page.goto(f"{site}/#/documents/{DOC}")
    failed = page.locator('#versions-table tr[data-version="5"]')
    expect(failed).to_contain_text("mislukt")
    # Version 5 was cut into 1 chunk, then failed: none of it is in the index.
    expect(failed.locator("td").nth(6)).to_have_text("\u2014")
    # The facts count the indexed version's (4) chunks, as its row does.
    expect(page.locator("#document-facts")).to_contain_text(f"Stukken{detail['chunk_count']}")
    expect(page.locator('#versions-table tr[data-version="4"] td').nth(6)).to_have_text(
        str(detail["chunk_count"])
    )

    # A document whose only version failed after chunking: no chunks indexed, in both places.
    only = life()
    only.update(
        status="failed", current_version_id=None, chunk_count=0, token_count=0,
        versions=[version(1, "failed", 1, error_code="internal_error", error_message="x")],
        events=[event(60, 1, None, "received", actor="editors")],
    )  # fmt: skip
    page.unroute("**/v1/documents**")
    made_up_life(page, ["upload"], only)
    page.reload()
    expect(page.locator('#versions-table tr[data-version="1"] td').nth(6)).to_have_text("\u2014")
    chunks_fact = page.locator("#document-facts dt", has_text="Stukken").locator(
        "xpath=following-sibling::dd[1]"
    )
    expect(chunks_fact).to_have_text("\u2014")


def accepted(version: int, status: str, same_as: int | None = None) -> Json:
    before = {
        "version": version - 1, "title": "Heup", "filename": "heup.md",
        "uploaded_by": "editors", "uploaded_at": at(60),
    }  # fmt: skip
    return {
        "documents": [{
            "document_id": DOC, "version_id": V[version - 1], "version": version,
            "status": status, "location": f"/v1/documents/{DOC}", "filename": "heup.md",
            "media_type": "text/markdown", "external_id": "heup.md",
            "new_version_of": before if version > 1 else None, "same_as_version": same_as,
            "note": None,
        }]
    }  # fmt: skip


def answer_uploads(page: Page, answers: list[Json]) -> None:
    """The next uploads are answered with `answers`, in turn (the API's own answers are
    tested in tests/integration/api and, with a worker, in test_dutch.py)."""

    def answer(route: Route) -> None:
        if route.request.method != "POST":
            route.continue_()
            return
        body = json.dumps(answers.pop(0))
        route.fulfill(status=202, content_type="application/json", body=body)

    page.route("**/v1/documents", answer)


def upload_one(page: Page, content: bytes) -> None:
    with page.expect_file_chooser() as chooser:
        page.get_by_role("button", name="Sleep bestanden hierheen of kies bestanden").click()
    chooser.value.set_files([{"name": "heup.md", "mimeType": "text/markdown", "buffer": content}])
    page.get_by_role("button", name="Uploaden", exact=True).click()


def test_an_unchanged_upload_is_said_unchanged(dutch_page: Page, site: str) -> None:
    page = dutch_page
    signed_in(page, site)
    answer_uploads(page, [accepted(2, "received"), accepted(3, "unchanged", same_as=2)])
    upload_one(page, b"# Heup\n\nNieuw.\n")
    items = page.locator('li.queue-item[data-file="heup.md"]')
    expect(items.last).to_contain_text("Ontvangen als versie 2. Nieuwe versie van \u201cHeup\u201d")
    upload_one(page, b"# Heup\n\nNieuw.\n")
    expect(items).to_have_count(2)
    expect(items.last).to_have_text(
        re.compile("Ongewijzigd: zelfde inhoud als versie 2; er is niets opnieuw verwerkt.")
    )
    expect(items.last).not_to_contain_text("Nieuwe versie")


def test_the_details_are_cleared_after_an_upload_and_it_says_so(
    dutch_page: Page, site: str
) -> None:
    page = dutch_page
    signed_in(page, site)
    answer_uploads(page, [accepted(1, "received")])
    page.get_by_label("Labels").fill("orthopedie, knie")
    page.get_by_label("Taal").select_option("nl")
    page.get_by_label("Map").fill("orthopedie")
    upload_one(page, b"# Heup\n\nTekst.\n")
    expect(page.locator('li.queue-item[data-file="heup.md"]')).to_contain_text("Ontvangen")
    for label in ("Labels", "Taal", "Map", "Titel", "Bron-URL"):
        expect(page.get_by_label(label, exact=True)).to_have_value("")
    note = page.locator("#details-cleared")
    expect(note).to_have_text(
        "De gegevens hierboven zijn gewist: ze hoorden bij de bestanden die u net uploadde."
    )
    page.get_by_label("Labels").fill("heup")  # typing the next details: the note has served
    expect(note).to_be_hidden()
