"""The retrieval's pure text functions: sparse terms, citations' anchors and sections, the
passage that matched."""

from __future__ import annotations

from shared import sparse
from shared.retrieval.citations import citation, cited_headings, slug
from shared.retrieval.preview import passage, pieces


def test_words_are_lower_cased_accent_folded_and_stemmed_by_language() -> None:
    assert sparse.fold("Crème Brûlée") == "creme brulee"
    assert sparse.fold("Na De OK, 2x") == "na de ok, 2x"  # ASCII: lower-cased only
    assert sparse.fold("ﬁets ① Ünd") == "fiets 1 und"  # compatibility forms decomposed
    assert sparse.stems_in_every_language("Ziekenhuizen operations") == {
        *sparse.stems("Ziekenhuizen operations", "nl"),
        *sparse.stems("Ziekenhuizen operations", "en"),
    }
    assert sparse.stems("Ziekenhuizen", "nl") == ["ziekenhuis"]
    assert sparse.stems("hospitals", "en-GB") == ["hospit"]
    assert sparse.language_code(None) == "nl" and sparse.language_code("fr") == "nl"
    dutch = sparse.document_vector("ziekenhuizen ziekenhuis", "nl")
    assert len(dutch.indices) == 1  # two forms, one stem, one index
    assert dutch.indices == sorted(dutch.indices)


def test_term_weights_saturate_and_a_query_carries_both_languages_stems() -> None:
    once = sparse.document_vector("acenocoumarol", "nl").values[0]
    thrice = sparse.document_vector("acenocoumarol acenocoumarol acenocoumarol", "nl").values[0]
    assert once < thrice < 3 * once
    query = sparse.query_vector("operations")
    both = {sparse.term_index("oper"), sparse.term_index("operation")}  # English, Dutch
    assert set(query.indices) == both
    assert sparse.document_vector("...", "nl")  # never empty: verify counts empty as missing


def test_anchor_slugs_and_the_section_the_own_text_lies_in() -> None:
    assert slug("Wat neemt u mee?") == "wat-neemt-u-mee"
    assert slug("Nuchter blijven (kinderen)") == "nuchter-blijven-kinderen"
    payload = {
        "title": "Knie",
        "headings": ["Knie", "Opname"],
        "char_start": 1120,  # in the document; the own text is text[120:400]
        "char_end": 1400,
        "new_text_offset": 120,
        "sections": [  # ranges in the chunk's text
            {"headings": ["Knie", "Opname"], "char_start": 0, "char_end": 150},
            {"headings": ["Knie", "Medicijnen"], "char_start": 150, "char_end": 600},
        ],
    }
    assert cited_headings(payload) == ["Knie", "Medicijnen"]
    assert cited_headings({**payload, "sections": None}) == ["Knie", "Opname"]
    assert citation({**payload, "source_url": "https://x.example/knie#old"}).markdown == (
        "[Knie: Medicijnen](https://x.example/knie#medicijnen)"
    )


def test_a_pdf_link_points_at_the_page_of_the_sentence_that_matched() -> None:
    own = "De operatie duurt een uur.\n\n- Na zes weken mag u weer\n  autorijden."
    payload = {
        "title": "Heup",
        "headings": ["Heup", "Operatie"],
        "text": "Overlap. " + own,
        "char_start": 500,
        "char_end": 500 + len(own),
        "new_text_offset": len("Overlap. "),
        "page_start": 3,
        "page_end": 4,
        "pages": [[0, 3], [own.index("- Na"), 4]],
        "source_url": "https://x.example/heup.pdf",
    }
    later = citation(payload, "Na zes weken mag u weer autorijden.")
    assert later.markdown == "[Heup: Operatie](https://x.example/heup.pdf#page=4)"
    assert (
        citation(payload, "De operatie duurt een uur.").url == "https://x.example/heup.pdf#page=3"
    )
    assert citation(payload).url == "https://x.example/heup.pdf#page=3"  # no passage: the chunk
    assert citation({**payload, "source_url": None}, "Na zes weken mag u…").markdown == (
        "[Heup: Operatie, p. 4]"
    )


def test_the_preview_is_the_sentence_that_matched_not_the_first() -> None:
    text = (
        "## Voorbereiding\n\nStop twee weken voor de operatie met roken. Oefen met\nkrukken.\n\n"
        "- neem uw medicijnoverzicht mee\n- gemakkelijke kleding"
    )
    assert passage(text, "medicijnoverzicht") == "neem uw medicijnoverzicht mee"
    assert passage(text, "krukken oefenen") == "Oefen met krukken."
    assert passage(text, "niets hiervan") == "Stop twee weken voor de operatie met roken."


def test_the_preview_weighs_words_the_chunk_rarely_uses_above_common_ones() -> None:
    # The README's first search: "stoppen" and "met" match the smoking sentence, which comes
    # first, as many words as "wanneer ... stopt" in the answer; "met" is in two sentences,
    # "wanneer" in one, so the answer wins the tie.
    text = (
        "## Voorbereiding\n\nStop twee weken voor de operatie met roken. Kom met iemand die u "
        "naar huis brengt.\n\n### Medicijnen\n\nGebruikt u bloedverdunners, zoals "
        "acenocoumarol, apixaban of clopidogrel? Dan hoort u van de anesthesioloog wanneer u "
        "daarmee stopt. Stop nooit op eigen houtje. Neem een medicijnoverzicht mee naar het "
        "spreekuur en naar de opname."
    )
    assert passage(text, "wanneer stoppen met bloedverdunners") == (
        "Dan hoort u van de anesthesioloog wanneer u daarmee stopt."
    )
    assert passage(text, "roken") == "Stop twee weken voor de operatie met roken."


def test_the_preview_leaves_out_html_tags_but_keeps_autolinks() -> None:
    text = (
        "## Dental care\n\n<ul>\n<li>\n"
        '<button class="usa-accordion-button" aria-controls="pow">I’m a former Prisoner of '
        'War.</button>\n<div id="pow" class="usa-accordion-content"><!-- class -->\n\n'
        "**You’re in:** Class IIC\n\n</div>\n</li>\n</ul>\n\n"
        "Read more at <https://www.va.gov/dental>."
    )
    assert passage(text, "former prisoner of war") == "I’m a former Prisoner of War."
    assert passage(text, "read more") == "Read more at <https://www.va.gov/dental>."
    assert all("<" not in piece for piece in pieces(text)[:-1])
