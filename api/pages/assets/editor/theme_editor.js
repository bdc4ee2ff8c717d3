// The theme editor: a section and block tree, a settings form generated
// from the schemas, a preview frame, autosave (1500 ms debounce, one save in
// flight), undo/redo over the last 50 changes, 412 handling that merges the
// local change on top of the server's draft, publish and history.

import { call as apiCall, lang, storeAPI, words } from "../store/api.js";
import { picker, pickerKind } from "./theme_pickers.js";

const api = storeAPI("/themes/v3");
const DEBOUNCE_MS = 1500;
const UNDO_LIMIT = 50;

const $ = (id) => document.getElementById(id);
const clone = (v) => JSON.parse(JSON.stringify(v));
const equal = (a, b) => JSON.stringify(a) === JSON.stringify(b);

const state = {
  schemas: null,
  doc: null, // what the merchant sees
  base: null, // the last document the server confirmed
  etag: "",
  page: "index",
  selection: { scope: "theme", sectionId: null, blockId: null },
  history: [],
  future: [],
  saving: false,
  pending: false,
  publishing: false,
  timer: null,
};

// call is a call of the themes API, answering its status and its JSON.
async function call(method, path, body, headers = {}) {
  const r = await apiCall(method, api + path, { body, headers });
  return { status: r.status, json: r.answer };
}

// ---- JSON diff and patch (the same shape as the server's compare) ----

function diff(a, b, path = "", ops = []) {
  if (equal(a, b)) return ops;
  const isObj = (v) => v && typeof v === "object" && !Array.isArray(v);
  if (!isObj(a) || !isObj(b)) {
    ops.push({ op: "replace", path, value: clone(b) });
    return ops;
  }
  const esc = (k) => k.replaceAll("~", "~0").replaceAll("/", "~1");
  for (const k of Object.keys(a)) {
    if (k in b) diff(a[k], b[k], `${path}/${esc(k)}`, ops);
    else ops.push({ op: "remove", path: `${path}/${esc(k)}` });
  }
  for (const k of Object.keys(b)) if (!(k in a)) ops.push({ op: "add", path: `${path}/${esc(k)}`, value: clone(b[k]) });
  return ops;
}

function applyPatch(doc, ops) {
  const out = clone(doc);
  for (const { op, path, value } of ops) {
    const keys = path.split("/").slice(1).map((k) => k.replaceAll("~1", "/").replaceAll("~0", "~"));
    if (keys.length === 0) return clone(value);
    let node = out;
    for (const k of keys.slice(0, -1)) {
      if (node[k] === undefined || node[k] === null || typeof node[k] !== "object") node[k] = {};
      node = node[k];
    }
    const last = keys[keys.length - 1];
    if (op === "remove") delete node[last];
    else node[last] = clone(value);
  }
  return out;
}

// ---- save state, autosave, 412 merge ----

function setSaveState(s) {
  const el = $("save-state");
  el.dataset.state = s;
  el.textContent = { saved: words.saved, dirty: words.dirty, saving: words.saving, error: words.not_saved }[s] || s;
}

function scheduleSave() {
  setSaveState("dirty");
  clearTimeout(state.timer);
  state.timer = setTimeout(save, DEBOUNCE_MS);
}

async function save() {
  if (state.saving) {
    state.pending = true; // one save in flight; the next waits for it
    return;
  }
  if (equal(state.doc, state.base)) {
    setSaveState("saved");
    return;
  }
  state.saving = true;
  setSaveState("saving");
  const sent = clone(state.doc);
  const { status, json } = await call("PUT", "/customization", sent, { "If-Match": state.etag });
  state.saving = false;
  if (status === 200) {
    state.etag = json.data.etag;
    state.base = sent;
    renderErrors([]);
    setSaveState(equal(state.doc, state.base) ? "saved" : "dirty");
  } else if (status === 412) {
    // Someone else saved: put our change on top of theirs and try again.
    const local = diff(state.base, state.doc);
    state.base = json.current.draft;
    state.etag = json.current.etag;
    state.doc = applyPatch(state.base, local);
    showMerged();
    renderAll();
    state.pending = true;
  } else if (status === 422) {
    renderErrors(json.error.fields || []);
    setSaveState("error");
  } else {
    setSaveState("error");
  }
  if (state.pending) {
    state.pending = false;
    save();
  }
}

function showMerged() {
  const el = $("merge-notice");
  el.hidden = false;
  el.textContent = words.merged;
}

function renderErrors(fields) {
  $("errors").replaceChildren(
    ...fields.map((f) => Object.assign(document.createElement("li"), { textContent: `${f.field}: ${lang === "ar" ? f.message_ar : f.message}` })),
  );
}

// ---- changes, undo and redo ----

function change(mutate) {
  const before = clone(state.doc);
  mutate(state.doc);
  if (equal(before, state.doc)) return;
  state.history.push(before);
  if (state.history.length > UNDO_LIMIT) state.history.shift();
  state.future = [];
  afterChange();
}

function afterChange() {
  renderAll();
  sendPreview("svc:preview:set-context", { themeSettings: state.doc.settings, page: state.page, document: state.doc });
  scheduleSave();
}

function undo() {
  if (!state.history.length) return;
  state.future.push(clone(state.doc));
  state.doc = state.history.pop();
  afterChange();
}

function redo() {
  if (!state.future.length) return;
  state.history.push(clone(state.doc));
  state.doc = state.future.pop();
  afterChange();
}

// ---- preview messages ----

let nextMessage = 1;
const frame = () => $("preview");

function sendPreview(type, payload) {
  const id = nextMessage++;
  frame().contentWindow?.postMessage({ type, id, payload }, location.origin);
  return id;
}

window.addEventListener("message", (event) => {
  if (event.origin !== location.origin || event.source !== frame().contentWindow) return;
  const msg = event.data || {};
  if (msg.type === "svc:preview:ack") {
    const status = $("preview-status");
    status.dataset.lastAck = msg.of;
    status.dataset.lastAckOk = String(msg.ok);
    status.textContent = `${msg.of} ${msg.ok ? "✓" : "✗"}`;
  }
});

// ---- the tree ----

const template = () => {
  state.doc.templates ||= {};
  state.doc.templates[state.page] ||= { sections: {}, order: [] };
  return state.doc.templates[state.page];
};

function button(label, onClick, attrs = {}) {
  const b = Object.assign(document.createElement("button"), { type: "button", textContent: label, ...attrs });
  b.addEventListener("click", onClick);
  return b;
}

function newID(prefix, taken) {
  let n = 1;
  while (taken[`${prefix}-${n}`]) n++;
  return `${prefix}-${n}`;
}

function select(scope, sectionId = null, blockId = null) {
  state.selection = { scope, sectionId, blockId };
  renderTree();
  renderForm();
  if (scope === "section") sendPreview("svc:preview:scroll-to-section", { sectionId });
  if (scope === "block") sendPreview("svc:preview:select-block", { sectionId, blockId });
}

function renderTree() {
  const tpl = template();
  const list = $("sections");
  list.replaceChildren();
  tpl.order.forEach((id, i) => {
    const sec = tpl.sections[id];
    const schema = state.schemas.sections[sec.type] || { name: sec.type, blocks: [] };
    const li = document.createElement("li");
    li.dataset.sectionId = id;
    if (state.selection.sectionId === id && state.selection.scope === "section") li.classList.add("selected");
    li.append(
      button(`${schema.name}${sec.disabled ? " " + words.hidden : ""}`, () => select("section", id), { className: "section-name" }),
      button("↑", () => change(() => move(tpl.order, i, -1)), { disabled: i === 0, title: words.up }),
      button("↓", () => change(() => move(tpl.order, i, 1)), { disabled: i === tpl.order.length - 1, title: words.down }),
      button(sec.disabled ? words.show : words.hide, () => change(() => { sec.disabled = !sec.disabled; }), { className: "toggle" }),
      button("✕", () => change(() => { delete tpl.sections[id]; tpl.order.splice(i, 1); select("theme"); }), { title: words.remove }),
    );
    const blocks = document.createElement("ul");
    (sec.block_order || []).forEach((bid, j) => {
      const b = sec.blocks[bid];
      const def = (schema.blocks || []).find((d) => d.type === b.type) || { name: b.type };
      const bli = document.createElement("li");
      bli.dataset.blockId = bid;
      if (state.selection.blockId === bid) bli.classList.add("selected");
      bli.append(
        button(def.name, () => select("block", id, bid), { className: "block-name" }),
        button("↑", () => change(() => move(sec.block_order, j, -1)), { disabled: j === 0, title: words.up }),
        button("✕", () => change(() => { delete sec.blocks[bid]; sec.block_order.splice(j, 1); }), { title: words.remove_block }),
      );
      blocks.append(bli);
    });
    if ((schema.blocks || []).length) {
      const add = document.createElement("select");
      add.className = "add-block";
      add.append(new Option(words.add_block, ""));
      for (const def of schema.blocks) {
        const count = Object.values(sec.blocks || {}).filter((b) => b.type === def.type).length;
        const opt = new Option(def.name, def.type);
        opt.disabled = def.limit > 0 && count >= def.limit; // greyed at the limit
        add.append(opt);
      }
      add.addEventListener("change", () => {
        const type = add.value;
        if (!type) return;
        change(() => {
          sec.blocks ||= {};
          sec.block_order ||= [];
          const bid = newID(type, sec.blocks);
          sec.blocks[bid] = { type, settings: {} };
          sec.block_order.push(bid);
        });
      });
      blocks.append(add);
    }
    li.append(blocks);
    list.append(li);
  });
}

function move(list, i, by) {
  const j = i + by;
  if (j < 0 || j >= list.length) return;
  [list[i], list[j]] = [list[j], list[i]];
}

function renderAddSection() {
  const add = $("add-section");
  for (const [type, sec] of Object.entries(state.schemas.sections)) {
    for (const [i, preset] of (sec.presets || []).entries()) add.append(new Option(preset.name, `${type}#${i}`));
  }
  add.addEventListener("change", () => {
    if (!add.value) return;
    const [type, index] = add.value.split("#");
    const preset = state.schemas.sections[type].presets[Number(index)];
    add.value = "";
    change(() => {
      const tpl = template();
      const id = newID(type, tpl.sections);
      const blocks = {};
      const order = [];
      for (const b of preset.blocks || []) {
        const bid = newID(b.type, blocks);
        blocks[bid] = { type: b.type, settings: clone(b.settings || {}) };
        order.push(bid);
      }
      tpl.sections[id] = { type, settings: clone(preset.settings || {}), blocks, block_order: order };
      tpl.order.push(id);
    });
  });
}

// ---- the settings form ----

function currentTarget() {
  const { scope, sectionId, blockId } = state.selection;
  const sec = scope === "theme" ? null : template().sections[sectionId];
  if (!sec) return { defs: state.schemas.settings_schema, values: (state.doc.settings ||= {}), title: words.theme_settings };
  const schema = state.schemas.sections[sec.type];
  if (scope === "section") return { defs: schema.settings, values: (sec.settings ||= {}), title: schema.name };
  const block = sec.blocks[blockId];
  const def = schema.blocks.find((d) => d.type === block.type);
  return { defs: def.settings, values: (block.settings ||= {}), title: def.name };
}

function valueOf(def, values) {
  return def.id in values ? values[def.id] : def.default;
}

function visible(def, defs, values) {
  return Object.entries(def.visible_if || {}).every(([key, want]) => {
    const other = defs.find((d) => d.id === key);
    return other && equal(valueOf(other, values), want);
  });
}

function setValue(id, value) {
  change(() => {
    const { values } = currentTarget();
    if (value === null || value === "") delete values[id];
    else values[id] = value;
  });
}

function input(def, value) {
  const el = (tag, attrs = {}) => Object.assign(document.createElement(tag), attrs);
  const wrap = el("span");
  const onText = (node) => node.addEventListener("change", () => setValue(def.id, node.value));
  switch (def.type) {
    case "header":
      return el("h3", { textContent: def.label });
    case "textarea":
    case "richtext": {
      const t = el("textarea", { value: value ?? "", name: def.id, dir: "auto" });
      onText(t);
      return t;
    }
    case "number": {
      const n = el("input", { type: "number", step: "1", value: value ?? "", name: def.id });
      n.addEventListener("change", () => setValue(def.id, n.value === "" ? null : Number.parseInt(n.value, 10)));
      return n;
    }
    case "range": {
      const r = el("input", { type: "range", min: def.min, max: def.max, step: def.step, value: value ?? def.min, name: def.id });
      const out = el("output", { textContent: `${r.value}${def.unit || ""}` });
      r.addEventListener("input", () => { out.textContent = `${r.value}${def.unit || ""}`; });
      r.addEventListener("change", () => setValue(def.id, Number(r.value)));
      wrap.append(r, out);
      return wrap;
    }
    case "range_with_unit": {
      const v = value || { value: def.min, unit: def.units[0] };
      const r = el("input", { type: "range", min: def.min, max: def.max, step: def.step, value: v.value, name: def.id });
      const u = el("select", { name: def.id + "_unit" });
      for (const unit of def.units) u.append(new Option(unit, unit, false, unit === v.unit));
      const update = () => setValue(def.id, { value: Number(r.value), unit: u.value });
      r.addEventListener("change", update);
      u.addEventListener("change", update);
      wrap.append(r, u);
      return wrap;
    }
    case "select": {
      const s = el("select", { name: def.id });
      for (const o of def.options) s.append(new Option(o.label, o.value, false, o.value === value));
      onText(s);
      return s;
    }
    case "radio": {
      for (const o of def.options) {
        const r = el("input", { type: "radio", name: def.id, value: o.value, checked: o.value === value });
        r.addEventListener("change", () => setValue(def.id, o.value));
        // Each option is one unit, its radio inside its label: side by side,
        // an English label's neutral radio took the neighbouring label's
        // direction and sat beside the wrong word in Arabic.
        const option = el("label", { className: "option" });
        option.append(r, o.label);
        wrap.append(option);
      }
      return wrap;
    }
    case "checkbox": {
      const c = el("input", { type: "checkbox", checked: !!value, name: def.id });
      c.addEventListener("change", () => setValue(def.id, c.checked));
      return c;
    }
    case "color": {
      const c = el("input", { type: "color", value: value || "#000000", name: def.id });
      const hex = el("input", { type: "text", value: value || "", size: 9, name: def.id + "_hex", dir: "ltr" });
      c.addEventListener("change", () => setValue(def.id, c.value));
      onText(hex);
      wrap.append(c, hex);
      return wrap;
    }
    case "color_scheme_group": {
      const group = value || {};
      for (const [scheme, colors] of Object.entries(group)) {
        wrap.append(el("strong", { textContent: scheme, dir: "ltr" }));
        for (const d of def.definition) {
          const c = el("input", { type: "color", value: colors[d.id] || "#000000", title: `${scheme} ${d.label}` });
          c.addEventListener("change", () => setValue(def.id, { ...group, [scheme]: { ...colors, [d.id]: c.value } }));
          wrap.append(c);
        }
      }
      return wrap;
    }
    default: {
      if (pickerKind(def.type)) {
        // The content pickers search the store (theme_pickers.js); a
        // variant picker starts from the product its section chose.
        const { defs, values } = currentTarget();
        const productDef = defs.find((d) => d.type === "product");
        const productID = productDef ? valueOf(productDef, values) : null;
        return picker(def, value, (v) => setValue(def.id, v), { productID });
      }
      // text, inline_richtext, url, video_url, font_picker and
      // color_scheme: one line of text, laid out by what it holds (an
      // Arabic heading right to left, a URL or a font handle left to
      // right).
      const t = el("input", { type: def.type.includes("url") ? "url" : "text", value: value ?? "", name: def.id, dir: "auto" });
      onText(t);
      return t;
    }
  }
}

function renderForm() {
  const { defs, values, title } = currentTarget();
  $("form-title").textContent = title;
  const form = $("settings-form");
  form.replaceChildren();
  for (const def of defs) {
    const row = document.createElement("div");
    row.className = "field";
    row.dataset.settingId = def.id;
    row.dataset.type = def.type;
    row.hidden = !visible(def, defs, values); // live visible_if
    if (def.type !== "header") row.append(Object.assign(document.createElement("label"), { textContent: def.label }));
    row.append(input(def, valueOf(def, values)));
    form.append(row);
  }
}

function renderAll() {
  $("undo").disabled = state.history.length === 0;
  $("redo").disabled = state.future.length === 0;
  renderTree();
  renderForm();
}

// ---- publish and history ----

async function publish() {
  if (state.publishing) return;
  state.publishing = true;
  clearTimeout(state.timer);
  await save();
  const name = $("publish-name").value.trim();
  const { status } = await call("POST", "/customization/publish", name ? { name } : {});
  state.publishing = false;
  if (status === 201) {
    $("publish-name").value = "";
    await loadHistory();
  }
}

async function loadHistory() {
  const { json } = await call("GET", "/versions");
  const list = $("versions");
  list.replaceChildren(
    ...(json.data || []).map((v) => {
      const li = document.createElement("li");
      li.dataset.versionId = v.id;
      li.dataset.source = v.source;
      li.append(
        Object.assign(document.createElement("span"), { className: "version-name", textContent: v.name }),
        button(words.compare, () => compare(v.id)),
        button(words.restore, () => restore(v.id)),
      );
      return li;
    }),
  );
}

async function compare(id) {
  const { json } = await call("GET", `/versions/compare?from=${id}&to=draft`);
  $("changes").replaceChildren(
    ...(json.data?.changes || []).map((c) =>
      Object.assign(document.createElement("li"), { textContent: `${c.kind} ${c.path}` }),
    ),
  );
}

async function restore(id) {
  const { status } = await call("POST", `/versions/${id}/restore`);
  if (status !== 201) return;
  // The restore answers the new version, like publish; read the replaced draft.
  const current = await call("GET", "/customization");
  state.doc = current.json.data.draft;
  state.base = clone(state.doc);
  state.etag = current.json.data.etag;
  state.history = [];
  state.future = [];
  renderAll();
  sendPreview("svc:preview:set-context", { themeSettings: state.doc.settings, page: state.page, document: state.doc });
  setSaveState("saved");
  await loadHistory();
}

// ---- the theme library ----

// loadThemes fills the picker with the built-in themes, the draft's chosen.
async function loadThemes() {
  const { data } = await apiCall("GET", storeAPI("/themes"));
  state.themes = data?.items || [];
  $("theme-picker").replaceChildren(
    ...state.themes.map((th) =>
      Object.assign(document.createElement("option"), { value: th.id, textContent: th.name[lang] || th.name.en, selected: th.draft }),
    ),
  );
}

// switchTheme puts the chosen theme's defaults in the draft (the old draft
// is saved as a version), swaps the preview's stylesheet and renders the
// new draft there with the theme's templates.
async function switchTheme() {
  const id = $("theme-picker").value;
  clearTimeout(state.timer);
  await save();
  const { status, json } = await call("POST", "/customization/switch", { theme_id: id });
  if (status !== 200) return loadThemes();
  state.doc = json.data.draft;
  state.base = clone(state.doc);
  state.etag = json.data.etag;
  state.history = [];
  state.future = [];
  const chosen = state.themes.find((th) => th.id === id);
  sendPreview("svc:preview:swap-theme", { bundle_url: "/assets/editor/theme_preview.js", css_url: new URL(chosen.stylesheet_url).pathname + new URL(chosen.stylesheet_url).search });
  sendPreview("svc:preview:set-context", { themeSettings: state.doc.settings, page: state.page, document: state.doc });
  renderAll();
  setSaveState("saved");
  await loadThemes();
  if (!$("history").hidden) await loadHistory();
}

// ---- start ----

async function start() {
  const [schemas, current] = await Promise.all([call("GET", "/schemas"), call("GET", "/customization")]);
  state.schemas = schemas.json.data;
  state.doc = current.json.data.draft;
  state.base = clone(state.doc);
  state.etag = current.json.data.etag;
  renderAddSection();
  renderAll();
  setSaveState("saved");
  $("undo").addEventListener("click", undo);
  $("redo").addEventListener("click", redo);
  $("theme-settings").addEventListener("click", () => select("theme"));
  $("publish").addEventListener("click", publish);
  $("theme-picker").addEventListener("change", switchTheme);
  await loadThemes();
  $("history-toggle").addEventListener("click", () => {
    $("history").hidden = !$("history").hidden;
    if (!$("history").hidden) loadHistory();
  });
  document.body.dataset.ready = "true";
}

start();
