// Talking to the API: the key (sessionStorage only), JSON calls, uploads with progress, and
// problem+json refusals turned into sentences an editor can act on.
"use strict";

const Api = (() => {
  const KEY = "ingest.apiKey";

  class Refused extends Error {
    constructor(status, problem) {
      super(describeProblem(status, problem));
      this.status = status;
      this.problem = problem || {};
    }

    // The sentence in the language chosen now (the page may have switched since).
    describe() {
      return describeProblem(this.status, this.problem);
    }
  }

  function getKey() {
    return sessionStorage.getItem(KEY);
  }

  function setKey(key) {
    sessionStorage.setItem(KEY, key);
  }

  function forgetKey() {
    sessionStorage.removeItem(KEY);
  }

  function formatBytes(bytes) {
    if (bytes >= 1024 * 1024) {
      const mb = bytes / (1024 * 1024);
      return `${Number.isInteger(mb) ? mb : mb.toFixed(1)} MB`;
    }
    if (bytes >= 1024) {
      const kb = bytes / 1024;
      return `${Number.isInteger(kb) ? kb : kb.toFixed(1)} KB`;
    }
    return `${bytes} bytes`;
  }

  // One sentence per refusal, built from the problem document (RFC 9457), in the page's
  // language (error codes and the server's own details stay as they are).
  function describeProblem(status, problem) {
    const p = problem || {};
    const t = I18n.t;
    switch (status) {
      case 401:
        return t("problem.401");
      case 403:
        if (p.required_scope) return t("problem.403", { scope: p.required_scope });
        return I18n.lang === "en" ? `${p.title || t("problem.error")} (403)${p.detail ? `: ${p.detail}` : ""}`
          : t("problem.403NoScope");
      case 413:
        return p.limit_bytes ? t("problem.413", { limit: formatBytes(p.limit_bytes) })
          : t("problem.413NoLimit");
      case 415:
        return t("problem.415");
      case 404:
        return t("problem.404");
      case 422: {
        if (p.file !== undefined && /is empty/.test(p.detail || "")) return t("problem.empty");
        // A refusal with a code the page explains (front_matter_refused): in Dutch on the
        // Dutch page; the server's own (English) words name the exact cause on the English one.
        if (p.code && I18n.lang !== "en" && I18n.has(`errors.${p.code}`)) return t(`errors.${p.code}`);
        // The server's own words are English: on the Dutch page, the code is what support needs.
        if (I18n.lang !== "en") {
          return t("problem.422", { detail: t("problem.422Default") })
            + (p.code ? ` (${t("error.code", { code: p.code })})` : ".");
        }
        const first = Array.isArray(p.errors) && p.errors.length ? p.errors[0] : null;
        const where = first ? ` (${first.loc.filter((x) => x !== "body").join(" ")}: ${first.msg})` : "";
        return t("problem.422", { detail: (p.detail || p.title || t("problem.422Default")) + where });
      }
      case 503:
        // The search index out of reach (index_unavailable, qdrant_locked): nothing is lost.
        if (p.code && I18n.has(`problem.${p.code}`)) return t(`problem.${p.code}`);
        return t("problem.503");
      default:
        if (status === 0) return t("problem.0");
        if (I18n.lang !== "en") return t("problem.other", { status });
        return `${p.title || t("problem.error")} (${status})${p.detail ? `: ${p.detail}` : ""}`;
    }
  }

  function parse(text) {
    try {
      return text ? JSON.parse(text) : null;
    } catch (_) {
      return null;
    }
  }

  async function call(method, path, { params, key } = {}) {
    const url = new URL(path, window.location.origin);
    for (const [name, value] of Object.entries(params || {})) {
      if (value !== undefined && value !== null && value !== "") url.searchParams.set(name, value);
    }
    let response;
    try {
      response = await fetch(url, {
        method,
        headers: { Authorization: `Bearer ${key || getKey()}`, Accept: "application/json" },
      });
    } catch (_) {
      throw new Refused(0, null);
    }
    const body = parse(await response.text());
    if (!response.ok) throw new Refused(response.status, body);
    return body;
  }

  // A JSON body (the bulk actions); the answer's JSON, or Refused.
  async function send(method, path, body) {
    let response;
    try {
      response = await fetch(new URL(path, window.location.origin), {
        method,
        headers: {
          Authorization: `Bearer ${getKey()}`,
          Accept: "application/json",
          "Content-Type": "application/json",
        },
        body: JSON.stringify(body),
      });
    } catch (_) {
      throw new Refused(0, null);
    }
    const answer = parse(await response.text());
    if (!response.ok) throw new Refused(response.status, answer);
    return answer;
  }

  // The key travels in a header, so a plain link cannot download: fetch, then save the blob.
  async function download(path, fallbackName) {
    let response;
    try {
      response = await fetch(new URL(path, window.location.origin), {
        headers: { Authorization: `Bearer ${getKey()}` },
      });
    } catch (_) {
      throw new Refused(0, null);
    }
    if (!response.ok) throw new Refused(response.status, parse(await response.text()));
    const header = response.headers.get("Content-Disposition") || "";
    const named = /filename\*=UTF-8''([^;]+)/.exec(header);
    const link = document.createElement("a");
    link.href = URL.createObjectURL(await response.blob());
    link.download = named ? decodeURIComponent(named[1]) : fallbackName;
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 10000);
  }

  // One file, one request, so that each file has its own progress and its own answer.
  function upload(file, fields, onProgress) {
    return new Promise((resolve, reject) => {
      const form = new FormData();
      form.append("file", file, file.name);
      for (const [name, value] of Object.entries(fields)) {
        if (value) form.append(name, value);
      }
      const xhr = new XMLHttpRequest();
      xhr.open("POST", "/v1/documents");
      xhr.setRequestHeader("Authorization", `Bearer ${getKey()}`);
      xhr.setRequestHeader("Accept", "application/json");
      xhr.upload.onprogress = (event) => {
        if (event.lengthComputable) onProgress(event.loaded / event.total);
      };
      xhr.onload = () => {
        const body = parse(xhr.responseText);
        if (xhr.status === 202) resolve(body);
        else reject(new Refused(xhr.status, body));
      };
      xhr.onerror = () => reject(new Refused(0, null));
      xhr.send(form);
    });
  }

  return {
    Refused, getKey, setKey, forgetKey, formatBytes, describeProblem, call, send, upload, download,
  };
})();
