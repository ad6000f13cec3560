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

  // One sentence per refusal, built from the problem document (RFC 9457).
  function describeProblem(status, problem) {
    const p = problem || {};
    switch (status) {
      case 401:
        return "This key was refused. Sign in again with a valid API key.";
      case 413: {
        const limit = p.limit_bytes ? ` (max ${formatBytes(p.limit_bytes)})` : "";
        return `Refused: too large${limit}.`;
      }
      case 415:
        return "Refused: not a Markdown, text or PDF file (judged by its content, not its name).";
      case 404:
        return "This document does not exist (any more).";
      case 422: {
        const first = Array.isArray(p.errors) && p.errors.length ? p.errors[0] : null;
        const where = first ? ` (${first.loc.filter((x) => x !== "body").join(" ")}: ${first.msg})` : "";
        return `Refused: ${p.detail || p.title || "the request is not valid"}${where}`;
      }
      case 503:
        return "The service is unavailable for a moment. Nothing was stored; try again shortly.";
      default:
        if (status === 0) return "No answer from the server: check your connection and try again.";
        return `${p.title || "Error"} (${status})${p.detail ? `: ${p.detail}` : ""}`;
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

  return { Refused, getKey, setKey, forgetKey, formatBytes, describeProblem, call, upload };
})();
