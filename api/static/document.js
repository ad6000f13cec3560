// One document: facts, the error in plain words, versions, history (who uploaded, each stage
// with its time) and its chunks as they are indexed; re-ingest, and delete after a confirmation;
// hide the document or one chunk from the chatbot with a typed reason, and show it again.
"use strict";

const DocumentView = (() => {
  const { el, badge, time, number, duration } = Ui;
  const t = I18n.t;
  // Failures that sending the same bytes again cannot fix: no Re-ingest for them.
  // (A CMS page's fetched bytes are kept on its version, so re-ingesting it sends them again.)
  const FILE_MUST_CHANGE = new Set(["pdf_encrypted", "pdf_corrupt", "unsupported_media_type",
    "undecodable_text", "too_large", "front_matter_refused", "docx_corrupt", "office_encrypted",
    "office_macros", "html_no_content"]);
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
      ...fact(t("fact.status"), badge(d.status)),
      ...fact(t("fact.source"), I18n.source(d.source)),
      ...fact(t("fact.identifier"), d.external_id),
      ...fact(t("fact.sourceUrl"), d.source_url
        ? el("a", { href: Ui.safeHref(d.source_url), rel: "noopener noreferrer", target: "_blank" }, d.source_url)
        : el("span", { class: "muted" }, "\u2014")),
      ...fact(t("fact.language"), d.language || el("span", { class: "muted" }, "\u2014")),
      ...fact(t("fact.tags"), d.tags.length ? d.tags.join(", ") : el("span", { class: "muted" }, "\u2014")),
      ...fact(t("fact.indexed"), current ? t("fact.version", { number: current.number }) : t("fact.noneYet")),
      // The indexed version's chunks; none indexed (only failed versions so far): a dash, as
      // in the versions table.
      ...fact(t("fact.chunks"), d.current_version_id ? number(d.chunk_count) : "\u2014"),
      ...fact(t("fact.tokens"), t("fact.tokensText",
        { inChunks: number(d.token_count), spent: number(d.tokens_spent) })),
      ...fact(t("fact.changed"), time(d.updated_at, { withAgo: true })),
      ...fact(t("hide.fact"), ...visibility(d)),
    );
  }

  // Hidden from the chatbot: a badge, who and why; else visible (and chunks hidden apart).
  function visibility(d) {
    const apart = d.hidden_chunks
      ? el("span", { class: "block muted" }, t("hide.chunksHidden", { count: d.hidden_chunks })) : null;
    if (!d.hidden) return [t("hide.visible"), apart];
    return [
      badge("hidden"), " ",
      el("span", { class: "muted" }, t("hide.hiddenBy", { who: d.hidden_by || "?" })),
      d.hidden_reason ? el("span", { class: "block hidden-reason" }, d.hidden_reason) : null,
      apart,
    ];
  }

  function renderError(d) {
    const box = $("document-error");
    if (!d.error || d.status !== "failed") {
      box.hidden = true;
      box.replaceChildren();
      return;
    }
    let advice = d.error.retryable ? t("error.retry") : t("error.fix");
    if (FILE_MUST_CHANGE.has(d.error.code)) advice = t("error.fixFile");
    box.replaceChildren(
      el("h2", {}, t("error.title")),
      el("p", { class: "error-message" }, errorWords(d.error.code, d.error.message)),
      el("p", {}, advice),
      d.error.code ? el("p", { class: "muted" }, t("error.code", { code: d.error.code })) : null,
    );
    box.hidden = false;
  }

  // The explanation of an error code in the page's language; the server's (English) words
  // otherwise, and on the English page whenever there are some.
  function errorWords(code, message) {
    const explained = code && I18n.has(`errors.${code}`);
    if (explained && (I18n.lang !== "en" || !message)) return t(`errors.${code}`);
    return I18n.detail(message) || t("error.noReason");
  }

  // A scanned PDF read with OCR: say so, and where the text may be wrong. (Its one text.)
  function ocrNotice(ocr) {
    const low = ocr.low_confidence_pages;
    const word = (pages) => t(pages.length === 1 ? "ocr.page" : "ocr.pages");
    return low.length
      ? t("ocr.low", { pages: `${word(low)} ${pageRanges(low)}` })
      : t("ocr.read", {
        pages: `${word(ocr.pages)} ${pageRanges(ocr.pages)}`,
        confidence: Math.round(ocr.confidence),
      });
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

  function downloadButton(id, v) {
    const button = el("button", { type: "button", class: "link-button block" }, t("version.download"));
    button.setAttribute("aria-label", t("version.downloadLabel", { number: v.number }));
    const path = `/v1/documents/${id}/versions/${v.number}/file`;
    button.addEventListener("click", () => {
      act(() => Api.download(path, v.filename || `versie-${v.number}`), t("version.downloaded"))
        .catch(() => {}); // a 401 shows in the message; the next refresh signs out
    });
    return button;
  }

  function renderVersions(d) {
    const rows = [...d.versions].reverse().map((v) => el("tr", { "data-version": v.number },
      el("td", { class: "num" }, v.number),
      el("td", {}, badge(v.status),
        v.error_message ? el("small", { class: "block" }, errorWords(v.error_code, v.error_message)) : null),
      // A metadata version has no bytes of its own: only the document's fields changed.
      v.kind === "metadata"
        ? el("td", {}, el("small", { class: "block muted" }, t("version.metadata")))
        : el("td", {}, v.filename || "\u2014",
          el("small", { class: "block muted" }, `${I18n.mediaType(v.media_type)}, ${Api.formatBytes(v.size_bytes)}`),
          v.size_bytes ? downloadButton(d.id, v) : null),
      el("td", {}, v.uploaded_by || "\u2014"),
      el("td", {}, time(v.received_at)),
      el("td", {}, time(v.finished_at)),
      // A failed version may have been cut into chunks before it failed, but none of them
      // reached the index: a dash, as the facts show for a document with none indexed.
      el("td", { class: "num" }, v.chunk_count === null || v.status === "failed"
        ? "\u2014" : number(v.chunk_count)),
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
    const who = I18n.actor(e.actor);
    if (e.from_status === null && e.to_status === "received") return t("history.uploadedBy", { who });
    if (/^[0-9a-f-]{16,}$/i.test(e.actor) || e.actor.startsWith("ingest.")) return null;
    return t("history.by", { who });
  }

  // "chunk 2: reason" (the API's 0-based index) -> "stuk 3: reason", as the chunks are titled.
  function chunkDetail(e) {
    const match = /^chunk (\d+)(?:: ([\s\S]*))?$/.exec(e.detail || "");
    if (!e.to_status.startsWith("chunk_") || !match) return e.detail;
    const which = t("history.chunk", { number: Number(match[1]) + 1 });
    return match[2] ? `${which}: ${match[2]}` : which;
  }

  function renderHistory(d) {
    const numbers = new Map(d.versions.map((v) => [v.id, v.number]));
    // A stage lasts from its event to the version's next one: its duration goes on its own row
    // (a version's end, indexed, failed or unchanged, is no stage and has none).
    const next = new Map(); // event index -> time of the same version's next event
    const seen = new Map(); // version id -> time of the latest event seen walking backwards
    for (let i = d.events.length - 1; i >= 0; i -= 1) {
      const e = d.events[i];
      if (seen.has(e.version_id)) next.set(i, seen.get(e.version_id));
      seen.set(e.version_id, e.at);
    }
    const items = d.events.map((e, i) => {
      const until = Ui.IN_FLIGHT.has(e.to_status) ? next.get(i) : undefined;
      const { code, words } = splitDetail(chunkDetail(e));
      const who = actorWords(e);
      return el("li", { "data-status": e.to_status },
        el("span", { class: "history-time" }, time(e.at)),
        el("span", { class: "history-what" },
          badge(e.to_status), " ",
          Ui.statusWords(e.to_status),
          numbers.has(e.version_id) ? el("span", { class: "muted" }, ` \u00b7 ${t("history.version", { number: numbers.get(e.version_id) })}`) : null,
          who ? el("span", { class: "muted" }, ` \u00b7 ${who}`) : null,
          until ? el("span", { class: "muted" }, ` \u00b7 ${t("history.took", { duration: duration(e.at, until) })}`) : null,
          words ? el("span", { class: "block history-detail" }, errorWords(code, words)) : null,
          code ? el("small", { class: "block muted" }, t("error.code", { code })) : null));
    });
    $("history").replaceChildren(...items.reverse());
  }

  // The pages of the chunk's own text (the API computes them without the overlap).
  function pages(chunk) {
    if (chunk.page_start === null || chunk.page_start === undefined) return null;
    return chunk.page_end && chunk.page_end !== chunk.page_start
      ? t("chunks.pages", { first: chunk.page_start, last: chunk.page_end })
      : t("chunks.page", { page: chunk.page_start });
  }

  // Overlap (repeated from the previous chunk) marked apart, the chunk's own text rendered as
  // readable text, and the raw Markdown a click away.
  function chunkBody(c) {
    const cut = Math.max(0, Math.min(c.new_text_offset || 0, c.text.length));
    const overlap = c.overlap_tokens > 0 && cut > 0 ? c.text.slice(0, cut) : "";
    const own = overlap ? c.text.slice(cut) : c.text;
    return [
      overlap ? el("div", { class: "chunk-overlap", role: "group",
        "aria-label": t("chunks.overlap", { count: c.overlap_tokens }) },
      el("p", { class: "chunk-overlap-label" }, t("chunks.overlap", { count: c.overlap_tokens })),
      el("div", { class: "md" }, ...Markdown.render(overlap))) : null,
      el("div", { class: "md chunk-own", role: "group", "aria-label": t("chunks.own") },
        ...Markdown.render(own)),
      el("details", { class: "chunk-raw" },
        el("summary", {}, t("chunks.raw")),
        el("pre", { class: "chunk-text", tabIndex: 0,
          "aria-label": t("chunks.textLabel", { number: c.index + 1 }) }, c.text)),
    ];
  }

  // Hide one chunk (with a reason), or show it again if it is hidden itself (not only
  // because the whole document is).
  function chunkButton(c) {
    const own = c.hidden && c.hidden_by !== null;
    const button = el("button", { type: "button", class: "link-button chunk-hide",
      "data-action": own ? "show" : "hide" }, own ? t("hide.show") : t("hide.chunk"));
    button.setAttribute("aria-label",
      t(own ? "hide.showChunkLabel" : "hide.chunkLabel", { number: c.index + 1 }));
    button.disabled = detail !== null && detail.status === "deleted";
    button.addEventListener("click", () => {
      if (own) setVisibility(`/v1/documents/${documentId}/chunks/${c.index}/show`, false);
      else askReason(`/v1/documents/${documentId}/chunks/${c.index}/hide`,
        t("hide.titleChunk", { number: c.index + 1 }), button);
    });
    return button;
  }

  function renderChunks(answer) {
    const items = answer.items.map((c) => el("article", { class: "chunk", "data-index": c.index,
      "aria-labelledby": `chunk-${c.index}` },
    el("header", {},
      el("h3", { id: `chunk-${c.index}` }, t("chunks.title", { number: c.index + 1 })),
      el("span", { class: "chunk-meta" },
        [t("chunks.tokens", { count: number(c.token_count) }), c.kinds.map(I18n.kind).join(", "),
          c.ocr_confidence == null ? null : t("chunks.ocr", { confidence: Math.round(c.ocr_confidence) })]
          .filter(Boolean).join(" \u00b7 "),
        pages(c) ? el("span", { class: "chunk-pages", title: t("chunks.pagesHint") }, ` \u00b7 ${pages(c)}`) : null),
      c.hidden ? badge("hidden") : null,
      c.hidden_reason ? el("span", { class: "muted hidden-reason" }, ` ${c.hidden_reason}`) : null,
      chunkButton(c)),
    el("p", { class: "heading-path" },
      el("span", { class: "visually-hidden" }, t("chunks.headingPath")),
      c.headings.length ? c.headings.join(" \u203a ") : t("chunks.beforeHeading")),
    ...chunkBody(c)));
    $("chunks").replaceChildren(...items);
    const summary = answer.total === 1 ? t("chunks.summaryOne") : t("chunks.summary", { count: answer.total });
    $("chunks-summary").textContent = answer.total
      ? summary + (answer.total > answer.items.length
        ? t("chunks.firstShown", { count: answer.items.length }) : ".")
      : (Ui.IN_FLIGHT.has(detail.status) ? t("chunks.notYet") : t("chunks.none"));
  }

  async function refresh() {
    if (!documentId) return false;
    detail = await Api.call("GET", `/v1/documents/${documentId}`);
    $("document-title").textContent = detail.title || detail.external_id;
    document.title = `${detail.title || detail.external_id} \u2013 ${t("app.name")}`;
    renderFacts(detail);
    renderError(detail);
    renderOcr(detail);
    renderVersions(detail);
    renderHistory(detail);
    const deleted = detail.status === "deleted";
    $("reingest-button").disabled = deleted;
    // Re-ingesting sends the same bytes again: pointless when the file itself is the problem.
    $("reingest-button").hidden = detail.status === "failed" && Boolean(detail.error)
      && FILE_MUST_CHANGE.has(detail.error.code);
    $("delete-button").disabled = deleted;
    $("hide-button").disabled = deleted;
    $("edit-button").disabled = deleted;
    $("hide-button").textContent = detail.hidden ? t("hide.show") : t("hide.document");
    $("hide-button").dataset.action = detail.hidden ? "show" : "hide";
    const key = `${I18n.lang}:${detail.current_version_id}:${detail.chunk_count}:`
      + `${detail.hidden}:${detail.hidden_chunks}`;
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
      $("document-title").textContent = t("document.loading");
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

  let hidePath = null; // what the open reason dialog hides
  let hideOpener = null;
  let onUnauthorized = () => {};

  function askReason(path, title, opener) {
    hidePath = path;
    hideOpener = opener;
    const dialog = $("hide-dialog");
    $("hide-title").textContent = title;
    $("hide-reason").value = "";
    dialog.returnValue = "";
    dialog.showModal();
    $("hide-reason").focus();
  }

  // The edit form: the document's fields now, and on save only those the editor changed
  // (PATCH: a field left out keeps its value, last write wins field by field).
  const EDIT_FIELDS = [
    // [input id, label key, the document's value, input attributes]
    ["edit-title", "edit.titleField", (d) => d.title, { maxLength: 1000 }],
    ["edit-url", "edit.url", (d) => d.source_url,
      { maxLength: 2000, inputMode: "url", placeholder: "https://" }],
    ["edit-language", "edit.language", (d) => d.language, { maxLength: 35 }],
    ["edit-tags", "edit.tags", (d) => (d.tags || []).join(", "), {}],
  ];

  function openEdit() {
    $("edit-fields").replaceChildren(...EDIT_FIELDS.flatMap(([id, label, value, more]) => [
      el("label", { htmlFor: id }, t(label)),
      el("input", { id, type: "text", autocomplete: "off", value: value(detail) || "", ...more }),
    ]));
    const dialog = $("edit-dialog");
    dialog.returnValue = "";
    dialog.showModal();
    $("edit-title").focus();
  }

  function editedFields() {
    const body = {};
    for (const [field, input] of [["title", "edit-title"], ["source_url", "edit-url"],
      ["language", "edit-language"]]) {
      const value = $(input).value.trim();
      if (value !== (detail[field] || "")) body[field] = value || null;
    }
    const tags = [...new Set($("edit-tags").value.split(",").map((tag) => tag.trim())
      .filter(Boolean))];
    if (tags.join("\n") !== (detail.tags || []).join("\n")) body.tags = tags;
    return body;
  }

  function saveEdit() {
    const body = editedFields();
    const names = Object.keys(body);
    if (!names.length) {
      Ui.setMessage($("action-message"), t("edit.nothing"), "ok");
      $("edit-button").focus();
      return;
    }
    const fields = I18n.lang === "en" ? names.join(", ") : I18n.fieldNames(names.join(", "));
    act(async () => {
      const answer = await Api.send("PATCH", `/v1/documents/${documentId}`, body);
      requestRefresh();
      return answer;
    }, t("edit.done", { fields })).catch(onUnauthorized);
  }

  function setVisibility(path, hidden, reason) {
    return act(async () => {
      const answer = await Api.send("POST", path, reason ? { reason } : {});
      shownChunksOf = null;
      requestRefresh();
      return answer;
    }, t(hidden ? "hide.done" : "hide.shownDone")).catch(onUnauthorized);
  }

  function init(options) {
    navigate = options.navigate;
    requestRefresh = options.requestRefresh;
    onUnauthorized = options.onUnauthorized;
    $("edit-button").addEventListener("click", openEdit);
    $("edit-dialog").addEventListener("close", () => {
      if ($("edit-dialog").returnValue === "save") saveEdit();
      else $("edit-button").focus();
      $("edit-fields").replaceChildren();
    });
    $("hide-button").addEventListener("click", () => {
      if (detail && detail.hidden) setVisibility(`/v1/documents/${documentId}/show`, false);
      else askReason(`/v1/documents/${documentId}/hide`, t("hide.title"), $("hide-button"));
    });
    $("hide-dialog").addEventListener("close", () => {
      const dialog = $("hide-dialog");
      const opener = hideOpener;
      if (dialog.returnValue !== "hide" || !hidePath) {
        if (opener) opener.focus();
        return;
      }
      setVisibility(hidePath, true, $("hide-reason").value.trim());
    });
    const dialog = $("confirm-delete");
    $("reingest-button").addEventListener("click", () => act(async () => {
      const accepted = await Api.call("POST", `/v1/documents/${documentId}/reingest`);
      requestRefresh();
      return accepted;
    }, t("action.reingested")).catch(options.onUnauthorized));
    $("delete-button").addEventListener("click", () => {
      dialog.returnValue = "";
      dialog.showModal();
    });
    dialog.addEventListener("close", () => {
      if (dialog.returnValue !== "delete") {
        $("delete-button").focus();
        return;
      }
      const name = detail ? (detail.title || detail.external_id) : t("action.theDocument");
      act(async () => {
        await Api.call("DELETE", `/v1/documents/${documentId}`);
        Ui.setMessage($("flash"), t("action.deleted", { name }), "ok");
        navigate("#/documents");
      }, t("action.deleted", { name })).catch(options.onUnauthorized);
    });
  }

  return { init, show, refresh };
})();
