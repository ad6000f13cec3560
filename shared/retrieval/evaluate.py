"""`ingest eval`: retrieval quality measured with the same search function the chatbot uses.

A question line: `{"question": ..., "document": <external id or file name>, "answers": [exact
sentences of the document]}`. A retrieved chunk *answers* when it belongs to that document and
contains one of the sentences (whitespace and case normalised). Recall within a token budget
takes the ranked chunks while they fit `budget` tokens: the fair comparison between chunk
sizes (larger chunks find more per chunk, but cost more context). Of the questions answered
in the top 10, the share whose answering hit's passage (the sentence the preview and the
editors' page show) is, or is part of, an answer sentence: what a person reads first.

A line `{"question": ..., "absent": true}` asks what the corpus does not answer: it counts in
none of the figures above, only in the "no good answer" check (`weak`), which compares every
question's best dense cosine in the top `SEARCH_TOP_K` (the chatbot's hits) with the
threshold (`SEARCH_WEAK_THRESHOLD`, else the model's in shared/retrieval/weak.py): a weak mark
is right on an absent question, wrong on an answerable one; a sweep of thresholds, the best
balance and the cautious one (at most 5 % of the answerable marked) show where to set it.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import asdict, dataclass, field, replace
from itertools import pairwise
from pathlib import Path, PurePosixPath
from typing import Any

from shared.adapters.index import VectorIndex
from shared.pipeline.embed import Embedder
from shared.retrieval.hits import Hit
from shared.retrieval.search import SearchRequest, search
from shared.retrieval.weak import is_weak, strength
from shared.settings import Settings

DEPTH = 10  # recall@10 needs ten ranked chunks
CAUTIOUS = 0.05  # a weak mark may cost at most 5 % of the answerable questions their answer


@dataclass(frozen=True)
class Question:
    question: str
    document: str
    answers: list[str]
    absent: bool = False  # the corpus does not answer it: only the weak check counts it


@dataclass
class WeakRow:
    """At one threshold: how many questions of each kind are marked weak."""

    threshold: float
    absent_weak: int  # right marks
    answerable_weak: int  # wrong marks
    precision: float  # right marks / all marks
    recall: float  # right marks / absent questions


@dataclass
class WeakReport:
    threshold: float  # SEARCH_WEAK_THRESHOLD of the run
    answerable: int
    absent: int
    at_threshold: WeakRow
    suggested: WeakRow  # the threshold that separates the two kinds best (balanced accuracy)
    cautious: WeakRow  # the highest that marks at most CAUTIOUS of the answerable questions
    sweep: list[WeakRow]
    answerable_scores: list[float]  # each question's best dense cosine, sorted
    absent_scores: list[float]


@dataclass
class Miss:
    question: str
    document: str
    best_chunk: str  # `external id #index: heading path` of the best-ranked chunk, or ""
    best_passage: str


@dataclass
class Report:
    questions: int
    recall_at_1: float
    recall_at_5: float
    recall_at_10: float
    mrr: float
    budget: int
    recall_in_budget: float
    mean_context_tokens: float
    passage_shows_answer: float
    #: Top-`top_k` lists that held the same passage twice (identical text in two documents,
    #: `duplicates`), searched with collapsing off, and as the search ran (on by default).
    duplicate_lists_uncollapsed: int = 0
    duplicate_lists: int = 0
    misses: list[Miss] = field(default_factory=list)
    weak: WeakReport | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def load_questions(path: Path) -> list[Question]:
    questions = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            if data.get("absent") is True:
                questions.append(Question(data["question"], "", [], absent=True))
            else:
                questions.append(
                    Question(data["question"], data["document"], list(data["answers"]))
                )
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{path}:{number}: not a question line ({exc})") from exc
    return questions


def normalised(text: str) -> str:
    """Whitespace, case, ligatures, soft hyphens and Markdown emphasis and escapes aside: an
    answer quoted from a PDF ("CT-scanner") matches the chunk's `**CT\\-scanner**`."""
    text = unicodedata.normalize("NFKC", text).replace("\xad", "")
    text = re.sub(r"\\([\\`*_{}\[\]()#+\-.!|>])", r"\1", text).replace("*", "")
    return re.sub(r"\s+", " ", text).strip().lower()


def same_document(hit: Hit, document: str) -> bool:
    """`document` names the hit's document by external id, file name, or id."""
    return _names(document, hit.external_id, hit.document_id)


def _names(document: str, external_id: str | None, document_id: str) -> bool:
    wanted = document.strip()
    external = external_id or ""
    return wanted in (external, PurePosixPath(external).name, document_id) or (
        "/" in wanted and external.endswith(wanted)
    )


def answers(hit: Hit, question: Question) -> bool:
    """The hit holds an answer sentence and stands in the question's document: its own, or
    one that holds the same passage (`also_in`)."""
    in_document = same_document(hit, question.document) or any(
        _names(question.document, copy.external_id, copy.document_id) for copy in hit.also_in
    )
    if not in_document:
        return False
    text = normalised(hit.text)
    return any(normalised(answer) in text for answer in question.answers)


def shows_answer(hit: Hit, question: Question) -> bool:
    """The hit's passage is one of the answer sentences, or part of one (a preview is one
    sentence, list item or table row; an answer may hold several)."""
    shown = normalised(hit.passage.removesuffix("…"))
    return bool(shown) and any(
        shown in normalised(answer) or normalised(answer) in shown for answer in question.answers
    )


def evaluate(
    questions: list[Question],
    settings: Settings,
    *,
    budget: int = 1500,
    embedder: Embedder | None = None,
    index: VectorIndex | None = None,
) -> Report:
    top_k = settings.search_top_k
    found_at: list[int | None] = []
    shown = 0
    in_budget = 0
    context_tokens = 0
    duplicates = {True: 0, False: 0}  # top-k lists with a passage twice, collapsed or not
    misses = []
    scores: dict[bool, list[float | None]] = {False: [], True: []}  # by `absent`
    weak_at = 0.0
    for q in questions:
        request = SearchRequest(
            q.question, top_k=DEPTH, candidates=max(settings.search_candidates, DEPTH)
        )
        result = search(request, settings, embedder=embedder, index=index)
        ranked = sorted(result.hits, key=lambda h: h.rank)
        scores[q.absent].append(strength(ranked[:top_k]))
        weak_at = result.weak_threshold
        if q.absent:
            continue
        collapsed = settings.search_collapse_duplicates
        duplicates[collapsed] += _duplicated(ranked[:top_k])
        plain = replace(request, top_k=top_k, collapse=not collapsed)
        other = search(plain, settings, embedder=embedder, index=index).hits
        duplicates[not collapsed] += _duplicated(other)
        rank = next((n for n, hit in enumerate(ranked, 1) if answers(hit, q)), None)
        found_at.append(rank)
        shown += rank is not None and shows_answer(ranked[rank - 1], q)
        spent, fits = 0, []
        for hit in ranked:
            spent += _tokens(hit)
            if spent > budget:
                break
            fits.append(hit)
        in_budget += any(answers(hit, q) for hit in fits)
        context_tokens += sum(_tokens(hit) for hit in ranked[:top_k])
        if rank is None:
            best = ranked[0] if ranked else None
            misses.append(
                Miss(
                    q.question,
                    q.document,
                    f"{best.external_id} #{best.chunk_index}: {' > '.join(best.headings)}"
                    if best
                    else "",
                    best.passage if best else "",
                )
            )
    asked = [q for q in questions if not q.absent]
    n = len(asked) or 1

    def recall(k: int) -> float:
        return round(sum(1 for r in found_at if r is not None and r <= k) / n, 3)

    return Report(
        questions=len(asked),
        recall_at_1=recall(1),
        recall_at_5=recall(5),
        recall_at_10=recall(10),
        mrr=round(sum(1 / r for r in found_at if r) / n, 3),
        budget=budget,
        recall_in_budget=round(in_budget / n, 3),
        mean_context_tokens=round(context_tokens / n, 1),
        passage_shows_answer=round(shown / max(sum(1 for r in found_at if r), 1), 3),
        duplicate_lists_uncollapsed=duplicates[False],
        duplicate_lists=duplicates[settings.search_collapse_duplicates],
        misses=misses,
        weak=weak_report(scores[False], scores[True], weak_at) if scores[True] else None,
    )


def weak_row(answerable: list[float | None], absent: list[float | None], at: float) -> WeakRow:
    right = sum(is_weak(s, at) for s in absent)
    wrong = sum(is_weak(s, at) for s in answerable)
    return WeakRow(
        round(at, 4),
        right,
        wrong,
        round(right / (right + wrong), 3) if right + wrong else 1.0,
        round(right / len(absent), 3) if absent else 0.0,
    )


def weak_report(
    answerable: list[float | None], absent: list[float | None], threshold: float
) -> WeakReport:
    """The weak marks at the configured threshold, the best separating one, and a sweep."""
    known = sorted(s for s in answerable + absent if s is not None)
    # Candidates: midway between neighbouring scores (and just above the highest).
    between = [round((a + b) / 2, 4) for a, b in pairwise(known) if a < b]
    candidates = between + ([round(known[-1] + 0.001, 4)] if known else [])

    def balanced(row: WeakRow) -> float:
        kept = 1 - row.answerable_weak / max(len(answerable), 1)
        return (row.recall + kept) / 2

    rows = [weak_row(answerable, absent, c) for c in candidates] or [
        weak_row(answerable, absent, threshold)
    ]
    suggested = max(rows, key=lambda r: (balanced(r), -r.threshold))
    allowed = [r for r in rows if r.answerable_weak <= CAUTIOUS * len(answerable)]
    cautious = max(allowed, key=lambda r: r.threshold) if allowed else rows[0]
    low, high = (known[0], known[-1]) if known else (threshold, threshold)
    grid = {round(low + (high - low) * i / 8, 2) for i in range(9)}
    grid |= {round(threshold, 4), suggested.threshold, cautious.threshold}
    return WeakReport(
        threshold=threshold,
        answerable=len(answerable),
        absent=len(absent),
        at_threshold=weak_row(answerable, absent, threshold),
        suggested=suggested,
        cautious=cautious,
        sweep=[weak_row(answerable, absent, t) for t in sorted(grid)],
        answerable_scores=sorted(round(s, 4) for s in answerable if s is not None),
        absent_scores=sorted(round(s, 4) for s in absent if s is not None),
    )


def _tokens(hit: Hit) -> int:
    return hit.token_count


def _duplicated(hits: list[Hit]) -> bool:
    """Whether two hits are the same passage (their own text, whitespace normalised)."""
    texts = [text for text in (" ".join(hit.new_text.split()) for hit in hits) if text]
    return len(set(texts)) < len(texts)
