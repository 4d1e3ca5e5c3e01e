// The client's own texts in the page's language. The server chose it (`?lang=`, the
// `lang` cookie, Accept-Language: fibsd/web/i18n.py) and wrote it in <html lang>; the
// catalog is i18n/<lang>.json, shared with the server's pages. Elements carry their key:
// data-t="key" for their text, data-t-attr="attribute=key ..." for attributes.

import { fill } from "./say.js";

export const lang = document.documentElement.lang || "en";
let catalog = {};

// The text of `key` in the page's language (say.js `fill`).
export function t(key, values = {}) {
  return fill(catalog, key, values);
}

// Loads the catalog and translates the static page; shows the switch to the others.
export async function loadCatalog() {
  const reply = await fetch(`/play/i18n/${lang}.json`);
  catalog = await reply.json();
  for (const el of document.querySelectorAll("[data-t]")) el.textContent = t(el.dataset.t);
  for (const el of document.querySelectorAll("[data-t-attr]")) {
    for (const pair of el.dataset.tAttr.split(" ")) {
      const [attribute, key] = pair.split("=");
      el.setAttribute(attribute, t(key));
    }
  }
  for (const link of document.querySelectorAll("a.lang")) if (link.hreflang === lang) link.remove();
  document.title = t("play.title");
}
