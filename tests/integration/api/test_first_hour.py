"""The API as a new client meets it: refusals that say which limit and which file, a document
keyed by its name made visible as "new version of ...", keys that keep two departments'
`brochure.pdf` apart, and `/docs` that works without internet."""

from __future__ import annotations

import io
import re

import httpx
import pytest
from fastapi.testclient import TestClient

from tests.support.api import MARKDOWN, MAX_UPLOAD_BYTES, assert_problem, count, upload


def test_a_content_length_over_the_limit_is_a_problem_naming_the_limit(
    client: TestClient, pg: str
) -> None:
    body = b"x" * (MAX_UPLOAD_BYTES + 2 * 1024 * 1024)
    response = client.post(
        "/v1/documents",
        content=body,
        headers={"Content-Type": "multipart/form-data; boundary=b"},
    )
    problem = assert_problem(response, 413)
    assert problem["limit_bytes"] == MAX_UPLOAD_BYTES
    assert "256 KiB" in problem["detail"] and "MAX_UPLOAD_BYTES" in problem["detail"]
    assert count(pg, "document_versions") == 0


def test_a_streamed_body_over_the_limit_is_a_problem_naming_the_limit(client: TestClient) -> None:
    def chunks():  # type: ignore[no-untyped-def]
        yield b'--b\r\nContent-Disposition: form-data; name="file"; filename="big.md"\r\n\r\n'
        for _ in range(40):
            yield b"b" * 65536

    response = client.post(
        "/v1/documents",
        content=chunks(),
        headers={"Content-Type": "multipart/form-data; boundary=b"},
    )
    problem = assert_problem(response, 413)
    assert problem["limit_bytes"] == MAX_UPLOAD_BYTES and "256 KiB" in problem["detail"]


@pytest.mark.parametrize(
    ("refused", "status"),
    [
        (("groot.md", b"# Groot\n\n" + b"a" * (MAX_UPLOAD_BYTES + 1)), 413),
        (("foto.md", b"\x89PNG\r\n\x1a\n" + bytes(64)), 415),
        (("leeg.md", b""), 422),
    ],
)
def test_the_refused_file_of_several_is_named(
    client: TestClient, pg: str, refused: tuple[str, bytes], status: int
) -> None:
    response = upload(client, ("goed.md", MARKDOWN.encode()), refused)
    problem = assert_problem(response, status)
    assert problem["file"] == refused[0]
    assert repr(refused[0]) in problem["detail"]
    assert count(pg, "document_versions") == 0  # all or nothing


def test_the_same_name_again_is_a_visible_new_version(client: TestClient, pg: str) -> None:
    first = client.post(
        "/v1/documents",
        files=[("file", ("brochure.md", io.BytesIO(MARKDOWN.encode()), "text/markdown"))],
        data={"title": "Knieoperatie"},
    ).json()["documents"][0]
    assert first["new_version_of"] is None and first["note"] is None
    assert first["external_id"] == "brochure.md"

    second = upload(client, ("brochure.md", MARKDOWN.encode() + b"\nNieuw.\n")).json()
    again = second["documents"][0]
    assert again["document_id"] == first["document_id"] and again["version"] == 2
    before = again["new_version_of"]
    assert before["version"] == 1 and before["title"] == "Knieoperatie"
    assert before["uploaded_by"] == "editors" and before["filename"] == "brochure.md"
    assert re.fullmatch(
        r"New version of 'Knieoperatie', uploaded by editors on \d{4}-\d\d-\d\d \d\d:\d\d UTC\.",
        again["note"],
    )


def test_a_folder_or_external_id_keeps_two_brochures_apart(client: TestClient) -> None:
    cardio = upload(client, ("brochure.md", MARKDOWN.encode()), folder="cardiologie").json()
    ortho = upload(client, ("brochure.md", MARKDOWN.encode()), folder="orthopedie/").json()
    own = upload(client, ("brochure.md", MARKDOWN.encode()), external_id="kno-brochure").json()
    keys = [body["documents"][0]["external_id"] for body in (cardio, ortho, own)]
    assert keys == ["cardiologie/brochure.md", "orthopedie/brochure.md", "kno-brochure"]
    assert len({body["documents"][0]["document_id"] for body in (cardio, ortho, own)}) == 3
    assert all(body["documents"][0]["new_version_of"] is None for body in (cardio, ortho, own))
    both = upload(client, ("a.md", MARKDOWN.encode()), folder="x", external_id="y")
    assert_problem(both, 422)


def test_docs_load_swagger_ui_from_the_service_itself(anonymous: TestClient) -> None:
    page = anonymous.get("/docs")
    assert page.status_code == 200
    assets = re.findall(r"""(?:src|href)=["']([^"']+)["']""", page.text)
    assert assets, page.text
    for asset in assets:
        assert httpx.URL(asset).host in ("", None), f"{asset} is not served by the service"
        served = anonymous.get(asset)
        assert served.status_code == 200, asset
    assert any(asset.endswith("swagger-ui-bundle.js") for asset in assets)
    assert "cdn" not in page.text.lower()
