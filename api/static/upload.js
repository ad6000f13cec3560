// The Upload view: drop or choose files, optional details, one request per file with its own
// progress bar and its own answer (received, or why it was refused).
"use strict";

const UploadView = (() => {
  const { el, announce } = Ui;
  const limit = Number(document.querySelector('meta[name="max-upload-bytes"]').content) || 0;
  const queue = []; // {file, state: ready|uploading|done|refused, progress, message, documentId}
  let busy = false;
  let counter = 0;
  let onUnauthorized = () => {};

  const $ = (id) => document.getElementById(id);

  function add(files) {
    for (const file of files) {
      const item = { key: ++counter, file, state: "ready", progress: 0, message: "Ready to upload" };
      if (limit && file.size > limit) {
        refuse(item, `Refused: too large (max ${Api.formatBytes(limit)}).`);
      } else if (file.size === 0) {
        refuse(item, "Refused: the file is empty.");
      }
      queue.push(item);
    }
    render();
    const ready = queue.filter((i) => i.state === "ready").length;
    const refused = queue.filter((i) => i.state === "refused" && !i.announced);
    refused.forEach((i) => { i.announced = true; });
    announce(`${ready} file(s) ready to upload.` +
      refused.map((i) => ` ${i.file.name}: ${i.message}`).join(""));
  }

  function refuse(item, message) {
    item.state = "refused";
    item.message = message;
  }

  function render() {
    const list = $("queue");
    list.replaceChildren(...queue.map(row));
    $("queue-empty").hidden = queue.length > 0;
    const ready = queue.filter((i) => i.state === "ready").length;
    $("upload-button").disabled = busy || ready === 0;
    $("upload-button").textContent = ready > 1 ? `Upload ${ready} files` : "Upload";
    $("clear-button").disabled = busy || queue.length === 0;
  }

  function row(item, index) {
    const label = `${item.file.name}, ${Api.formatBytes(item.file.size)}`;
    const message = el("span", { class: "queue-message", "data-kind": item.state }, item.message);
    if (item.state === "done" && item.documentId) {
      message.append(" ", el("a", { href: `#/documents/${item.documentId}` }, "Follow it"));
    }
    return el(
      "li",
      { class: `queue-item state-${item.state}`, "data-key": item.key, "data-file": item.file.name },
      el("span", { class: "queue-name" }, item.file.name,
        el("small", {}, ` ${Api.formatBytes(item.file.size)}`)),
      el("progress", { max: 1, value: item.progress, "aria-label": `Upload of ${label}` }),
      message,
      item.state === "ready" && !busy
        ? el("button", {
          type: "button", class: "link-button", "aria-label": `Remove ${item.file.name}`,
          onclick: () => { queue.splice(index, 1); render(); },
        }, "Remove")
        : null,
    );
  }

  function fields(count) {
    const value = (id) => $(id).value.trim();
    return {
      title: count === 1 ? value("f-title") : "",
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
      item.message = "Uploading…";
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
        item.message = `Received as version ${accepted.version}.`;
        announce(`${item.file.name}: received.`);
      } catch (error) {
        refuse(item, error.message);
        announce(`${item.file.name}: ${error.message}`);
        if (error.status === 401) {
          busy = false;
          render();
          onUnauthorized();
          return;
        }
      }
    }
    busy = false;
    $("f-title").value = ""; // a title belongs to one file; the other details often repeat
    render();
  }

  function init(options) {
    onUnauthorized = options.onUnauthorized;
    $("limit-text").textContent = limit ? Api.formatBytes(limit) : "the upload limit";
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
    $("clear-button").addEventListener("click", () => { queue.length = 0; render(); });
    render();
  }

  return { init, show: () => {}, refresh: async () => false };
})();
