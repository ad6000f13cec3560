// The shell: sign-in, hash routing between the three views, and polling the visible view
// (every 2.5 s while something is moving through the stages, every 15 s otherwise).
"use strict";

(() => {
  const FAST_MS = 2500;
  const SLOW_MS = 15000;
  const $ = (id) => document.getElementById(id);
  const views = { upload: UploadView, documents: DocumentsView, document: DocumentView };
  let current = null; // {name, id}
  let timer = null;
  let generation = 0; // a refresh answered after the view changed is thrown away

  function route() {
    const hash = window.location.hash || "#/upload";
    const one = /^#\/documents\/([0-9a-f-]{36})$/i.exec(hash);
    if (one) return { name: "document", id: one[1].toLowerCase() };
    if (hash.startsWith("#/documents")) return { name: "documents" };
    return { name: "upload" };
  }

  function showOnly(sectionId) {
    for (const section of document.querySelectorAll(".view")) {
      section.hidden = section.id !== sectionId;
    }
  }

  function signedIn(on) {
    $("nav").hidden = !on;
    $("sign-out").hidden = !on;
  }

  function showSignIn(message, kind = "bad") {
    clearTimeout(timer);
    generation += 1;
    current = null;
    signedIn(false);
    showOnly("view-signin");
    document.title = `${I18n.t("title.signin")} \u2013 ${I18n.t("app.name")}`;
    Ui.setMessage($("signin-message"), message || "", message ? kind : "");
    $("api-key").value = "";
    $("api-key").focus();
  }

  function refused() {
    Api.forgetKey();
    showSignIn(I18n.t("signin.refusedAgain"));
  }

  // Whether work moves at all (`/readyz`, open to all): a banner when versions have waited
  // past PROCESSING_STALL_SECONDS, so an editor knows why "ontvangen" stays "ontvangen".
  let stalledSince = null;
  async function checkProcessing() {
    let ready = null;
    try {
      const response = await fetch(new URL("/readyz", window.location.origin));
      ready = await response.json();
    } catch (_) {
      return; // the views' own refresh reports an unreachable server
    }
    const work = ready && ready.processing;
    const banner = $("stall-banner");
    if (!work || !work.stalled) {
      banner.hidden = true;
      stalledSince = null;
      return;
    }
    stalledSince = Math.max(1, Math.round(work.oldest_waiting_seconds / 60));
    banner.textContent = I18n.t(work.workers === "none" ? "stall.noWorkers" : "stall.waiting",
      { minutes: stalledSince });
    banner.hidden = false;
  }

  function schedule(fast) {
    clearTimeout(timer);
    timer = setTimeout(poll, fast ? FAST_MS : SLOW_MS);
  }

  async function poll() {
    if (!current) return;
    checkProcessing();
    const mine = ++generation;
    const view = views[current.name];
    try {
      const fast = await view.refresh();
      if (mine === generation) schedule(fast);
    } catch (error) {
      if (mine !== generation) return;
      if (error.status === 401) {
        refused();
        return;
      }
      if (error.status === 404 && current.name === "document") {
        $("document-title").textContent = I18n.t("document.notFound");
        Ui.setMessage($("action-message"), error.message, "bad");
        return;
      }
      Ui.announce(error.message);
      schedule(false);
    }
  }

  function open() {
    if (!Api.getKey()) {
      showSignIn();
      return;
    }
    const next = route();
    const changed = !current || current.name !== next.name || current.id !== next.id;
    current = next;
    signedIn(true);
    showOnly(`view-${next.name}`);
    for (const link of document.querySelectorAll("[data-view-link]")) {
      const active = link.dataset.viewLink === next.name ||
        (next.name === "document" && link.dataset.viewLink === "documents");
      if (active) link.setAttribute("aria-current", "page");
      else link.removeAttribute("aria-current");
    }
    if (next.name !== "document") {
      document.title = `${I18n.t(`title.${next.name}`)} \u2013 ${I18n.t("app.name")}`;
    }
    if (changed && next.name !== "documents") Ui.setMessage($("flash"), "");
    views[next.name].show(next.id);
    if (changed) {
      const heading = document.querySelector(`#view-${next.name} h1`);
      heading.tabIndex = -1;
      heading.focus({ preventScroll: true });
      window.scrollTo(0, 0);
    }
    clearTimeout(timer);
    poll();
  }

  async function signIn(event) {
    event.preventDefault();
    const key = $("api-key").value.trim();
    if (!key) {
      Ui.setMessage($("signin-message"), I18n.t("signin.enterKey"), "bad");
      return;
    }
    try {
      await Api.call("GET", "/v1/documents", { params: { limit: 1 }, key });
    } catch (error) {
      Ui.setMessage($("signin-message"),
        error.status === 401 ? I18n.t("signin.refused") : error.message, "bad");
      $("api-key").select();
      return;
    }
    Api.setKey(key);
    Ui.setMessage($("signin-message"), "");
    open();
  }

  function navigate(hash) {
    if (window.location.hash === hash) open();
    else window.location.hash = hash;
  }

  document.addEventListener("DOMContentLoaded", () => {
    const requestRefresh = () => { clearTimeout(timer); poll(); };
    UploadView.init({ onUnauthorized: refused });
    DocumentsView.init({ requestRefresh });
    DocumentView.init({ navigate, requestRefresh, onUnauthorized: refused });
    $("signin-form").addEventListener("submit", signIn);
    $("sign-out").addEventListener("click", () => {
      Api.forgetKey();
      showSignIn(I18n.t("signin.signedOut"), "ok");
    });
    // Dutch by default; the switch is remembered in this browser (localStorage).
    $("lang-switch").addEventListener("click", () => {
      I18n.setLang(I18n.lang === "nl" ? "en" : "nl");
    });
    I18n.onChange((lang) => {
      $("lang-switch").lang = lang === "nl" ? "en" : "nl";
      if (current) {
        document.title = current.name === "document" ? document.title
          : `${I18n.t(`title.${current.name}`)} \u2013 ${I18n.t("app.name")}`;
        views[current.name].show(current.id);
        requestRefresh();
      } else if (!$("view-signin").hidden) {
        document.title = `${I18n.t("title.signin")} \u2013 ${I18n.t("app.name")}`;
        Ui.setMessage($("signin-message"), "");
      }
    });
    I18n.apply();
    $("lang-switch").lang = I18n.lang === "nl" ? "en" : "nl";
    document.addEventListener("visibilitychange", () => {
      if (!document.hidden && current) requestRefresh();
    });
    window.addEventListener("hashchange", open);
    open();
  });
})();
