"""Which changes of a document's own fields make a metadata version (issue 29 item 1): the
pure rules `register_version` and `PATCH /v1/documents/{id}` apply."""

from __future__ import annotations

from shared.documents import changed_fields, fields_given, metadata_detail
from shared.states import Status, can_move
from tests.support.versions import new_version

CURRENT = {"title": "Heup foldr", "source_url": None, "language": "nl", "tags": ["heup"]}


def test_only_the_fields_given_and_different_count_in_a_fixed_order() -> None:
    given = {"tags": ["heup", "nieuw"], "title": "Heupoperatie", "language": "nl"}
    assert changed_fields(CURRENT, given) == ["title", "tags"]


def test_the_same_values_again_change_nothing() -> None:
    assert changed_fields(CURRENT, dict(CURRENT)) == []
    assert changed_fields(CURRENT, {"source_url": ""}) == []  # an empty text is none
    assert changed_fields(CURRENT, {}) == []


def test_clearing_a_field_is_a_change() -> None:
    assert changed_fields(CURRENT, {"title": None, "tags": []}) == ["title", "tags"]


def test_an_upload_leaves_out_what_it_does_not_name() -> None:
    new = new_version(b"# Heup", "heup.md", title="Heupoperatie", tags=[])
    assert fields_given(new) == {"title": "Heupoperatie"}
    tagged = new_version(b"# Heup", "heup.md", tags=["heup"], language="nl")
    assert fields_given(tagged) == {"language": "nl", "tags": ["heup"]}


def test_the_history_names_the_fields() -> None:
    assert metadata_detail(["title", "tags"]) == "metadata updated: title, tags"


def test_a_metadata_version_goes_from_received_straight_to_indexed() -> None:
    assert can_move(Status.RECEIVED, Status.INDEXED)
    assert not can_move(Status.INDEXED, Status.RECEIVED)
