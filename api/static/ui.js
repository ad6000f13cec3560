// Small helpers shared by the views: building elements, status badges, times, announcements.
"use strict";

const Ui = (() => {
  const IN_FLIGHT = new Set(["received", "converting", "chunking", "embedding", "upserting"]);

  const STATUSES = ["received", "converting", "chunking", "embedding", "upserting", "indexed",
    "failed", "unchanged", "superseded", "deleted"];

  // Stage names in plain words (history, status filter) and as a badge, in the page's language.
  const statusWords = (status) => (I18n.has(`status.${status}`) ? I18n.t(`status.${status}`) : status);
  const statusBadge = (status) => (I18n.has(`badge.${status}`) ? I18n.t(`badge.${status}`) : status);

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
    return el("span", { class: `badge badge-${badgeKind(status)}`, "data-status": status },
      statusBadge(status));
  }

  const fullTime = () => new Intl.DateTimeFormat(I18n.locale, {
    day: "numeric", month: "short", year: "numeric",
    hour: "2-digit", minute: "2-digit", second: "2-digit",
  });
  const relative = () => new Intl.RelativeTimeFormat(I18n.lang, { numeric: "auto" });

  function ago(iso) {
    const seconds = Math.round((Date.parse(iso) - Date.now()) / 1000);
    const steps = [[60, "second"], [60, "minute"], [24, "hour"], [7, "day"], [4.35, "week"],
      [12, "month"], [Infinity, "year"]];
    let amount = seconds;
    for (const [size, unit] of steps) {
      if (Math.abs(amount) < size) {
        return unit === "second" && Math.abs(amount) < 10 ? relative().format(0, "second")
          : relative().format(Math.round(amount), unit);
      }
      amount /= size;
    }
    return "";
  }

  function time(iso, { withAgo = false } = {}) {
    if (!iso) return el("span", { class: "muted" }, "\u2014");
    const node = el("time", { dateTime: iso }, fullTime().format(new Date(iso)));
    if (!withAgo) return node;
    return el("span", { class: "when" }, el("span", {}, ago(iso)), el("small", {}, node));
  }

  function duration(fromIso, toIso) {
    const ms = Date.parse(toIso) - Date.parse(fromIso);
    if (!(ms >= 0)) return "";
    if (ms < 1000) return `${ms} ms`;
    // "1,2 s" on the Dutch page, "1.2 s" on the English one.
    const tenths = new Intl.NumberFormat(I18n.locale, { minimumFractionDigits: 1, maximumFractionDigits: 1 });
    if (ms < 60000) return `${tenths.format(ms / 1000)} s`;
    return `${Math.floor(ms / 60000)} min ${Math.round((ms % 60000) / 1000)} s`;
  }

  function number(n) {
    return new Intl.NumberFormat(I18n.locale).format(n || 0);
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
    IN_FLIGHT, STATUSES, statusWords, el, badge, time, ago, duration, number, announce,
    setMessage, safeHref,
  };
})();
