// The analytics page reads GET /analytics/sales and /analytics/top-products
// with the member's session and draws the net sales per bucket as plain
// SVG bars. In Arabic the time axis runs right to left, like the text.

import { call, lang, storeAPI, words } from "./api.js";

const rtl = document.documentElement.dir === "rtl";
const form = document.getElementById("range-form");
const chart = document.getElementById("chart");
const errorBox = document.getElementById("error");
const locale = lang === "ar" ? "ar-EG" : "en-GB";
const base = storeAPI("/analytics");

let money = (minor) => String(minor);
let axis = (minor) => String(minor);
function moneyFormat(currency) {
  const format = new Intl.NumberFormat(locale, { style: "currency", currency });
  const digits = format.resolvedOptions().maximumFractionDigits;
  const compact = new Intl.NumberFormat(locale, { notation: "compact", maximumFractionDigits: 1 });
  axis = (minor) => compact.format(minor / 10 ** digits);
  return (minor) => format.format(minor / 10 ** digits);
}
const count = (n) => new Intl.NumberFormat(locale).format(n);
const percent = (r) => (r === null ? "—" : new Intl.NumberFormat(locale, { style: "percent", maximumFractionDigits: 1 }).format(r));

function figure(data, path) {
  return path.split(".").reduce((v, k) => (v == null ? v : v[k]), data);
}

const rates = new Set(["cod.collection_rate", "return_rate", "checkouts.recovery_rate"]);
const counts = new Set(["orders", "cod.pending"]);

function showTotals(totals) {
  for (const el of document.querySelectorAll("#totals [data-figure]")) {
    const path = el.dataset.figure;
    const v = figure(totals, path);
    if (path === "cancelled_orders") el.textContent = v ? `${count(v)} ${words.cancelled}` : "";
    else if (rates.has(path)) el.textContent = percent(v);
    else if (counts.has(path)) el.textContent = count(v);
    else el.textContent = v === null ? "—" : money(v);
  }
}

const svgNS = "http://www.w3.org/2000/svg";
function node(name, attrs, text) {
  const el = document.createElementNS(svgNS, name);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  if (text !== undefined) el.textContent = text;
  return el;
}

// drawChart draws one bar per bucket, scaled to the largest, at the
// chart's own pixel width (so text keeps its size on a phone); labels are
// thinned so they never overlap, and every bar has a tooltip.
let drawn = [];
function drawChart(buckets) {
  drawn = buckets;
  const width = Math.max(300, chart.clientWidth), height = 260, top = 16, bottom = 40, side = 48;
  const plotW = width - 2 * side, plotH = height - top - bottom;
  const values = buckets.map((b) => b.net_sales);
  const maxV = Math.max(1, ...values), minV = Math.min(0, ...values);
  const y = (v) => top + plotH * (maxV - v) / (maxV - minV);
  const slot = plotW / Math.max(1, buckets.length);
  const x = (i) => side + slot * (rtl ? buckets.length - 1 - i : i);
  const svg = node("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": words.chart });
  svg.append(node("line", { class: "axis", x1: side, x2: width - side, y1: y(0), y2: y(0) }));
  for (const v of [maxV, maxV / 2]) {
    const axisX = rtl ? width - side + 6 : side - 6;
    svg.append(node("text", { x: axisX, y: y(v) + 4, "text-anchor": rtl ? "start" : "end" }, axis(v)));
  }
  const every = Math.ceil(buckets.length / Math.max(1, Math.floor(plotW / 56)));
  buckets.forEach((b, i) => {
    const h = Math.abs(y(b.net_sales) - y(0));
    const bar = node("rect", { class: "bar", x: x(i) + slot * 0.15, width: Math.max(1, slot * 0.7), y: Math.min(y(b.net_sales), y(0)), height: Math.max(h, 0.5) });
    bar.append(node("title", {}, `${b.start === b.end ? b.start : b.start + " – " + b.end}: ${money(b.net_sales)} · ${count(b.orders)} ${words.orders}`));
    svg.append(bar);
    if (i % every === 0) {
      svg.append(node("text", { x: x(i) + slot / 2, y: height - bottom + 18, "text-anchor": "middle", direction: "ltr" }, b.start.slice(5)));
    }
  });
  chart.replaceChildren(svg);
}

function showTop(items) {
  const rows = document.getElementById("top-rows");
  rows.replaceChildren(...items.map((p) => {
    const tr = document.createElement("tr");
    tr.className = "top-product";
    for (const [label, value] of [[words.product, p.name], [words.units, count(p.units)], [words.orders, count(p.orders)],
      [words.gross_sales, money(p.gross_sales)], [words.net_sales, money(p.net_sales)]]) {
      const td = document.createElement("td");
      td.dataset.label = label;
      td.textContent = value;
      tr.append(td);
    }
    return tr;
  }));
  document.getElementById("no-products").hidden = items.length > 0;
}

async function read(path) {
  const r = await call("GET", path);
  if (!r.ok) throw new Error(r.error.message);
  return r.data;
}

async function load() {
  // Empty dates are left out: the API reads the last 30 days.
  const range = new URLSearchParams();
  for (const name of ["date_from", "date_to"]) {
    if (form.elements[name].value) range.set(name, form.elements[name].value);
  }
  const query = new URLSearchParams(range);
  query.set("interval", form.elements.interval.value);
  errorBox.hidden = true;
  try {
    const [sales, top] = await Promise.all([read(`${base}/sales?${query}`), read(`${base}/top-products?${range}`)]);
    money = moneyFormat(sales.currency);
    form.elements.date_from.value = sales.date_from;
    form.elements.date_to.value = sales.date_to;
    form.elements.interval.value = sales.interval;
    // The time and zone are one left-to-right run, isolated from the Arabic
    // around them (unisolated, "2026-11-28" shows as "28-11-2026").
    const asOf = document.createElement("bdi");
    asOf.dir = "ltr";
    asOf.textContent = `${sales.as_of.replace("T", " ").slice(0, 16)} UTC · ${sales.timezone}`;
    document.getElementById("as-of").replaceChildren(`${words.as_of} `, asOf);
    const csv = new URLSearchParams({ date_from: sales.date_from, date_to: sales.date_to, format: "csv", lang });
    document.getElementById("download-sales").href = `${base}/sales?${csv}&interval=${sales.interval}`;
    document.getElementById("download-top").href = `${base}/top-products?${csv}`;
    showTotals(sales.totals);
    drawChart(sales.buckets);
    showTop(top.items);
    document.body.dataset.loaded = "true";
  } catch (err) {
    errorBox.textContent = err.message;
    errorBox.hidden = false;
    document.body.dataset.loaded = "error";
  }
}

let resizing;
window.addEventListener("resize", () => {
  clearTimeout(resizing);
  resizing = setTimeout(() => drawn.length && drawChart(drawn), 100);
});

form.addEventListener("submit", (event) => {
  event.preventDefault();
  load();
});
load();
