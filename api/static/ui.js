// Small helpers shared by the views: building elements, status badges, times, announcements.
"use strict";

const Ui = (() => {
  const IN_FLIGHT = new Set(["received", "converting", "chunking", "embedding", "upserting"]);

  // Stage names in plain words, for the history and the status filter.
  const STATUS_WORDS = {
    received: "Received, waiting to be processed",
    converting: "Converting to text",
    chunking: "Cutting into chunks",
    embedding: "Computing embeddings",
    upserting: "Writing to the search index",
    indexed: "Indexed: the chatbot can use it",
    failed: "Failed",
    unchanged: "Unchanged: same content as the indexed version",
    superseded: "Superseded by a newer version",
    deleted: "Deleted",
  };
  const STATUSES = Object.keys(STATUS_WORDS);

  // Text + shape (a CSS mark per kind), never colour alone.
  function badgeKind(status) {
    if (IN_FLIGHT.has(status)) return "busy";
    if (status === "indexed") return "ok";
    if (status === "failed") return "bad";
    return "quiet";
  }

  // el("a", {href: "#"}, "text", child, ...): attributes set as properties unless data-/aria-.
  function el(tag, attributes, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (name.startsWith("data-") || name.startsWith("aria-") || name === "role") {
        node.setAttribute(name, value);
      } else if (name === "class") {
        node.className = value;
      } else {
        node[name] = value;
      }
    }
    for (const child of children.flat()) {
      if (child === undefined || child === null || child === false) continue;
      node.append(child instanceof Node ? child : String(child));
    }
    return node;
  }

  // An href only for http(s) addresses: a javascript: or data: URL stays text, never a link.
  function safeHref(url) {
    try {
      const parsed = new URL(url);
      return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed.href : null;
    } catch {
      return null;
    }
  }

  function badge(status) {
    return el("span", { class: `badge badge-${badgeKind(status)}`, "data-status": status }, status);
  }

  const fullTime = new Intl.DateTimeFormat("en-GB", {
    day: "numeric", month: "short", year: "numeric",
    hour: "2-digit", minute: "2-digit", second: "2-digit",
  });
  const relative = new Intl.RelativeTimeFormat("en", { numeric: "auto" });

  function ago(iso) {
    const seconds = Math.round((Date.parse(iso) - Date.now()) / 1000);
    const steps = [[60, "second"], [60, "minute"], [24, "hour"], [7, "day"], [4.35, "week"],
      [12, "month"], [Infinity, "year"]];
    let amount = seconds;
    for (const [size, unit] of steps) {
      if (Math.abs(amount) < size) {
        return unit === "second" && Math.abs(amount) < 10 ? "just now"
          : relative.format(Math.round(amount), unit);
      }
      amount /= size;
    }
    return "";
  }

  function time(iso, { withAgo = false } = {}) {
    if (!iso) return el("span", { class: "muted" }, "\u2014");
    const node = el("time", { dateTime: iso }, fullTime.format(new Date(iso)));
    if (!withAgo) return node;
    return el("span", { class: "when" }, el("span", {}, ago(iso)), el("small", {}, node));
  }

  function duration(fromIso, toIso) {
    const ms = Date.parse(toIso) - Date.parse(fromIso);
    if (!(ms >= 0)) return "";
    if (ms < 1000) return `${ms} ms`;
    if (ms < 60000) return `${(ms / 1000).toFixed(1)} s`;
    return `${Math.floor(ms / 60000)} min ${Math.round((ms % 60000) / 1000)} s`;
  }

  function number(n) {
    return new Intl.NumberFormat("en-GB").format(n || 0);
  }

  let announceTimer = null;
  function announce(text) {
    const region = document.getElementById("announcer");
    region.textContent = "";
    clearTimeout(announceTimer);
    // A fresh text node after a tick, so that the same words are read out again.
    announceTimer = setTimeout(() => { region.textContent = text; }, 50);
  }

  function setMessage(node, text, kind) {
    node.textContent = text || "";
    node.dataset.kind = kind || "";
  }

  return {
    IN_FLIGHT, STATUS_WORDS, STATUSES, el, badge, time, ago, duration, number, announce,
    setMessage, safeHref,
  };
})();
