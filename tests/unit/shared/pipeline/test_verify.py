"""Which payload fields `ingest verify` counts as drifted (pure: no services)."""

from __future__ import annotations

from shared.pipeline.verify import as_stored, differing


def test_fields_that_differ_or_are_missing_on_either_side_are_named_in_order() -> None:
    expected = {"title": "Knie", "tags": ["ortho"], "hidden": False, "language": "nl"}
    stored = {"title": "Oud", "tags": ["ortho"], "hidden": True, "ocr": True}
    assert differing(expected, stored) == ["hidden", "language", "ocr", "title"]
    assert differing(expected, dict(expected)) == []


def test_a_field_set_to_none_is_the_same_as_a_field_left_out() -> None:
    """Local Qdrant's `set_payload` drops a None (a metadata version clearing the link)."""
    assert differing({"source_url": None}, {}) == []
    assert differing({}, {"language": None}) == []
    assert differing({"source_url": "https://x.nl"}, {}) == ["source_url"]


def test_the_text_and_the_update_time_are_not_compared() -> None:
    expected = {"text": "nieuw", "updated_at": "2026-11-28T03:00:00+00:00", "title": "Knie"}
    assert differing(expected, {"title": "Knie", "updated_at": "2026-01-01T00:00:00+00:00"}) == []


def test_the_expected_payload_is_compared_as_json_gives_it_back() -> None:
    payload = {"headings": ("Knie", "Nazorg"), "pages": [(0, 1)], "ocr_confidence": 0.5}
    stored = {"headings": ["Knie", "Nazorg"], "pages": [[0, 1]], "ocr_confidence": 0.5}
    assert differing(as_stored(payload), stored) == []
    assert differing(payload, stored) == ["headings", "pages"]  # why as_stored is there
