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
import re
from typing import Any

import yaml

from shared.errors import FrontMatterError

#: Front matter is a few lines of metadata; anything near this is not.
MAX_BYTES = 64 * 1024
#: Mappings and lists nested deeper than this are refused (real metadata nests 2-3 deep).
MAX_DEPTH = 20

_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(?P<yaml>(?:.*?\n)??)(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.S)
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when built with it
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
        _check_events(raw)
        data = yaml.load(raw, Loader=_YAML_LOADER)
    except yaml.YAMLError:
        return {}, 0  # not YAML: the dashes are Markdown
    if not isinstance(data, dict):
        return {}, 0
    return _jsonable(data), match.end()


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
                raise FrontMatterError(
                    "The front matter (the YAML between the --- lines at the top) nests lists "
                    f"or mappings more than {MAX_DEPTH} levels deep. Flatten it.",
                )
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
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)
