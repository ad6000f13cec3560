"""Front matter: YAML between `---` lines at the very top of a Markdown document.

The YAML comes from editors and from the CMS, so it is parsed defensively. YAML anchors and
aliases are refused before anything is built from them: the loader shares aliased objects,
but turning them into JSON-ready metadata copies every alias out, and a 500-byte "billion
laughs" then becomes ~9^10 nodes. The block's size and nesting depth are capped as well.
Those refusals raise `FrontMatterError` (the upload API and the webhook answer 422, the
worker fails the version). A block at the top that is not a YAML mapping (bad YAML, a list,
a bare word) is no front matter at all: it stays Markdown (a thematic break, a setext
heading), so nothing of the page is lost.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from typing import Any

import yaml

from shared.documents import check_described
from shared.errors import FrontMatterError

#: Front matter is a few lines of metadata; anything near this is not.
MAX_BYTES = 64 * 1024
#: Mappings and lists nested deeper than this are refused (real metadata nests 2-3 deep).
MAX_DEPTH = 20

_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(?P<yaml>(?:.*?\n)??)(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.S)
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when built with it
# Nesting libyaml's composer (which recurses in C) may meet: far below any stack limit.
_COMPOSE_LIMIT = 200
_OPEN = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
_CLOSE = (yaml.MappingEndEvent, yaml.SequenceEndEvent)


def front_matter(source: str) -> tuple[dict[str, Any], int]:
    """Front matter of a normalised source as a dict, and the offset where the body starts.

    Only a block closed by `---` (or `...`) whose YAML is a mapping (or empty) counts;
    anything else gives `({}, 0)`: the block is Markdown. Raises `FrontMatterError` for
    aliases, a block over `MAX_BYTES` or nesting deeper than `MAX_DEPTH`.
    """
    match = _FRONT_MATTER.match(source)
    if not match:
        return {}, 0
    raw = match.group("yaml") or ""
    if not raw.strip():
        return {}, match.end()
    size = len(raw.encode("utf-8"))
    if size > MAX_BYTES:
        raise FrontMatterError(
            f"The front matter (the YAML between the --- lines at the top) is {size // 1024} KB; "
            f"at most {MAX_BYTES // 1024} KB is accepted. Keep it to a few lines of metadata "
            "and move the rest into the page.",
        )
    try:
        data = _load(raw)
    except yaml.YAMLError:
        return {}, 0  # not YAML: the dashes are Markdown
    except (ValueError, OverflowError) as exc:  # `date: 2024-13-45`, an integer of 5,000 digits
        raise FrontMatterError(
            "The front matter (the YAML between the --- lines at the top) has a value that "
            f"cannot be read ({exc}). A date must exist (2024-05-01); put other values in "
            "quotes ('2024-13-45').",
        ) from None
    if not isinstance(data, dict):
        return {}, 0
    found = _jsonable(data)
    check_described(found)  # its tags and URL keep the index's limits
    return found, match.end()


def _load(raw: str) -> Any:
    """The YAML's data, with aliases and deep nesting refused before anything is built.

    Most front matter has no `&` or `*` (so no anchor or alias) and few lines: its nesting is
    bounded (`_nesting_bound`), so libyaml composes it once and the depth is read from the
    nodes. Anything else is first walked as events (nothing composed), then loaded.
    """
    bound = _nesting_bound(raw)
    if "&" in raw or "*" in raw or bound > _COMPOSE_LIMIT:
        _check_events(raw)
        return yaml.load(raw, Loader=_YAML_LOADER)
    loader = _YAML_LOADER(raw)
    try:
        try:
            node = loader.get_single_node()
        except yaml.YAMLError:
            _check_events(raw)  # what the walk refuses is refused before bad YAML is reported
            raise
        if bound > MAX_DEPTH:  # else it cannot nest that deep
            _check_depth(node)
        return None if node is None else loader.construct_document(node)
    finally:
        loader.dispose()


def _nesting_bound(raw: str) -> int:
    """How deep `raw` can nest at most: in block style a level opens on a new line or after
    a `-` or `?` indicator (an explicit key's value may open one more), and in flow style at
    a bracket (a flow sequence's `a: b` entry is a mapping of its own)."""
    flow = raw.count("[") + raw.count("{")
    return 1 + raw.count("\n") + raw.count("-") + 2 * (raw.count("?") + flow)


def _check_depth(node: yaml.Node | None) -> None:
    """Refuse nesting deeper than `MAX_DEPTH` in a composed document (no aliases in it)."""
    stack = [(node, 1)] if node is not None else []
    while stack:
        node, depth = stack.pop()
        if isinstance(node, yaml.MappingNode):
            children = [child for pair in node.value for child in pair]
        elif isinstance(node, yaml.SequenceNode):
            children = node.value
        else:
            continue
        if depth > MAX_DEPTH:
            raise _too_deep()
        stack.extend((child, depth + 1) for child in children)


def _too_deep() -> FrontMatterError:
    return FrontMatterError(
        "The front matter (the YAML between the --- lines at the top) nests lists "
        f"or mappings more than {MAX_DEPTH} levels deep. Flatten it.",
    )


def _check_events(raw: str) -> None:
    """Walk the parser's events (no objects built): refuse aliases and deep nesting."""
    anchors: set[str] = set()
    depth = 0
    for event in yaml.parse(raw, Loader=_YAML_LOADER):
        if isinstance(event, yaml.AliasEvent):
            if event.anchor in anchors:
                raise FrontMatterError(
                    "The front matter (the YAML between the --- lines at the top) uses YAML "
                    f"anchors and aliases (&{event.anchor} ... *{event.anchor}), which are not "
                    "accepted. Write the values out in full.",
                )
            raise yaml.YAMLError(f"undefined alias {event.anchor}")  # `*word`: not YAML
        anchor = getattr(event, "anchor", None)
        if anchor is not None:
            anchors.add(anchor)
        if isinstance(event, _OPEN):
            depth += 1
            if depth > MAX_DEPTH:
                raise _too_deep()
        elif isinstance(event, _CLOSE):
            depth -= 1


def _jsonable(value: Any) -> Any:
    """YAML gives dates and other objects; chunk metadata must survive JSON."""
    if isinstance(value, dict):
        return {str(key): _jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple | set):
        return [_jsonable(item) for item in value]
    if isinstance(value, dt.date | dt.datetime | dt.time):
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # .nan, .inf: JSON columns take no such number
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)
