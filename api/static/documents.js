// The Documents view: a table that follows the documents through the stages (the app polls
// `refresh()`), with filters by status and source, a title search and pages.
"use strict";

const DocumentsView = (() => {
  const { el, badge, time, number } = Ui;
  const PAGE = 50;
  const state = { q: "", status: "", source: "", offset: 0, total: 0 };
  // The bulk bar's selection: ids picked by hand, or every document of the current filter.
  const selected = new Set();
  let allOfFilter = false;
  let shownIds = [];
  let requestRefresh = () => {};

  const $ = (id) => document.getElementById(id);

  function titleOf(doc) {
    return doc.title || doc.external_id;
  }

  function checkbox(doc) {
    const box = el("input", { type: "checkbox", "aria-label": I18n.t("bulk.select", { title: titleOf(doc) }) });
    box.checked = allOfFilter || selected.has(doc.id);
    box.addEventListener("change", () => {
      if (box.checked) selected.add(doc.id);
      else { selected.delete(doc.id); allOfFilter = false; }
      renderBulk();
    });
    return el("td", { class: "select" }, box);
  }

  function cells(doc) {
    return [
      checkbox(doc),
      el("td", {},
        el("a", { href: `#/documents/${doc.id}`, class: "doc-link" }, titleOf(doc)),
        doc.title && doc.title !== doc.external_id
          ? el("small", { class: "block muted" }, doc.external_id) : null),
      el("td", {}, I18n.source(doc.source)),
      el("td", {}, badge(doc.status), doc.hidden ? [" ", badge("hidden")] : null),
      el("td", {}, time(doc.updated_at, { withAgo: true })),
      el("td", { class: "num" }, number(doc.chunk_count)),
      el("td", { class: "num" }, number(doc.token_count)),
    ];
  }

  // Rows are updated in place (keyed by id), so a focused link survives a poll.
  function render(items) {
    const body = $("documents-table").querySelector("tbody");
    const existing = new Map([...body.rows].map((tr) => [tr.dataset.id, tr]));
    const rows = items.map((doc) => {
      const signature = JSON.stringify([I18n.lang, doc.title, doc.external_id, doc.source,
        doc.status, doc.updated_at, doc.chunk_count, doc.token_count,
        allOfFilter || selected.has(doc.id)]);
      let tr = existing.get(doc.id);
      if (!tr) tr = el("tr", { "data-id": doc.id });
      if (tr.dataset.signature !== signature) {
        tr.replaceChildren(...cells(doc));
        tr.dataset.signature = signature;
        tr.dataset.status = doc.status;
      } else {
        // Relative times ("2 minutes ago") still move on.
        tr.cells[4].replaceChildren(time(doc.updated_at, { withAgo: true }));
      }
      existing.delete(doc.id);
      return tr;
    });
    existing.forEach((tr) => tr.remove());
    rows.forEach((tr, index) => {
      if (body.rows[index] !== tr) body.insertBefore(tr, body.rows[index] || null);
    });
    if (!items.length) {
      body.replaceChildren(el("tr", { class: "empty" },
        el("td", { colSpan: 7 }, I18n.t(state.q || state.status || state.source
          ? "documents.noMatch" : "documents.none"))));
    }
  }

  function summarise(items) {
    const busy = items.filter((d) => Ui.IN_FLIGHT.has(d.status)).length;
    const failed = items.filter((d) => d.status === "failed").length;
    const t = I18n.t;
    const parts = [state.total === 1 ? t("documents.countOne")
      : t("documents.count", { count: state.total })];
    if (busy) parts.push(t("documents.inProgress", { count: busy }));
    if (failed) parts.push(t("documents.failed", { count: failed }));
    $("documents-summary").textContent = parts.join(", ") + ".";
    const first = state.total ? state.offset + 1 : 0;
    const last = Math.min(state.offset + PAGE, state.total);
    $("page-text").textContent = t("documents.range", { first, last, total: state.total });
    $("prev-page").disabled = state.offset === 0;
    $("next-page").disabled = state.offset + PAGE >= state.total;
    return busy > 0;
  }

  async function loadSources() {
    const select = $("source-filter");
    const answer = await Api.call("GET", "/v1/documents/sources");
    const signature = JSON.stringify([I18n.lang, answer.items]);
    if (select.dataset.signature === signature) return; // an open list is left alone
    select.dataset.signature = signature;
    const chosen = select.value;
    select.replaceChildren(
      el("option", { value: "" }, I18n.t("documents.allSources")),
      ...answer.items.map((s) => el("option", { value: s.source },
        `${I18n.source(s.source)} (${s.documents})`)),
    );
    if (chosen && !answer.items.some((s) => s.source === chosen)) {
      select.append(el("option", { value: chosen }, I18n.source(chosen)));
    }
    select.value = chosen;
  }

  // Returns true while anything shown is still moving through the stages (poll faster).
  async function refresh() {
    const [answer] = await Promise.all([
      Api.call("GET", "/v1/documents", {
        params: { q: state.q, status: state.status, source: state.source,
          offset: state.offset, limit: PAGE },
      }),
      loadSources(),
    ]);
    state.total = answer.total;
    if (!answer.items.length && state.offset > 0 && state.total > 0) {
      state.offset = Math.max(0, Math.floor((state.total - 1) / PAGE) * PAGE);
      return refresh();
    }
    shownIds = answer.items.map((d) => d.id);
    render(answer.items);
    renderBulk();
    return summarise(answer.items);
  }

  function count() {
    return allOfFilter ? state.total : selected.size;
  }

  function renderBulk() {
    const t = I18n.t;
    const n = count();
    $("bulk-count").textContent = n ? t("bulk.count", { count: n }) : "";
    $("bulk-reingest").disabled = $("bulk-delete").disabled = n === 0;
    $("bulk-reingest").textContent = n ? t("bulk.reingestCount", { count: n }) : t("bulk.reingest");
    $("bulk-delete").textContent = n ? t("bulk.deleteCount", { count: n }) : t("bulk.delete");
    $("bulk-clear").hidden = n === 0;
    const pageChosen = shownIds.length > 0 && shownIds.every((id) => allOfFilter || selected.has(id));
    $("select-page").checked = pageChosen;
    const more = pageChosen && !allOfFilter && state.total > shownIds.length;
    $("bulk-all").hidden = !more;
    if (more) $("bulk-all").textContent = t("bulk.selectAll", { count: state.total });
  }

  function clearSelection() {
    selected.clear();
    allOfFilter = false;
    renderBulk();
    requestRefresh();
  }

  async function runBulk(action) {
    const body = allOfFilter
      ? { action, filter: { status: state.status || null, source: state.source || null, q: state.q || null } }
      : { action, ids: [...selected] };
    const node = $("flash");
    try {
      const answer = await Api.send("POST", "/v1/documents/bulk", body);
      const message = I18n.t(action === "delete" ? "bulk.deleted" : "bulk.reingested", { count: answer.done });
      Ui.setMessage(node, message, "ok");
      Ui.announce(message);
      clearSelection();
    } catch (error) {
      Ui.setMessage(node, error.message, "bad");
      Ui.announce(error.message);
    }
  }

  function init(options) {
    requestRefresh = options.requestRefresh;
    $("select-page").addEventListener("change", (e) => {
      if (e.target.checked) shownIds.forEach((id) => selected.add(id));
      else { shownIds.forEach((id) => selected.delete(id)); allOfFilter = false; }
      renderBulk();
      requestRefresh();
    });
    $("bulk-all").addEventListener("click", () => { allOfFilter = true; renderBulk(); requestRefresh(); });
    $("bulk-clear").addEventListener("click", clearSelection);
    $("bulk-reingest").addEventListener("click", () => runBulk("reingest"));
    const dialog = $("confirm-bulk");
    $("bulk-delete").addEventListener("click", () => {
      $("confirm-bulk-title").textContent = I18n.t("bulk.confirmTitle", { count: count() });
      dialog.returnValue = "";
      dialog.showModal();
    });
    dialog.addEventListener("close", () => {
      if (dialog.returnValue === "delete") runBulk("delete");
      else $("bulk-delete").focus();
    });
    $("export-csv").addEventListener("click", async () => {
      const params = new URLSearchParams();
      for (const name of ["status", "source", "q"]) if (state[name]) params.set(name, state[name]);
      try {
        await Api.download(`/v1/documents/export.csv?${params}`, "documenten.csv");
      } catch (error) {
        Ui.setMessage($("flash"), error.message, "bad");
      }
    });
    const select = $("status-filter");
    for (const status of Ui.STATUSES) {
      select.append(el("option", { value: status, "data-i18n": `badge.${status}` }, status));
    }
    I18n.apply(select);
    let typing = null;
    $("q").addEventListener("input", () => {
      clearTimeout(typing);
      typing = setTimeout(() => { state.q = $("q").value.trim(); state.offset = 0; requestRefresh(); }, 300);
    });
    $("filters").addEventListener("submit", (e) => {
      e.preventDefault();
      state.q = $("q").value.trim();
      state.offset = 0;
      requestRefresh();
    });
    $("status-filter").addEventListener("change", (e) => {
      state.status = e.target.value; state.offset = 0; requestRefresh();
    });
    $("source-filter").addEventListener("change", (e) => {
      state.source = e.target.value; state.offset = 0; requestRefresh();
    });
    $("prev-page").addEventListener("click", () => {
      state.offset = Math.max(0, state.offset - PAGE); requestRefresh();
    });
    $("next-page").addEventListener("click", () => {
      state.offset += PAGE; requestRefresh();
    });
  }

  return { init, show: () => {}, refresh };
})();
