// The theme editor's searchable pickers (spec §2.9, decisions §21/§22):
// one ARIA combobox per picker setting that searches the store's own API
// as the merchant types (250 ms debounce, a stale search aborted), shows
// the chosen content by its title in the page's language, and hands a
// choice to the editor's setValue so that autosave and undo keep working.
// What each picker stores is what the server checks (storage/theme
// values.go): product, collection and variant ids, lists of them, page,
// blog and menu handles, and media ids (an old URL is shown until it is
// replaced).

import { call, lang, storeAPI, words } from "../store/api.js";

const SEARCH_MS = 250;
const PAGE = 20;
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

// titleOf is a bilingual title in the page's language, else the other.
const titleOf = (t) => (t ? (lang === "ar" ? t.ar || t.en : t.en || t.ar) || t.text || "" : "");

const optionsText = (v) => Object.values(v.options || {}).filter(Boolean).join(" / ");

// labels are what a value looked like when last seen (in a search or a
// lookup), so a choice re-rendered after setValue shows at once.
const labels = new Map();
const remember = (kind, item) => {
  labels.set(`${kind}:${item.value}`, item);
  return item;
};

// kinds: how each kind of content is searched, shown and looked up. search
// answers items {value, label, detail?, thumb?, expand?}; find answers one
// item for a stored value or null when the store has no such thing.
const kinds = {
  product: {
    search: async (q, signal) => (await list(`/products?limit=${PAGE}&search=${enc(q)}`, signal)).map(productItem),
    find: async (id) => productItem(await one(`/products/${id}`)),
  },
  collection: {
    search: async (q, signal) => (await list(`/collections?limit=${PAGE}&search=${enc(q)}`, signal)).map(collectionItem),
    find: async (id) => collectionItem(await one(`/collections/${id}`)),
  },
  page: handleKind("/pages"),
  blog: handleKind("/blogs"),
  menu: handleKind("/menus"),
  image: {
    search: async (q, signal) => (await list(`/media?kind=image&limit=${PAGE}&q=${enc(q)}`, signal)).map(mediaItem),
    find: async (id) => mediaItem(await one(`/media/${id}`)),
  },
  variant: {
    // A variant is found through its product: the products match the
    // search, and choosing one lists its variants.
    search: async (q, signal) => (await list(`/products?limit=${PAGE}&search=${enc(q)}`, signal)).map((p) => ({ ...productItem(p), expand: true })),
    variants: async (product, signal) => {
      const r = await call("GET", storeAPI(`/products/${product.value}/variants`), { signal });
      if (!r.ok) throw r;
      return (r.answer || []).map((v) => variantItem(product.label, v));
    },
    find: async (id, context) => {
      // Only a product's variants can be listed: look in the product the
      // same section chose, if any.
      if (!context.productID) return null;
      const product = await kinds.product.find(context.productID);
      if (!product) return null;
      return (await kinds.variant.variants(product)).find((v) => v.value === id) || null;
    },
  },
};

// pickerKind is the kind of content a setting type picks, "" for others.
export function pickerKind(type) {
  return {
    product: "product", product_list: "product", collection: "collection", collection_list: "collection",
    variant_picker: "variant", page_picker: "page", blog_picker: "blog", link_list_picker: "menu", image_picker: "image",
  }[type] || "";
}

const enc = encodeURIComponent;

async function list(path, signal) {
  const r = await call("GET", storeAPI(path), { signal });
  if (!r.ok) throw r;
  return r.data?.items || [];
}

async function one(path) {
  const r = await call("GET", storeAPI(path));
  if (r.status === 404) return null;
  if (!r.ok) throw r;
  return r.data;
}

function handleKind(path) {
  const item = (x) => ({ value: x.handle, label: titleOf(x.title) || x.handle, detail: x.handle });
  return {
    search: async (q, signal) => (await list(`${path}?limit=${PAGE}&search=${enc(q)}`, signal)).map(item),
    // A handle is looked up by searching for it and keeping the exact match.
    find: async (h) => {
      const found = (await list(`${path}?limit=50&search=${enc(h)}`)).find((x) => x.handle === h);
      return found ? item(found) : null;
    },
  };
}

const productItem = (p) => p && { value: p.id, label: p.name, detail: p.sku || "" };
const collectionItem = (c) => c && { value: c.id, label: titleOf(c.title) || c.handle, detail: c.handle };
// A thumbnail is read from this page's origin (the binary serves /media/
// here too): the page's CSP loads images from itself only, and the API's
// base URL may be another host than the merchant pages'.
const sameOrigin = (url) => (url ? new URL(url, location.href).pathname : "");
const mediaItem = (m) =>
  m && { value: m.id, label: m.alt ? titleOf(m.alt) || m.filename : m.filename, detail: m.filename, thumb: sameOrigin(m.urls?.thumbnail) };
const variantItem = (productName, v) => ({
  value: v.id,
  label: `${productName} — ${optionsText(v) || v.sku || words.picker_default_variant}`,
  detail: v.sku || "",
});

let nextID = 1;

// picker builds the picker of setting def holding value. setValue stores a
// new value (null clears); context.productID is the product the same
// section chose (a variant picker lists its variants first).
export function picker(def, value, setValue, context = {}) {
  const kind = pickerKind(def.type);
  const source = kinds[kind];
  const multi = def.type.endsWith("_list");
  const limit = multi ? Math.min(def.limit > 0 ? def.limit : 50, 50) : 1;
  const chosen = multi ? (Array.isArray(value) ? value : []) : value ? [value] : [];
  const id = `picker-${nextID++}`;
  const el = (tag, attrs = {}) => Object.assign(document.createElement(tag), attrs);

  const root = el("div", { className: "picker" });
  root.dataset.kind = kind;

  // What is chosen, each with its title and a way to take it out.
  const current = el("ul", { className: "picker-chosen" });
  for (const v of chosen) current.append(chosenRow(v));
  if (!chosen.length) current.append(el("li", { className: "picker-empty", textContent: words.picker_nothing }));

  function chosenRow(v) {
    const li = el("li", { className: "picker-choice" });
    li.dataset.value = v;
    const thumb = el("span", { className: "picker-thumb" });
    thumb.setAttribute("aria-hidden", "true");
    const label = el("span", { className: "picker-label", textContent: "…", dir: "auto" });
    const note = el("span", { className: "picker-note" });
    const text = el("span", { className: "picker-text" });
    text.append(label, note);
    const remove = el("button", { type: "button", className: "picker-remove", textContent: "✕" });
    remove.addEventListener("click", () => {
      const rest = chosen.filter((x) => x !== v);
      setValue(multi && rest.length ? rest : null);
      focusInput(def.id);
    });
    li.append(thumb, text, remove);
    const show = (item) => {
      label.textContent = item.label;
      if (item.detail && item.detail !== item.label) note.textContent = item.detail;
      if (item.thumb) thumb.append(el("img", { src: item.thumb, alt: "" }));
      remove.title = `${multi ? words.picker_remove : words.picker_clear}: ${item.label}`;
      remove.setAttribute("aria-label", remove.title);
    };
    remove.title = multi ? words.picker_remove : words.picker_clear;
    remove.setAttribute("aria-label", remove.title);
    if (kind === "image" && typeof v === "string" && !uuid.test(v)) {
      // An image named by URL before the media library: shown as text (the
      // page loads images from this site only) until it is replaced.
      li.classList.add("picker-legacy");
      show({ label: v });
      note.textContent = words.picker_legacy;
      label.dir = "ltr";
      return li;
    }
    const known = labels.get(`${kind}:${v}`);
    if (known) show(known);
    else {
      source
        .find(v, context)
        .then((item) => {
          if (item) show(remember(kind, item));
          else {
            // Gone from the store (or, for a variant, not found through
            // the section's product): the raw value, and a word saying so.
            li.classList.add("picker-missing");
            label.textContent = v;
            label.dir = "ltr";
            note.textContent = kind === "variant" && !context.productID ? words.picker_variant_unknown : words.picker_missing;
          }
        })
        .catch((r) => {
          label.textContent = v;
          label.dir = "ltr";
          note.textContent = r?.status === 403 ? forbidden(kind) : words.picker_error;
        });
    }
    return li;
  }

  // The combobox: an input that searches, and a listbox of results.
  const input = el("input", {
    // The page's direction, not the typed text's: an empty Arabic box
    // keeps its placeholder on the right.
    type: "search", id: `${id}-input`, name: def.id, placeholder: words.picker_search, autocomplete: "off", spellcheck: false,
  });
  input.setAttribute("role", "combobox");
  input.setAttribute("aria-autocomplete", "list");
  input.setAttribute("aria-expanded", "false");
  input.setAttribute("aria-controls", `${id}-list`);
  input.setAttribute("aria-label", `${def.label}: ${words.picker_search}`);
  const popup = el("div", { className: "picker-popup", hidden: true });
  const listbox = el("ul", { id: `${id}-list`, className: "picker-list" });
  listbox.setAttribute("role", "listbox");
  listbox.setAttribute("aria-label", def.label);
  const status = el("p", { className: "picker-status" });
  status.setAttribute("role", "status");
  popup.append(listbox, status);

  const full = multi && chosen.length >= limit;
  if (full) {
    input.disabled = true;
    input.placeholder = words.picker_full.replace("{n}", limit);
  }

  let items = [];
  let active = -1;
  let timer = null;
  let controller = null;
  let product = null; // the product whose variants are listed

  function open(yes) {
    popup.hidden = !yes;
    input.setAttribute("aria-expanded", String(yes));
    root.classList.toggle("open", yes);
    if (!yes) {
      setActive(-1);
      controller?.abort();
      product = null;
    }
  }

  function setActive(i) {
    active = i;
    [...listbox.children].forEach((li, j) => li.setAttribute("aria-selected", String(j === i)));
    if (i >= 0 && listbox.children[i]) {
      input.setAttribute("aria-activedescendant", listbox.children[i].id);
      listbox.children[i].scrollIntoView({ block: "nearest" });
    } else input.removeAttribute("aria-activedescendant");
  }

  function show(found, note = "") {
    items = found;
    listbox.replaceChildren(
      ...found.map((item, i) => {
        const li = el("li", { id: `${id}-opt-${i}`, className: "picker-option" });
        li.setAttribute("role", "option");
        li.setAttribute("aria-selected", "false");
        li.dataset.value = item.value ?? "";
        if (item.back) li.classList.add("picker-back");
        if (item.expand) li.classList.add("picker-expand");
        if (item.value && chosen.includes(item.value)) li.classList.add("picker-current");
        const thumb = el("span", { className: "picker-thumb" });
        thumb.setAttribute("aria-hidden", "true");
        if (item.thumb) thumb.append(el("img", { src: item.thumb, alt: "", loading: "lazy" }));
        const text = el("span", { className: "picker-text" });
        text.append(el("span", { className: "picker-label", textContent: item.label, dir: "auto" }));
        if (item.detail && item.detail !== item.label) text.append(el("span", { className: "picker-note", textContent: item.detail, dir: "auto" }));
        li.append(thumb, text);
        // mousedown, not click: the input keeps its focus.
        li.addEventListener("mousedown", (e) => {
          e.preventDefault();
          choose(i);
        });
        return li;
      }),
    );
    status.textContent = note || (found.length ? "" : words.picker_none);
    status.hidden = !status.textContent;
    setActive(found.length ? 0 : -1);
    open(true);
  }

  async function search() {
    clearTimeout(timer);
    controller?.abort();
    controller = new AbortController();
    const signal = controller.signal;
    const q = input.value.trim();
    status.textContent = words.picker_loading;
    status.hidden = false;
    if (popup.hidden) {
      // Opened: say it is searching rather than show nothing meanwhile.
      items = [];
      listbox.replaceChildren();
      popup.hidden = false;
      input.setAttribute("aria-expanded", "true");
      root.classList.add("open");
    }
    try {
      let found;
      if (product) found = [{ label: words.picker_back, back: true }, ...(await source.variants(product, signal))];
      else if (kind === "variant" && !q && context.productID) {
        // The section's product: its variants first.
        const p = await kinds.product.find(context.productID);
        found = p ? await source.variants(p, signal) : await source.search(q, signal);
      } else found = await source.search(q, signal);
      if (signal.aborted) return;
      found.forEach((item) => item.value && !item.expand && remember(kind, item));
      show(found);
    } catch (r) {
      if (r?.name === "AbortError" || signal.aborted) return;
      show([], r?.status === 403 ? forbidden(kind) : words.picker_error);
    }
  }

  function choose(i) {
    const item = items[i];
    if (!item) return;
    if (item.back) {
      product = null;
      search();
      return;
    }
    if (item.expand) {
      product = item;
      search();
      return;
    }
    if (multi && chosen.includes(item.value)) return; // listed already
    open(false);
    setValue(multi ? [...chosen, item.value] : item.value);
    focusInput(def.id);
  }

  input.addEventListener("input", () => {
    product = null;
    clearTimeout(timer);
    timer = setTimeout(search, SEARCH_MS);
  });
  input.addEventListener("focus", () => {
    // Back in the picker after a choice: the list waits for a key.
    if (input.dataset.quiet) delete input.dataset.quiet;
    else if (popup.hidden) search();
  });
  input.addEventListener("blur", () => open(false));
  input.addEventListener("keydown", (e) => {
    const n = items.length;
    switch (e.key) {
      case "ArrowDown":
        e.preventDefault();
        if (popup.hidden) search();
        else if (n) setActive((active + 1) % n);
        break;
      case "ArrowUp":
        e.preventDefault();
        if (n) setActive((active - 1 + n) % n);
        break;
      case "Home":
      case "End":
        if (!popup.hidden && n) {
          e.preventDefault();
          setActive(e.key === "Home" ? 0 : n - 1);
        }
        break;
      case "Enter":
        e.preventDefault(); // never submit the settings form
        if (!popup.hidden && active >= 0) choose(active);
        break;
      case "Escape":
        if (!popup.hidden) {
          e.preventDefault();
          e.stopPropagation();
          open(false);
        } else if (input.value) input.value = "";
        break;
    }
  });

  root.append(current, input, popup);
  return root;
}

function forbidden(kind) {
  return words.picker_forbidden.replace("{kind}", words[`picker_kind_${kind}`] || kind);
}

// focusInput puts the focus back in a picker after the form re-rendered.
function focusInput(settingID) {
  const input = document.querySelector(`[data-setting-id="${CSS.escape(settingID)}"] input[role="combobox"]`);
  if (input && !input.disabled) {
    input.dataset.quiet = "true";
    input.focus();
  }
}
