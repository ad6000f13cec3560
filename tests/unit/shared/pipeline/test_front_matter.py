"""Front matter is parsed defensively: YAML aliases, oversized and deeply nested blocks are
refused before anything is built from them (front matter without anchors and with bounded
nesting is composed once instead: same outcome), and a `---` block that is not a YAML
mapping is Markdown, not metadata."""

from __future__ import annotations

import time

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.errors import FrontMatterError, PermanentError
from shared.pipeline import front_matter as front_matter_module
from shared.pipeline.chunk import chunk_markdown
from shared.pipeline.front_matter import MAX_BYTES, MAX_DEPTH, front_matter
from tests.support.front_matter import billion_laughs


def refusal(source: str) -> FrontMatterError:
    started = time.monotonic()
    with pytest.raises(FrontMatterError) as caught:
        front_matter(source)
    assert time.monotonic() - started < 1.0
    assert isinstance(caught.value, PermanentError) and not caught.value.retryable
    assert caught.value.code == "front_matter_refused"
    return caught.value


def test_the_billion_laughs_is_refused_at_once() -> None:
    bomb = billion_laughs()
    assert len(bomb.encode()) < 600
    assert "anchors and aliases" in refusal(bomb).message
    with pytest.raises(FrontMatterError):
        chunk_markdown(bomb)  # the worker's path: the chunk stage fails the version


def test_a_single_alias_is_refused_too() -> None:
    assert "&base" in refusal("---\nbase: &base {a: 1}\nother: *base\n---\ntext\n").message


def test_oversized_and_deeply_nested_front_matter_is_refused() -> None:
    big = "---\n" + "".join(f"key{n}: {'x' * 60}\n" for n in range(MAX_BYTES // 60)) + "---\n"
    assert "KB" in refusal(big).message
    deep = "---\nkey: " + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1) + "\n---\n"
    assert "levels deep" in refusal(deep).message
    very_deep = "---\n" + "[" * 30_000 + "]" * 30_000 + "\n---\n"  # no RecursionError either
    refusal(very_deep)
    fine = "---\nkey: " + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "\n---\n"
    assert list(front_matter(fine)[0]) == ["key"]  # the mapping is a level of its own


def test_a_mapping_is_metadata() -> None:
    source = "---\ntitle: Knie\ndate: 2024-05-01\n---\n# Knie\n"
    assert front_matter(source) == ({"title": "Knie", "date": "2024-05-01"}, source.index("# Knie"))
    assert front_matter("---\n---\nBody\n") == ({}, 8)  # empty front matter is still one


@pytest.mark.parametrize(
    "source",
    [
        "---\nKnieoperatie\n---\n\nTekst.\n",  # a setext heading under a thematic break
        "---\n- een\n- twee\n---\n",  # a list, not a mapping
        "---\n*Let op:* neem uw pas mee\n---\n",  # emphasis, not an alias: not YAML at all
        "---\ntitle: [unclosed\n---\n",  # broken YAML
        "---\n# Kop\n---\n",  # only a YAML comment: a heading in Markdown
    ],
)
def test_a_block_that_is_not_a_mapping_is_markdown(source: str) -> None:
    assert front_matter(source) == ({}, 0)
    chunks = chunk_markdown(source)
    assert chunks and chunks[0].char_start == 0 and chunks[0].metadata == {}
    assert chunks[0].text.startswith("---")  # Markdown: kept as text, not metadata


def test_a_setext_heading_in_dashes_stays_a_heading() -> None:
    (chunk,) = chunk_markdown("---\nKnieoperatie\n---\n\nNeem uw pas mee.\n")
    assert chunk.kinds == ["text", "heading"] and chunk.metadata == {}  # break, heading, text
    assert "Knieoperatie" in chunk.text


def _outcome(load, raw: str) -> tuple[str, object]:
    try:
        return "data", load(raw)
    except FrontMatterError as refused:
        return "refused", refused.message
    except yaml.YAMLError:
        return "not YAML", None


def _walk_then_load(raw: str) -> object:
    """The reference: every front matter walked as events first, then loaded."""
    front_matter_module._check_events(raw)
    return yaml.load(raw, Loader=front_matter_module._YAML_LOADER)


def _depth(raw: str) -> int:
    depth = deepest = 0
    for event in yaml.parse(raw, Loader=front_matter_module._YAML_LOADER):
        if isinstance(event, yaml.MappingStartEvent | yaml.SequenceStartEvent):
            depth += 1
            deepest = max(deepest, depth)
        elif isinstance(event, yaml.MappingEndEvent | yaml.SequenceEndEvent):
            depth -= 1
    return deepest


_scalars = st.one_of(st.integers(), st.booleans(), st.text(max_size=8), st.dates())
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=30,
)
_EDGE_CASES = [
    "a:\n" + "".join("  " * n + f"k{n}:\n" for n in range(1, 24)) + "  " * 24 + "v\n",
    "- " * 25 + "x\n",
    "? - a\n  - b\n: - c\n",
    "? a\n: b: c\n",
    "a: [b: [c: [d: e]]]\n",
    "a: 1\n---\nb: 2\n",  # two documents
    "a: [1, 2\n",
    "a: b: c\n",
    "a: - b\n",
    "",
    "# only a comment\n",
]


@settings(max_examples=150, deadline=None)
@given(_values, st.sampled_from([None, True, False]))
def test_loading_once_gives_what_the_walk_and_the_load_gave(value: object, flow) -> None:
    raw = yaml.safe_dump({"k": value}, default_flow_style=flow, allow_unicode=True)
    for text in (raw, *_EDGE_CASES):
        assert _outcome(front_matter_module._load, text) == _outcome(_walk_then_load, text)
        if _outcome(_walk_then_load, text)[0] == "data":
            assert _depth(text) <= front_matter_module._nesting_bound(text)
