// The storefront preview inside the theme editor. It speaks the spec §6.3
// messages and acknowledges each one; messages from any other origin than
// its own (the editor is served from the same origin) are ignored.

import { call } from "../store/api.js";

const page = document.getElementById("sf-page");
const storeID = location.pathname.split("/")[2];

function ack(msg, ok = true) {
  window.parent.postMessage({ type: "svc:preview:ack", id: msg.id, of: msg.type, ok }, location.origin);
}

async function setContext(msg) {
  const { themeSettings, page: pageName, document: doc } = msg.payload || {};
  const { ok, status, data } = await call("POST", `/stores/${storeID}/themes/preview/render`, {
    body: { document: doc || { settings: themeSettings, templates: {} }, page: pageName || "index", lang: document.documentElement.lang },
  });
  if (!ok) throw new Error("render failed: " + status);
  // The storefront's renderer answers the page's body and the theme's
  // style: the frame swaps both, keeping its own scripts.
  page.innerHTML = data.html;
  document.documentElement.dir = data.dir;
  document.getElementById("sf-vars").textContent = data.style;
  document.documentElement.dataset.theme = data.theme_id;
}

function scrollToSection(msg) {
  const el = document.querySelector(`[data-section-id="${CSS.escape(msg.payload.sectionId)}"]`);
  if (!el) throw new Error("no such section");
  document.querySelectorAll(".sf-highlight").forEach((e) => e.classList.remove("sf-highlight"));
  el.classList.add("sf-highlight");
  el.scrollIntoView({ block: "start" });
}

function selectBlock(msg) {
  const { sectionId, blockId } = msg.payload;
  const section = document.querySelector(`[data-section-id="${CSS.escape(sectionId)}"]`);
  const el = section && section.querySelector(`[data-block-id="${CSS.escape(blockId)}"]`);
  if (!el) throw new Error("no such block");
  document.querySelectorAll(".sf-selected").forEach((e) => e.classList.remove("sf-selected"));
  el.classList.add("sf-selected");
  el.scrollIntoView({ block: "center" });
}

function swapTheme(msg) {
  const { bundle_url: bundle, css_url: css } = msg.payload;
  const same = (u) => new URL(u, location.href).origin === location.origin;
  if (!same(bundle) || !same(css)) throw new Error("bundles must come from this origin");
  // The theme's stylesheet replaces the current one; the next
  // set-context renders the page with the new theme's templates.
  const link = document.querySelector('link[rel="stylesheet"]');
  link.href = css;
  const script = Object.assign(document.createElement("script"), { type: "module", src: bundle });
  document.head.append(script);
}

const handlers = {
  "svc:preview:set-context": setContext,
  "svc:preview:scroll-to-section": scrollToSection,
  "svc:preview:select-block": selectBlock,
  "svc:preview:swap-theme": swapTheme,
};

window.addEventListener("message", async (event) => {
  if (event.origin !== location.origin || event.source !== window.parent) return;
  const msg = event.data || {};
  const handler = handlers[msg.type];
  if (!handler) return;
  try {
    await handler(msg);
    ack(msg, true);
  } catch (err) {
    ack(msg, false);
  }
});

window.parent.postMessage({ type: "svc:preview:ready" }, location.origin);
