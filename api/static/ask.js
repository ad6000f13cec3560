// "Probeer een vraag": an editor types a patient's question and sees the passages the chatbot
// would get (POST /v1/search), with their citations and the question's words highlighted, so
// they can tell whether the content answers it. Its words are in I18n (`ask.*`, Dutch and
// English); the static ones sit in index.html as `data-i18n`, the rest is re-rendered from the
// last answer when the editor switches language.
"use strict";

I18n.add({
  nl: {
    "ask.title": "Probeer een vraag",
    "ask.intro": "Stel een vraag zoals een patiënt die zou stellen. U ziet de vijf passages die "
      + "de chatbot als bron krijgt, met hun bronvermelding, in de volgorde van de bron.",
    "ask.label": "Vraag van een patiënt",
    "ask.placeholder": "Bijvoorbeeld: mag ik mijn bloedverdunners blijven gebruiken?",
    "ask.button": "Zoeken",
    "ask.searching": "Bezig met zoeken…",
    "ask.empty": "Typ eerst een vraag.",
    "ask.none": "Geen passages gevonden. De inhoud beantwoordt deze vraag (nog) niet: voeg een "
      + "pagina of brochure toe die het antwoord geeft.",
    "ask.found": "{count} passages gevonden in {ms} ms, in de volgorde van de bron.",
    "ask.foundOne": "1 passage gevonden in {ms} ms.",
    "ask.rank": "nr. {rank} op relevantie",
    "ask.weak": "Geen passage die deze vraag goed beantwoordt. De passages hieronder lijken er "
      + "het meest op, maar passen zwak: voeg een pagina of brochure toe die het antwoord geeft.",
    "ask.weakHit": "past zwak bij de vraag",
    "ask.score": "score {score}",
    "ask.page": "pagina {page}",
    "ask.pages": "pagina's {first}\u2013{last}",
    "ask.whole": "Hele passage tonen",
    "ask.hits": "Gevonden passages",
    "ask.alsoIn": "Ook in:",
    "ask.noScope": "Deze API-sleutel mag niet zoeken. Vraag de beheerder om een sleutel met het "
      + "recht \u201csearch\u201d.",
    "ask.refused": "Deze sleutel werd geweigerd. Meld u opnieuw aan.",
    "ask.invalid": "Deze vraag kan niet worden gezocht: {detail}",
    "ask.invalidWords": "Deze vraag kan niet worden gezocht: hij is leeg of te lang, of een "
      + "filter of getal klopt niet.",
    "ask.failed": "Zoeken lukte niet. Probeer het zo nog eens.",
    "ask.offline": "Geen antwoord van de server: controleer uw verbinding en probeer het opnieuw.",
  },
  en: {
    "ask.title": "Try a question",
    "ask.intro": "Ask a question the way a patient would. You see the five passages the chatbot "
      + "gets as its sources, with their citations, in the order of the source.",
    "ask.label": "A patient's question",
    "ask.placeholder": "For example: may I keep taking my blood thinners?",
    "ask.button": "Search",
    "ask.searching": "Searching…",
    "ask.empty": "Type a question first.",
    "ask.none": "No passages found. The content does not answer this question (yet): add a page "
      + "or brochure that gives the answer.",
    "ask.found": "{count} passages found in {ms} ms, in the order of the source.",
    "ask.foundOne": "1 passage found in {ms} ms.",
    "ask.rank": "no. {rank} by relevance",
    "ask.weak": "No passage answers this question well. The passages below come closest, but "
      + "match weakly: add a page or brochure that gives the answer.",
    "ask.weakHit": "matches the question weakly",
    "ask.score": "score {score}",
    "ask.page": "page {page}",
    "ask.pages": "pages {first}\u2013{last}",
    "ask.whole": "Show the whole passage",
    "ask.hits": "Passages found",
    "ask.alsoIn": "Also in:",
    "ask.noScope": "This API key may not search. Ask the administrator for a key with the "
      + "\u201csearch\u201d scope.",
    "ask.refused": "This key was refused. Sign in again.",
    "ask.invalid": "This question cannot be searched: {detail}",
    "ask.failed": "The search did not work. Try again shortly.",
    "ask.offline": "No answer from the server: check your connection and try again.",
  },
});

const AskBox = (() => {
  const t = I18n.t;
  // What the box shows, re-rendered when the language changes: the last answer
  // ({query, status, body}), or else a note ({key, kind}: "searching", "type a question").
  let last = null;
  let note = null;

  const $ = (id) => document.getElementById(id);

  // Words too common to show where an answer is ("de", "het", "wanneer", "the", ...).
  const STOP = new Set(("aan als bij dan dat de den der des deze die dit doen door een en er "
    + "had heb hebben heeft hem het hier hij hoe hun ik in is je kan kun kunnen maar me meer "
    + "met mijn mag moet na naar niet nog nu of om omdat ons onze ook op over te tot u uit uw "
    + "van veel voor waar wanneer wat we wel welke wie wij wordt worden zal ze zelf zich zij "
    + "zijn zo zonder a an and are as at be by can do for from how i in is it my of on or "
    + "should the to was what when where which who why will with you your").split(" "));

  // The query's whole words (3+ letters, no stop words) as one pattern, or null.
  function pattern(query) {
    const words = (query.match(/[\p{L}\p{N}]{3,}/gu) || [])
      .filter((w) => !STOP.has(w.toLowerCase()))
      .map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
    return words.length
      ? new RegExp(`(?<![\\p{L}\\p{N}])(${words.join("|")})(?![\\p{L}\\p{N}])`, "giu") : null;
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

  // Rendered Markdown (headings, lists, tables, tip/warning boxes) with the words marked.
  function renderedPassage(text, regex) {
    const box = Ui.el("div", { class: "chunk-text md" }, ...Markdown.render(text));
    if (!regex) return box;
    const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
    const texts = [];
    while (walker.nextNode()) texts.push(walker.currentNode);
    for (const node of texts) node.replaceWith(highlighted(node.nodeValue, regex));
    return box;
  }

  function citation(hit) {
    const label = hit.section ? `${hit.title || hit.external_id}: ${hit.section}` : (hit.title || hit.external_id);
    const safe = hit.citation_url && /^https?:\/\//i.test(hit.citation_url);
    return safe
      ? Ui.el("a", { href: hit.citation_url, rel: "noopener noreferrer", target: "_blank" }, label)
      : Ui.el("span", {}, label);
  }

  // The same passage word for word in other documents: shown once, with links to the others.
  function alsoIn(hit) {
    const others = hit.also_in || [];
    if (!others.length) return null;
    const links = others.flatMap((other, n) => (n ? [", ", citation(other)] : [citation(other)]));
    return Ui.el("p", { class: "ask-also chunk-meta" }, t("ask.alsoIn"), " ", ...links);
  }

  function pages(start, end) {
    return start === end || !end ? t("ask.page", { page: start })
      : t("ask.pages", { first: start, last: end });
  }

  // One numbering, the list's own (the source order); the rank by relevance is a small label.
  function hitItem(hit, regex) {
    const meta = [t("ask.score", { score: hit.final_score.toFixed(2) })];
    if (hit.page_start) meta.push(pages(hit.page_start, hit.page_end));
    if (hit.weak) meta.push(t("ask.weakHit"));
    return Ui.el(
      "li",
      { class: hit.weak ? "ask-hit weak" : "ask-hit", "data-document": hit.external_id || "" },
      Ui.el(
        "p",
        { class: "ask-cite" },
        citation(hit),
        " ",
        Ui.el("span", { class: "ask-rank" }, t("ask.rank", { rank: hit.rank })),
      ),
      alsoIn(hit),
      Ui.el("p", { class: "ask-passage" }, highlighted(hit.passage, regex)),
      Ui.el("p", { class: "chunk-meta" }, meta.join(" · ")),
      Ui.el(
        "details",
        {},
        Ui.el("summary", {}, t("ask.whole")),
        renderedPassage(hit.new_text, regex),
      ),
    );
  }

  function explain(status, body) {
    if (status === 0) return t("ask.offline");
    if (status === 401) return t("ask.refused");
    if (status === 403) return t("ask.noScope");
    // The server's reason is English: the Dutch page says the possible reasons itself.
    if (status === 422 && I18n.lang !== "en") return t("ask.invalidWords");
    if (status === 422) return t("ask.invalid", { detail: (body && body.detail) || "" });
    // The search index out of reach (index_unavailable, qdrant_locked): said as api.js says it.
    if (status === 503 && body && body.code && I18n.has(`problem.${body.code}`)) {
      return t(`problem.${body.code}`);
    }
    return t("ask.failed");
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

  // The answer in the page's language: the message and the hits (kept open where they were).
  function render() {
    const message = $("ask-message");
    const list = $("ask-hits");
    if (!last) {
      Ui.setMessage(message, note ? t(note.key) : "", note ? note.kind : "");
      return;
    }
    const { query, status, body } = last;
    if (status !== 200 || !body) {
      list.replaceChildren();
      Ui.setMessage(message, explain(status, body), "bad");
      return;
    }
    const open = [...list.querySelectorAll("details")].map((d) => d.open);
    const regex = pattern(query);
    list.replaceChildren(...body.hits.map((hit) => hitItem(hit, regex)));
    list.querySelectorAll("details").forEach((d, index) => { d.open = Boolean(open[index]); });
    const count = body.hits.length;
    const ms = Math.round(body.timings_ms.total);
    list.classList.toggle("weak", Boolean(body.weak && count));
    if (body.weak && count) {
      Ui.setMessage(message, t("ask.weak"), "bad");
      return;
    }
    Ui.setMessage(
      message,
      count ? t(count === 1 ? "ask.foundOne" : "ask.found", { count, ms }) : t("ask.none"),
      count ? "ok" : "bad",
    );
  }

  async function submit(event) {
    event.preventDefault();
    const query = $("ask-query").value.trim();
    last = null;
    $("ask-hits").replaceChildren();
    if (!query) {
      note = { key: "ask.empty", kind: "bad" };
      render();
      $("ask-query").focus();
      return;
    }
    $("ask-button").disabled = true;
    note = { key: "ask.searching", kind: "" };
    render();
    const { status, body } = await search(query);
    $("ask-button").disabled = false;
    last = { query, status, body };
    render();
  }

  function init() {
    const form = $("ask-form");
    if (!form) return;
    form.addEventListener("submit", submit);
    I18n.onChange(render);
  }

  document.addEventListener("DOMContentLoaded", init);
  return { pattern };
})();
