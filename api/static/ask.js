// "Probeer een vraag": an editor types a patient's question and sees the passages the chatbot
// would get (POST /v1/search), with their citations and the question's words highlighted, so
// they can tell whether the content answers it. Every text of the box is in TEXTS, for
// translation.
"use strict";

const AskBox = (() => {
  const TEXTS = {
    title: "Probeer een vraag",
    intro: "Stel een vraag zoals een patiënt die zou stellen. U ziet de vijf passages die de " +
      "chatbot als bron krijgt, met hun bronvermelding, in de volgorde van de bron.",
    label: "Vraag van een patiënt",
    placeholder: "Bijvoorbeeld: mag ik mijn bloedverdunners blijven gebruiken?",
    button: "Zoeken",
    searching: "Bezig met zoeken…",
    empty: "Typ eerst een vraag.",
    none: "Geen passages gevonden. De inhoud beantwoordt deze vraag (nog) niet: voeg een " +
      "pagina of brochure toe die het antwoord geeft.",
    found: (count, ms) => `${count} passages gevonden in ${Math.round(ms)} ms, in de volgorde van de bron.`,
    rank: (rank) => `nr. ${rank} op relevantie`,
    score: (score) => `score ${score.toFixed(2)}`,
    pages: (start, end) => (start === end || !end ? `pagina ${start}` : `pagina ${start}–${end}`),
    whole: "Hele passage tonen",
    hitsLabel: "Gevonden passages",
    noScope: "Deze API-sleutel mag niet zoeken. Vraag de beheerder om een sleutel met het " +
      "recht \u201csearch\u201d.",
    refused: "Deze sleutel werd geweigerd. Meld u opnieuw aan.",
    invalid: (detail) => `Deze vraag kan niet worden gezocht: ${detail}`,
    failed: "Zoeken lukte niet. Probeer het zo nog eens.",
    offline: "Geen antwoord van de server: controleer uw verbinding en probeer het opnieuw.",
  };

  const $ = (id) => document.getElementById(id);

  // The query's words (3+ letters) as one case-insensitive pattern, or null.
  function pattern(query) {
    const words = (query.match(/[\p{L}\p{N}]{3,}/gu) || [])
      .map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
    return words.length ? new RegExp(`(${words.join("|")})`, "giu") : null;
  }

  // Text with <mark> around the query's words; built as nodes, never as HTML.
  function highlighted(text, regex) {
    const fragment = document.createDocumentFragment();
    if (!regex) {
      fragment.append(text);
      return fragment;
    }
    text.split(regex).forEach((part, index) => {
      fragment.append(index % 2 ? Ui.el("mark", {}, part) : part);
    });
    return fragment;
  }

  function citation(hit) {
    const label = hit.section ? `${hit.title || hit.external_id}: ${hit.section}` : (hit.title || hit.external_id);
    const safe = hit.citation_url && /^https?:\/\//i.test(hit.citation_url);
    return safe
      ? Ui.el("a", { href: hit.citation_url, rel: "noopener noreferrer", target: "_blank" }, label)
      : Ui.el("span", {}, label);
  }

  function hitItem(hit, regex) {
    const meta = [TEXTS.rank(hit.rank), TEXTS.score(hit.final_score)];
    if (hit.page_start) meta.push(TEXTS.pages(hit.page_start, hit.page_end));
    return Ui.el(
      "li",
      { class: "ask-hit", "data-document": hit.external_id || "" },
      Ui.el("p", { class: "ask-cite" }, citation(hit)),
      Ui.el("p", { class: "ask-passage" }, highlighted(hit.passage, regex)),
      Ui.el("p", { class: "chunk-meta" }, meta.join(" · ")),
      Ui.el(
        "details",
        {},
        Ui.el("summary", {}, TEXTS.whole),
        Ui.el("pre", { class: "chunk-text" }, highlighted(hit.new_text, regex)),
      ),
    );
  }

  function explain(status, body) {
    if (status === 0) return TEXTS.offline;
    if (status === 401) return TEXTS.refused;
    if (status === 403) return TEXTS.noScope;
    if (status === 422) return TEXTS.invalid((body && body.detail) || "");
    return TEXTS.failed;
  }

  async function search(query) {
    let response;
    try {
      response = await fetch("/v1/search", {
        method: "POST",
        headers: {
          Authorization: `Bearer ${Api.getKey()}`,
          Accept: "application/json",
          "Content-Type": "application/json",
        },
        body: JSON.stringify({ query }),
      });
    } catch (_) {
      return { status: 0, body: null };
    }
    let body = null;
    try {
      body = await response.json();
    } catch (_) {
      body = null;
    }
    return { status: response.status, body };
  }

  async function submit(event) {
    event.preventDefault();
    const query = $("ask-query").value.trim();
    const message = $("ask-message");
    const list = $("ask-hits");
    if (!query) {
      Ui.setMessage(message, TEXTS.empty, "bad");
      $("ask-query").focus();
      return;
    }
    $("ask-button").disabled = true;
    Ui.setMessage(message, TEXTS.searching, "");
    list.replaceChildren();
    const { status, body } = await search(query);
    $("ask-button").disabled = false;
    if (status !== 200 || !body) {
      Ui.setMessage(message, explain(status, body), "bad");
      return;
    }
    const regex = pattern(query);
    list.replaceChildren(...body.hits.map((hit) => hitItem(hit, regex)));
    Ui.setMessage(
      message,
      body.hits.length ? TEXTS.found(body.hits.length, body.timings_ms.total) : TEXTS.none,
      body.hits.length ? "ok" : "bad",
    );
  }

  function init() {
    const form = $("ask-form");
    if (!form) return;
    $("ask-title").textContent = TEXTS.title;
    $("ask-intro").textContent = TEXTS.intro;
    $("ask-label").textContent = TEXTS.label;
    $("ask-query").placeholder = TEXTS.placeholder;
    $("ask-button").textContent = TEXTS.button;
    $("ask-hits").setAttribute("aria-label", TEXTS.hitsLabel);
    form.addEventListener("submit", submit);
  }

  document.addEventListener("DOMContentLoaded", init);
  return { TEXTS, pattern };
})();
