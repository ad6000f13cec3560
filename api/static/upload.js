// The Upload view: drop or choose files, optional details, one request per file with its own
// progress bar and its own answer (received, or why it was refused).
"use strict";

const UploadView = (() => {
  const { el, announce } = Ui;
  const limit = Number(document.querySelector('meta[name="max-upload-bytes"]').content) || 0;
  // {file, state: ready|uploading|done|refused, progress, say: () => message, documentId}
  const queue = [];
  const t = I18n.t;
  let busy = false;
  let counter = 0;
  let onUnauthorized = () => {};

  const $ = (id) => document.getElementById(id);

  function add(files) {
    for (const file of files) {
      const item = { key: ++counter, file, state: "ready", progress: 0, say: () => t("upload.ready") };
      if (limit && file.size > limit) {
        refuse(item, () => t("problem.413", { limit: Api.formatBytes(limit) }));
      } else if (file.size === 0) {
        refuse(item, () => t("problem.empty"));
      }
      queue.push(item);
    }
    render();
    const ready = queue.filter((i) => i.state === "ready").length;
    const refused = queue.filter((i) => i.state === "refused" && !i.announced);
    refused.forEach((i) => { i.announced = true; });
    announce(t("upload.readyCount", { count: ready }) +
      refused.map((i) => ` ${i.file.name}: ${i.say()}`).join(""));
  }

  function refuse(item, say) {
    item.state = "refused";
    item.say = say;
  }

  function render() {
    const list = $("queue");
    list.replaceChildren(...queue.map(row));
    $("queue-empty").hidden = queue.length > 0;
    const ready = queue.filter((i) => i.state === "ready").length;
    $("upload-button").disabled = busy || ready === 0;
    $("upload-button").textContent = ready > 1 ? t("upload.buttonMany", { count: ready })
      : t("upload.button");
    $("clear-button").disabled = busy || queue.length === 0;
  }

  function row(item, index) {
    const label = `${item.file.name}, ${Api.formatBytes(item.file.size)}`;
    const message = el("span", { class: "queue-message", "data-kind": item.state }, item.say());
    if (item.state === "done" && item.documentId) {
      message.append(" ", el("a", { href: `#/documents/${item.documentId}` }, t("upload.follow")));
    }
    return el(
      "li",
      { class: `queue-item state-${item.state}`, "data-key": item.key, "data-file": item.file.name },
      el("span", { class: "queue-name" }, item.file.name,
        el("small", {}, ` ${Api.formatBytes(item.file.size)}`)),
      el("progress", { max: 1, value: item.progress, "aria-label": t("upload.progressLabel", { name: label }) }),
      message,
      item.state === "ready" && !busy
        ? el("button", {
          type: "button", class: "link-button", "aria-label": t("upload.removeLabel", { name: item.file.name }),
          onclick: () => { queue.splice(index, 1); render(); },
        }, t("upload.remove"))
        : null,
    );
  }

  function fields(count) {
    const value = (id) => $(id).value.trim();
    return {
      title: count === 1 ? value("f-title") : "",
      folder: value("f-folder"),
      source_url: value("f-source-url"),
      language: value("f-language"),
      tags: value("f-tags"),
    };
  }

  async function send(event) {
    event.preventDefault();
    const ready = queue.filter((i) => i.state === "ready");
    if (!ready.length || busy) return;
    busy = true;
    const form = fields(ready.length);
    for (const item of ready) {
      item.state = "uploading";
      item.say = () => t("upload.uploading");
      render();
      try {
        const answer = await Api.upload(item.file, form, (share) => {
          item.progress = share;
          const bar = document.querySelector(`li[data-key="${item.key}"] progress`);
          if (bar) bar.value = share;
        });
        const accepted = answer.documents[0];
        item.state = "done";
        item.progress = 1;
        item.documentId = accepted.document_id;
        item.say = () => received(accepted);
        announce(`${t("upload.receivedAnnounce", { name: item.file.name })} ${received(accepted)}`);
      } catch (error) {
        refuse(item, () => (error.describe ? error.describe() : error.message));
        announce(`${item.file.name}: ${item.say()}`);
        if (error.status === 401) {
          busy = false;
          render();
          onUnauthorized();
          return;
        }
      }
    }
    busy = false;
    if (ready.some((i) => i.state === "done")) clearDetails();
    render();
  }

  // The details belong to the files just sent: cleared after an upload, so that labels or a
  // language are never carried silently onto the next, unrelated files (a wrong label or
  // language misleads the chatbot's filters; typing them again costs seconds). A note says so.
  const DETAILS = ["f-title", "f-folder", "f-source-url", "f-language", "f-tags"];
  function clearDetails() {
    const filled = DETAILS.some((id) => $(id).value.trim());
    for (const id of DETAILS) $(id).value = "";
    showCleared(filled);
  }

  function showCleared(on) {
    let note = $("details-cleared");
    if (!note) {
      note = el("p", { id: "details-cleared", class: "hint", role: "status" });
      $("f-tags").closest("fieldset").append(note);
    }
    note.hidden = !on;
    note.textContent = on ? t("upload.detailsCleared") : "";
  }

  // "Received as version 2. New version of “Knieoperatie”, uploaded by editors on 22 Nov 2026."
  function received(accepted) {
    // The same bytes as the indexed version: nothing new, and nothing is processed again.
    if (accepted.status === "unchanged") {
      const same = accepted.same_as_version
        ?? (accepted.new_version_of ? accepted.new_version_of.version : accepted.version - 1);
      return t("upload.unchanged", { version: same });
    }
    // The same bytes with another title or labels: only those change (a metadata version).
    if (accepted.kind === "metadata") {
      return t("upload.metadata", { version: accepted.version, same: accepted.same_as_version });
    }
    const words = t("upload.received", { version: accepted.version });
    const before = accepted.new_version_of;
    if (!before) return words;
    return `${words} ${t("upload.newVersion", {
      title: before.title || before.filename || accepted.external_id,
      who: before.uploaded_by || t("upload.unknown"),
      date: new Intl.DateTimeFormat(I18n.locale, { dateStyle: "medium", timeStyle: "short" })
        .format(new Date(before.uploaded_at)),
    })}`;
  }

  function texts() {
    const note = $("details-cleared");
    if (note && !note.hidden) note.textContent = t("upload.detailsCleared");
    $("drop-hint").textContent = t("upload.dropHint",
      { limit: limit ? Api.formatBytes(limit) : t("upload.theLimit") });
    render();
  }

  function init(options) {
    onUnauthorized = options.onUnauthorized;
    I18n.onChange(texts);
    const input = $("file-input");
    const zone = $("drop-zone");
    zone.addEventListener("click", () => input.click());
    input.addEventListener("change", () => { add(input.files); input.value = ""; });
    zone.addEventListener("dragover", (e) => { e.preventDefault(); zone.classList.add("over"); });
    zone.addEventListener("dragleave", () => zone.classList.remove("over"));
    zone.addEventListener("drop", (e) => {
      e.preventDefault();
      zone.classList.remove("over");
      add(e.dataTransfer.files);
    });
    $("upload-form").addEventListener("submit", send);
    for (const id of DETAILS) $(id).addEventListener("input", () => showCleared(false));
    $("clear-button").addEventListener("click", () => { queue.length = 0; render(); });
    texts();
  }

  return { init, show: () => {}, refresh: async () => false };
})();
