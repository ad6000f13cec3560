"""The "no good answer" threshold: per model, SEARCH_WEAK_THRESHOLD over it; and the sweep
`ingest eval` prints to choose it."""

from __future__ import annotations

from shared.retrieval.evaluate import weak_report
from shared.retrieval.weak import THRESHOLDS, is_weak, threshold
from shared.settings import Settings


def test_the_setting_wins_over_the_models_value_and_an_unlisted_model_is_never_weak() -> None:
    plain = Settings(_env_file=None)  # type: ignore[call-arg]
    assert threshold(plain, "hashing-lexical-v1") == THRESHOLDS["hashing-lexical-v1"]
    assert threshold(plain, "someone-elses-model") == 0.0
    assert not is_weak(0.0, threshold(plain, "someone-elses-model"))
    tuned = Settings(_env_file=None, search_weak_threshold=0.42)  # type: ignore[call-arg]
    assert threshold(tuned, "hashing-lexical-v1") == 0.42
    assert is_weak(None, 0.42) and is_weak(0.41, 0.42) and not is_weak(0.42, 0.42)
    empty = Settings(_env_file=None, search_weak_threshold="")  # type: ignore[call-arg,arg-type]
    assert empty.search_weak_threshold is None  # `SEARCH_WEAK_THRESHOLD=`: the model's value


def test_the_sweep_counts_right_and_wrong_marks_and_suggests_the_best_split() -> None:
    answerable = [0.50, 0.60, 0.70, 0.35]
    absent = [0.20, 0.30, 0.40, None]  # None: a search without hits, always weak
    report = weak_report(answerable, absent, 0.45)
    at = report.at_threshold
    assert (at.absent_weak, at.answerable_weak) == (4, 1)
    assert at.precision == 0.8 and at.recall == 1.0
    # 0.325 (3 of 4 absent, no answerable) and 0.45 (4 of 4, one answerable) balance alike;
    # the lower one is kept (no answerable question lost to the mark).
    assert report.suggested.threshold == 0.325
    assert (report.suggested.absent_weak, report.suggested.answerable_weak) == (3, 0)
    # At most 5 % of four answerable questions: none may be marked.
    assert report.cautious.threshold == 0.325
    thresholds = [row.threshold for row in report.sweep]
    assert thresholds == sorted(thresholds) and 0.45 in thresholds and 0.325 in thresholds
    assert report.absent_scores == [0.2, 0.3, 0.4]
