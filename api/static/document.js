// One document: facts, the error in plain words, versions, history (who uploaded, each stage
// with its time) and its chunks as they are indexed; re-ingest, and delete after a confirmation.
"use strict";

const DocumentView = (() => {
  const { el, badge, time, number, duration } = Ui;
  let documentId = null;
  let shownChunksOf = null; // the version whose chunks are on screen
  let detail = null;
  let navigate = () => {};
  let requestRefresh = () => {};

  const $ = (id) => document.getElementById(id);

  function fact(label, ...value) {
    return [el("dt", {}, label), el("dd", {}, ...value)];
  }

  function renderFacts(d) {
    const current = d.versions.find((v) => v.id === d.current_version_id);
    $("document-facts").replaceChildren(
      ...fact("Status", badge(d.status)),
      ...fact("Source", d.source),
      ...fact("Identifier", d.external_id),
      ...fact("Source URL", d.source_url
        ? el("a", { href: d.source_url, rel: "noopener noreferrer", target: "_blank" }, d.source_url)
        : el("span", { class: "muted" }, "\u2014")),
      ...fact("Language", d.language || el("span", { class: "muted" }, "\u2014")),
      ...fact("Tags", d.tags.length ? d.tags.join(", ") : el("span", { class: "muted" }, "\u2014")),
      ...fact("Indexed version", current ? `version ${current.number}` : "none yet"),
      ...fact("Chunks", number(d.chunk_count)),
      ...fact("Tokens", `${number(d.token_count)} in chunks, ${number(d.tokens_spent)} spent on embeddings`),
      ...fact("Last change", time(d.updated_at, { withAgo: true })),
    );
  }

  function renderError(d) {
    const box = $("document-error");
    if (!d.error || d.status !== "failed") {
      box.hidden = true;
      box.replaceChildren();
      return;
    }
    const advice = d.error.retryable
      ? "This may be temporary: press Re-ingest to try again."
      : "Fix the file and upload it again, or ask the support team.";
    box.replaceChildren(
      el("h2", {}, "The latest version could not be indexed"),
      el("p", { class: "error-message" }, d.error.message || "No reason was recorded."),
      el("p", {}, advice),
      d.error.code ? el("p", { class: "muted" }, `Error code: ${d.error.code}`) : null,
    );
    box.hidden = false;
  }

  // A scanned PDF read with OCR: say so, and where the text may be wrong. (Its one text.)
  function ocrNotice(ocr) {
    const low = ocr.low_confidence_pages;
    const word = (pages) => (pages.length === 1 ? "page" : "pages");
    return low.length
      ? `Scanned; text recognised with low confidence on ${word(low)} ${pageRanges(low)}: check the chunks.`
      : `Scanned; the text of ${word(ocr.pages)} ${pageRanges(ocr.pages)} was recognised with OCR (confidence ${Math.round(ocr.confidence)} %).`;
  }

  // [3, 4, 7] -> "3-4, 7"
  function pageRanges(pages) {
    const ranges = [];
    for (const page of [...pages].sort((a, b) => a - b)) {
      const last = ranges[ranges.length - 1];
      if (last && page === last[1] + 1) last[1] = page;
      else ranges.push([page, page]);
    }
    return ranges.map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`)).join(", ");
  }

  function renderOcr(d) {
    const box = $("document-ocr");
    const current = d.versions.find((v) => v.id === d.current_version_id);
    if (!current || !current.ocr) {
      box.hidden = true;
      box.replaceChildren();
      return;
    }
    box.replaceChildren(el("p", {}, ocrNotice(current.ocr)));
    box.hidden = false;
  }

  function renderVersions(d) {
    const rows = [...d.versions].reverse().map((v) => el("tr", { "data-version": v.number },
      el("td", { class: "num" }, v.number),
      el("td", {}, badge(v.status),
        v.error_message ? el("small", { class: "block" }, v.error_message) : null),
      el("td", {}, v.filename || "\u2014",
        el("small", { class: "block muted" }, `${v.media_type}, ${Api.formatBytes(v.size_bytes)}`)),
      el("td", {}, v.uploaded_by || "\u2014"),
      el("td", {}, time(v.received_at)),
      el("td", {}, time(v.finished_at)),
      el("td", { class: "num" }, v.chunk_count === null ? "\u2014" : number(v.chunk_count)),
      el("td", { class: "num" }, number(v.tokens_spent)),
    ));
    $("versions-table").querySelector("tbody").replaceChildren(...rows);
  }

  // "[pdf_encrypted] The PDF is password-protected." -> the words, and the code apart.
  function splitDetail(detailText) {
    const match = /^\[([^\]]+)\]\s*(.*)$/s.exec(detailText || "");
    return match ? { code: match[1], words: match[2] } : { code: null, words: detailText };
  }

  // People and named systems (a key's name, "cms", "reaper"), not a worker's lease id.
  function actorWords(e) {
    if (!e.actor) return null;
    if (e.from_status === null && e.to_status === "received") return `uploaded by ${e.actor}`;
    if (/^[0-9a-f-]{16,}$/i.test(e.actor) || e.actor.startsWith("ingest.")) return null;
    return `by ${e.actor}`;
  }

  function renderHistory(d) {
    const numbers = new Map(d.versions.map((v) => [v.id, v.number]));
    const previous = new Map(); // version id -> time of its previous event
    const items = d.events.map((e) => {
      const since = previous.get(e.version_id);
      previous.set(e.version_id, e.at);
      const { code, words } = splitDetail(e.detail);
      const who = actorWords(e);
      return el("li", { "data-status": e.to_status },
        el("span", { class: "history-time" }, time(e.at)),
        el("span", { class: "history-what" },
          badge(e.to_status), " ",
          Ui.STATUS_WORDS[e.to_status] || e.to_status,
          numbers.has(e.version_id) ? el("span", { class: "muted" }, ` \u00b7 version ${numbers.get(e.version_id)}`) : null,
          who ? el("span", { class: "muted" }, ` \u00b7 ${who}`) : null,
          since ? el("span", { class: "muted" }, ` \u00b7 after ${duration(since, e.at)}`) : null,
          words ? el("span", { class: "block history-detail" }, words) : null,
          code ? el("small", { class: "block muted" }, `Error code: ${code}`) : null));
    });
    $("history").replaceChildren(...items.reverse());
  }

  function pages(chunk) {
    if (chunk.page_start === null) return null;
    return chunk.page_end && chunk.page_end !== chunk.page_start
      ? `pages ${chunk.page_start}\u2013${chunk.page_end}` : `page ${chunk.page_start}`;
  }

  function renderChunks(answer) {
    const items = answer.items.map((c) => el("article", { class: "chunk", "data-index": c.index,
      "aria-labelledby": `chunk-${c.index}` },
    el("header", {},
      el("h3", { id: `chunk-${c.index}` }, `Chunk ${c.index + 1}`),
      el("span", { class: "chunk-meta" },
        [`${number(c.token_count)} tokens`, pages(c), c.kinds.join(", "),
          c.ocr_confidence == null ? null : `scanned, OCR ${Math.round(c.ocr_confidence)} %`]
          .filter(Boolean).join(" \u00b7 "))),
    el("p", { class: "heading-path" },
      el("span", { class: "visually-hidden" }, "Heading path: "),
      c.headings.length ? c.headings.join(" \u203a ") : "(before the first heading)"),
    el("pre", { class: "chunk-text", tabIndex: 0, "aria-label": `Text of chunk ${c.index + 1}` }, c.text)));
    $("chunks").replaceChildren(...items);
    $("chunks-summary").textContent = answer.total
      ? `${answer.total} chunk${answer.total === 1 ? "" : "s"} of the indexed version` +
        (answer.total > answer.items.length ? `; the first ${answer.items.length} are shown.` : ".")
      : (Ui.IN_FLIGHT.has(detail.status) ? "No chunks indexed yet: they appear here as soon as the document is indexed."
        : "No chunks are indexed for this document.");
  }

  async function refresh() {
    if (!documentId) return false;
    detail = await Api.call("GET", `/v1/documents/${documentId}`);
    $("document-title").textContent = detail.title || detail.external_id;
    document.title = `${detail.title || detail.external_id} \u2013 Content ingestion`;
    renderFacts(detail);
    renderError(detail);
    renderOcr(detail);
    renderVersions(detail);
    renderHistory(detail);
    const deleted = detail.status === "deleted";
    $("reingest-button").disabled = deleted;
    $("delete-button").disabled = deleted;
    const key = `${detail.current_version_id}:${detail.chunk_count}`;
    if (shownChunksOf !== key) {
      renderChunks(await Api.call("GET", `/v1/documents/${documentId}/chunks`, { params: { limit: 1000 } }));
      shownChunksOf = key;
    }
    return Ui.IN_FLIGHT.has(detail.status) || detail.versions.some((v) => Ui.IN_FLIGHT.has(v.status));
  }

  function show(id) {
    if (id !== documentId) {
      documentId = id;
      shownChunksOf = null;
      Ui.setMessage($("action-message"), "");
      for (const node of ["document-facts", "history", "chunks"]) $(node).replaceChildren();
      $("versions-table").querySelector("tbody").replaceChildren();
      $("chunks-summary").textContent = "";
      $("document-error").hidden = true;
      $("document-ocr").hidden = true;
      $("document-title").textContent = "Loading…";
    }
  }

  async function act(work, message) {
    const node = $("action-message");
    try {
      await work();
      Ui.setMessage(node, message, "ok");
      Ui.announce(message);
    } catch (error) {
      Ui.setMessage(node, error.message, "bad");
      Ui.announce(error.message);
      if (error.status === 401) throw error;
    }
  }

  function init(options) {
    navigate = options.navigate;
    requestRefresh = options.requestRefresh;
    const dialog = $("confirm-delete");
    $("reingest-button").addEventListener("click", () => act(async () => {
      const accepted = await Api.call("POST", `/v1/documents/${documentId}/reingest`);
      requestRefresh();
      return accepted;
    }, "Sent through the pipeline again as a new version.").catch(options.onUnauthorized));
    $("delete-button").addEventListener("click", () => {
      dialog.returnValue = "";
      dialog.showModal();
    });
    dialog.addEventListener("close", () => {
      if (dialog.returnValue !== "delete") {
        $("delete-button").focus();
        return;
      }
      const name = detail ? (detail.title || detail.external_id) : "The document";
      act(async () => {
        await Api.call("DELETE", `/v1/documents/${documentId}`);
        Ui.setMessage($("flash"), `Deleted \u201c${name}\u201d.`, "ok");
        navigate("#/documents");
      }, `Deleted \u201c${name}\u201d.`).catch(options.onUnauthorized);
    });
  }

  return { init, show, refresh };
})();
