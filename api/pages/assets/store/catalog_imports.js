// The imports page: upload a CSV through the API (Prefer: respond-async),
// then follow each import's server-sent events; the bar moves as batches
// commit, and the result lists the row errors in the page's language.

import { call, lang, storeAPI, words } from "./api.js";

const api = storeAPI("/products");
const list = document.getElementById("imports");
const template = document.getElementById("import-template");

function card(id) {
  let el = list.querySelector(`article[data-import-id="${id}"]`);
  if (el) return el;
  el = template.content.firstElementChild.cloneNode(true);
  el.dataset.importId = id;
  el.dataset.progressLog = "";
  el.querySelector(".errors-csv").href = `${api}/imports/${id}/errors`;
  return el;
}

function show(el, data) {
  const set = (cls, v) => { el.querySelector("." + cls).textContent = String(v); };
  el.dataset.status = data.status;
  el.querySelector(".status").textContent = words["status_" + data.status] || data.status;
  const bar = el.querySelector("progress");
  bar.max = Math.max(data.total_rows, 1);
  bar.value = data.processed_rows;
  for (const k of ["created", "updated", "unchanged", "failed"]) set(k, data[k]);
  set("processed", data.processed_rows);
  set("total", data.total_rows);
  // Every value the bar took, for the tests and for anyone curious.
  const log = el.dataset.progressLog ? el.dataset.progressLog.split(",") : [];
  if (log[log.length - 1] !== String(data.processed_rows)) {
    log.push(String(data.processed_rows));
    el.dataset.progressLog = log.join(",");
  }
}

function showResult(el, imp) {
  show(el, imp);
  if (imp.error) {
    const stopped = el.querySelector(".stopped");
    stopped.textContent = imp.error;
    stopped.hidden = false;
  }
  const body = el.querySelector(".row-errors tbody");
  body.replaceChildren();
  for (const e of imp.errors) {
    const tr = document.createElement("tr");
    const cells = [
      [words.row, String(e.row)],
      [words.column, e.column],
      [words.code, e.code],
      [words.message, lang === "ar" ? e.message_ar : e.message],
    ];
    for (const [label, text] of cells) {
      const td = document.createElement("td");
      td.dataset.label = label;
      td.textContent = text;
      tr.append(td);
    }
    body.append(tr);
  }
  el.querySelector(".row-errors").hidden = imp.errors.length === 0;
  el.dataset.finished = "true";
}

// follow shows a running import's progress from its event stream. A user
// may hold only a few streams at once (429), and a stream refused for any
// reason closes for good, so then the page asks for the import every few
// seconds instead, until it ends or the answer is a refusal to keep.
function follow(el) {
  const id = el.dataset.importId;
  const events = new EventSource(`${api}/imports/${id}/events`);
  events.addEventListener("progress", (ev) => show(el, JSON.parse(ev.data)));
  events.addEventListener("result", (ev) => {
    events.close();
    showResult(el, JSON.parse(ev.data));
  });
  events.addEventListener("error", () => {
    if (events.readyState === EventSource.CLOSED) setTimeout(() => poll(el), 3000);
  });
}

// poll reads the import once: an ended one shows its result, a running one
// is read again shortly, and a refusal other than 429 stops.
async function poll(el) {
  const r = await call("GET", `${api}/imports/${el.dataset.importId}`);
  if (r.ok && r.data.status !== "running") {
    showResult(el, r.data);
  } else if (r.ok || r.status === 429) {
    if (r.ok) show(el, r.data);
    setTimeout(() => poll(el), 3000);
  }
}

function add(seed, atTop) {
  const el = card(seed.id);
  el.querySelector(".started").textContent = seed.started || "";
  el.querySelector(".dry").hidden = !seed.dryRun;
  show(el, { status: seed.status, total_rows: seed.total, processed_rows: 0, created: 0, updated: 0, unchanged: 0, failed: 0 });
  list.querySelector(".empty")?.remove();
  if (atTop) list.prepend(el);
  else list.append(el);
  // Only a running import needs a stream; an ended one is read once.
  if (seed.status === "running") follow(el);
  else poll(el);
}

for (const seed of list.querySelectorAll(".seed")) {
  add({ id: seed.dataset.importId, status: seed.dataset.status, dryRun: seed.dataset.dryRun === "true",
    total: Number(seed.dataset.total), started: seed.dataset.started }, false);
  seed.remove();
}

document.getElementById("upload").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const problem = document.getElementById("upload-error");
  problem.hidden = true;
  const form = new FormData();
  form.append("file", document.getElementById("file").files[0]);
  form.append("dry_run", document.getElementById("dry-run").checked ? "true" : "false");
  const button = document.getElementById("upload-button");
  button.disabled = true;
  try {
    const r = await call("POST", `${api}/import`, { body: form, headers: { "Prefer": "respond-async" } });
    if (!r.ok) {
      problem.textContent = r.error.code ? r.error.message : words.upload_failed;
      problem.hidden = false;
      return;
    }
    const imp = r.data;
    add({ id: imp.import_id, status: imp.status, dryRun: imp.dry_run, total: imp.total_rows, started: "" }, true);
    document.getElementById("upload").reset();
  } finally {
    button.disabled = false;
  }
});
