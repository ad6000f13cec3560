"""English words on the Dutch editors' page: the check test_dutch_words.py and test_dutch.py
share (issue 31: Dutch throughout)."""

from __future__ import annotations

import re

#: Words that give English away on the Dutch page. (Dutch shares "of", "was", "is", "in",
#: "over", "code", "document", "status", "tip", "overlap": those are not listed.)
_ENGLISH = """
    the and to for with by from has not no again version versions indexed same content text
    heading headings list table quote admonition files file failed error errors chunk chunks
    chunking token tokens embed embedding embeddings embedden received converting upserting
    superseded deleted unchanged removed arrived fetched page sent task stopped unexpected
    operators source upload uploaded please try refused request invalid reaper cli
"""
ENGLISH = set(_ENGLISH.split())
#: English an editor reads as Dutch: allowed although listed above (each with its reason).
LOANWORDS = {
    "upload",  # Dutch verb: "upload het opnieuw" (the source `upload` is checked apart)
    "content",  # "Content-verwerking", the app's name, as the content team calls itself
}
#: What stays as it is on purpose: error codes (support looks them up). (The language switch,
#: "English", is not listed.)
KEPT = [re.compile(r"Foutcode: [a-z_]+"), re.compile(r"\b[a-z]+_[a-z_]+\b")]


def english_words(text: str) -> set[str]:
    text = re.sub(r"\{\w+\}", " ", text)  # a table's placeholders ({version}) are filled in
    for kept in KEPT:
        text = kept.sub(" ", text)
    words = {w.lower() for w in re.findall(r"[A-Za-z]+", text)}
    return (words & ENGLISH) - LOANWORDS
