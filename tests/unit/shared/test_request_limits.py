"""The bounds on hostile input, function by function: tags (count, length, linear de-duplication),
front matter (impossible dates, huge numbers, link schemes, tags), values JSON columns cannot
hold, citations that stay one link, and chunk rows without the front matter."""

from __future__ import annotations

import time
import uuid

import mistune
import pytest

from shared.errors import FrontMatterError
from shared.pipeline import indexing
from shared.pipeline.chunk import chunk_markdown
from shared.pipeline.convert import Converted
from shared.pipeline.front_matter import front_matter
from shared.retrieval.citations import citation, markdown_link
from shared.tags import MAX_TAG_CHARS, MAX_TAGS, TagError, clean_tags
from shared.text_checks import FieldError, load_json

# --- tags -----------------------------------------------------------------------------------


def test_tags_are_trimmed_and_deduplicated_in_order() -> None:
    assert clean_tags(["knie, heup", " knie", "", "Knie"], split=True) == ["knie", "heup", "Knie"]
    assert clean_tags([f"t{n}" for n in range(MAX_TAGS)]) == [f"t{n}" for n in range(MAX_TAGS)]


def test_a_hundred_thousand_tags_cost_linear_time_and_are_refused() -> None:
    started = time.monotonic()
    with pytest.raises(TagError, match=f"at most {MAX_TAGS}"):
        clean_tags([",".join(f"tag{n}" for n in range(100_000))], split=True)
    assert clean_tags(["a," * 100_000], split=True) == ["a"]  # duplicates: one pass
    assert time.monotonic() - started < 2  # the quadratic version took 189 s
    with pytest.raises(TagError, match=f"at most {MAX_TAG_CHARS} are accepted"):
        clean_tags(["x" * (MAX_TAG_CHARS + 1)])


# --- front matter ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("yaml_text", "code", "words"),
    [
        ("date: 2024-13-45", "front_matter_refused", "month must be in 1..12"),
        ("number: " + "9" * 5000, "front_matter_refused", "cannot be read"),
        ("url: javascript:alert(1)", "url_refused", "http or https"),
        ("source_url: 'data:text/html,<script>x</script>'", "url_refused", "http or https"),
        ("tags: [" + ", ".join(f"t{n}" for n in range(MAX_TAGS + 1)) + "]", "tags_refused", "tags"),
        (f"tags: [{'x' * (MAX_TAG_CHARS + 1)}]", "tags_refused", "characters long"),
    ],
)
def test_front_matter_the_index_cannot_carry_is_refused(
    yaml_text: str, code: str, words: str
) -> None:
    with pytest.raises(FrontMatterError, match=words) as refused:
        front_matter(f"---\n{yaml_text}\n---\n# Knie\n")
    assert refused.value.code == code


def test_front_matter_keeps_what_it_can_store() -> None:
    found, _ = front_matter("---\nurl: /folders/knie/\ntags: [a, a, b]\nx: .nan\n---\n# K\n")
    assert found == {"url": "/folders/knie/", "tags": ["a", "b"], "x": "nan"}


# --- values no JSON column holds ------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    ['{"a": NaN}', '{"a": Infinity}', '{"a": 1e400}', '{"a": ' + "9" * 5000 + "}",
     '{"a": "x\\u0000y"}', '{"a": "\\ud800"}', '{"\\u0000": 1}', '{"a": [[' + "1" * 200 + "]]}"],
)  # fmt: skip
def test_values_no_column_can_hold_are_refused(raw: str) -> None:
    with pytest.raises(FieldError, match="metadata"):
        load_json(raw, "metadata")


def test_ordinary_json_passes() -> None:
    assert load_json('{"a": [1, 2.5, "é", {"b": null}]}', "metadata") == {
        "a": [1, 2.5, "é", {"b": None}]
    }


# --- citations ------------------------------------------------------------------------------


def _links(markdown: str) -> tuple[int, str]:
    html = mistune.create_markdown(escape=False)(markdown)
    assert isinstance(html, str)
    return html.count("<a "), html


@pytest.mark.parametrize(
    ("title", "heading", "url"),
    [
        ("Knie", "Opname", "https://zkh.example/k)<img src=x onerror=alert(1)>"),
        ("Knie](javascript:alert(1))[x", "<img src=x onerror=alert(1)>", "https://zkh.example/k"),
        ("Knie *vet* `code`", "A\\\nB", "https://zkh.example/k a\"b'c"),
    ],
)
def test_a_citation_is_exactly_one_link_and_no_html(title: str, heading: str, url: str) -> None:
    cited = citation({"title": title, "headings": [title, heading], "source_url": url}).markdown
    count, html = _links(cited)
    assert count == 1 and "<img" not in html and 'href="javascript' not in html, html
    assert "\n" not in cited


def test_a_citation_without_a_safe_url_is_no_link() -> None:
    assert markdown_link("Knie", "javascript:alert(1)") == "[Knie]"
    assert markdown_link("Knie", "https://zkh.example/knie-ë") == (
        "[Knie](https://zkh.example/knie-ë)"
    )


# --- chunk rows -----------------------------------------------------------------------------


def test_chunk_rows_carry_no_front_matter_and_short_headings() -> None:
    heading = "Knie " * 200
    markdown = f"---\ntitle: Knie\nnotes: {'x' * 5000}\n---\n# {heading}\n\nTekst.\n"
    chunks = chunk_markdown(markdown)
    assert chunks[0].metadata["title"] == "Knie"  # the chunker still reports it
    rows = indexing.chunk_rows(uuid.uuid4(), chunks, Converted(markdown=markdown))
    for row in rows:
        assert "metadata" not in row["extra"] and "x" * 100 not in str(row)
        assert len(row["headings"][0]) == indexing.MAX_HEADING_CHARS
        assert row["extra"]["sections"][0]["headings"] == row["headings"]


def test_the_conversion_keeps_the_front_matter_once_and_leaves_refusals_to_the_chunk_stage() -> (
    None
):
    from shared.pipeline.steps.convert import conversion_output

    kept = conversion_output(Converted(markdown="---\ntitle: Knie\n---\n# Knie\n"))
    assert kept["conversion"]["front_matter"] == {"title": "Knie"}
    bad = conversion_output(Converted(markdown="---\ndate: 2024-13-45\n---\n# Knie\n"))
    assert "front_matter" not in bad["conversion"]  # no raise here: a batch of pages goes on
