/**
 * The catalog's page at `/`: plain HTML and a little JavaScript over the REST API,
 * no build step and nothing from a CDN. It shows
 *
 * - the totals (`GET /stats`) and two charts: the compression ratio by codec, and the
 *   monthly cost by storage class against the same data raw and as Parquet
 *   (`GET /cost_report`);
 * - the datasets (`GET /datasets`), or the hits of a search (`GET /search?q=`);
 * - for the dataset picked: its versions (`/versions`), where its bytes go column by
 *   column as a chart (`/columns`), and its chunks (`/chunks`).
 *
 * Charts are SVG drawn here (horizontal bars, labelled), so they need no library.
 * Text goes in with `textContent` only, so a dataset's name or description cannot
 * inject markup. With auth on, the token is kept in this browser's `localStorage`
 * (key `permafrost_token`) and sent as `Authorization: Bearer`; the page asks for one
 * when the catalog answers 401. `/stats` and `/cost_report` need namespace `*`: for
 * other users the charts say so instead.
 *
 * @module
 */

import { LOGIN_CSS, loginForm, TOKEN_KEY } from "../internal/page_login.ts";

/** The page. */
export const CATALOG_PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Permafrost catalog</title>
<style>
  body { font: 14px/1.4 system-ui, sans-serif; margin: 2rem; color: #1d2733; max-width: 78rem; }
  h1 { font-size: 1.3rem; margin: 0 0 .2rem; }
  h2 { font-size: 1.05rem; margin: 1.4rem 0 .4rem; }
  h3 { font-size: .95rem; margin: 1rem 0 .3rem; }
  .muted, #updated { color: #6b7785; font-size: .85rem; }
  #totals { display: flex; gap: 2rem; flex-wrap: wrap; margin: .8rem 0; }
  #totals div { min-width: 7rem; }
  #totals b { display: block; font-size: 1.25rem; font-variant-numeric: tabular-nums; color: #1d2733; }
  .charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(22rem, 1fr)); gap: 1.5rem; }
  svg.chart { width: 100%; max-width: 44rem; height: auto; }
  svg.chart text { font: 11px system-ui, sans-serif; fill: #1d2733; }
  svg.chart text.value { fill: #4a5765; }
  svg.chart rect.a { fill: #3b82f6; } svg.chart rect.b { fill: #cbd5e1; } svg.chart rect.c { fill: #94a3b8; }
  .legend span { display: inline-block; width: .7rem; height: .7rem; margin: 0 .3rem 0 .8rem; vertical-align: -1px; }
  table { border-collapse: collapse; width: 100%; }
  th, td { text-align: left; padding: .3rem .6rem; border-bottom: 1px solid #e3e8ee; }
  th { font-weight: 600; color: #4a5765; }
  td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
  tr.pick { cursor: pointer; } tr.pick:hover { background: #f1f5f9; } tr.chosen { background: #e0ecff; }
  .empty { color: #6b7785; font-style: italic; }
  input[type=search] { font: inherit; width: 24rem; max-width: 100%; padding: .25rem .4rem; }
${LOGIN_CSS}
  #detail[hidden] { display: none; }
</style>
</head>
<body>
<h1>Permafrost catalog</h1>
<div id="updated">loading…</div>
${loginForm("catalog")}
<div id="totals"></div>
<div class="charts">
  <section><h2>Compression ratio by codec</h2><div id="by-codec" class="muted">…</div></section>
  <section><h2>Monthly cost by storage class</h2><div id="cost" class="muted">…</div></section>
</div>
<h2>Datasets</h2>
<form id="search-form"><input id="search" type="search" placeholder="search names, versions, columns, descriptions"> <button type="submit">Search</button></form>
<table>
  <thead><tr><th>name</th><th>version</th><th class="num">rows</th><th>codec</th><th class="num">stored</th><th class="num">ratio</th><th>description</th></tr></thead>
  <tbody id="datasets"><tr><td colspan="7" class="empty">loading…</td></tr></tbody>
</table>
<section id="detail" hidden>
  <h2 id="detail-title"></h2>
  <div id="detail-summary" class="muted"></div>
  <h3>Bytes by column</h3>
  <div id="columns"></div>
  <h3>Versions</h3>
  <table>
    <thead><tr><th>version</th><th class="num">rows</th><th>codec</th><th class="num">stored</th><th class="num">ratio</th><th>storage class</th><th>registered</th></tr></thead>
    <tbody id="versions"></tbody>
  </table>
  <h3>Chunks <span id="chunk-note" class="muted"></span></h3>
  <table>
    <thead><tr><th class="num">chunk</th><th class="num">rows</th><th class="num">stored</th><th class="num">raw</th><th>sha256</th></tr></thead>
    <tbody id="chunks"></tbody>
  </table>
</section>
<noscript>This page needs JavaScript; the same data is at <code>/datasets</code>, <code>/stats</code> and <code>/openapi.json</code>.</noscript>
<script>
"use strict";
const TOKEN_KEY = "${TOKEN_KEY}";
function token() {
  try { return localStorage.getItem(TOKEN_KEY) || ""; } catch { return ""; }
}
class Refused extends Error {}
async function get(path) {
  const t = token();
  const res = await fetch(path, t ? { headers: { authorization: "Bearer " + t } } : {});
  const body = await res.json().catch(() => null);
  if (res.status === 401) {
    document.getElementById("login").hidden = false;
    throw new Refused(t ? "the token was refused (expired or revoked?)" : "sign in with a token");
  }
  if (!res.ok) throw new Refused((body && body.error && body.error.message) || "HTTP " + res.status);
  return body;
}
function bytes(n) {
  if (n == null) return "";
  const units = ["B", "kB", "MB", "GB", "TB"];
  let i = 0;
  while (n >= 1000 && i < units.length - 1) { n /= 1000; i++; }
  return (i === 0 ? n : n.toFixed(1)) + " " + units[i];
}
function count(n) { return n == null ? "" : Number(n).toLocaleString("en-US"); }
function ratio(r) { return r == null ? "" : r.toFixed(1) + "×"; }
function money(n) {
  if (n == null) return "";
  // Small archives cost fractions of a cent: keep three significant digits.
  return "$" + (n >= 1 ? n.toLocaleString("en-US", { maximumFractionDigits: 2 })
    : n.toLocaleString("en-US", { maximumSignificantDigits: 3 }));
}
function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text != null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}
function row(body, cells, cls) {
  const tr = document.createElement("tr");
  if (cls) tr.className = cls;
  for (const [text, c] of cells) tr.appendChild(el("td", text, c));
  body.appendChild(tr);
  return tr;
}
function empty(body, columns, text) {
  body.replaceChildren();
  const td = el("td", text, "empty");
  td.colSpan = columns;
  const tr = document.createElement("tr");
  tr.appendChild(td);
  body.appendChild(tr);
}
const SVG = "http://www.w3.org/2000/svg";
function svg(tag, attrs, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text != null) e.textContent = String(text);
  return e;
}
/**
 * Horizontal bars: one group per item, one bar per series, scaled to the largest
 * value of any series; each bar labelled with its value.
 */
function barChart(id, items, series, label) {
  const box = document.getElementById(id);
  box.replaceChildren();
  box.className = "";
  if (items.length === 0) { box.appendChild(el("div", "nothing yet", "empty")); return; }
  const barH = 14, gap = 4, groupGap = 10, right = 90, width = 640;
  // Room for the longest label (about 6.5 px a character at 11 px).
  const left = Math.min(320, 12 + 6.5 * Math.max(...items.map((it) => String(label(it)).length)));
  const groupH = series.length * (barH + gap) + groupGap;
  const height = items.length * groupH + 4;
  const max = Math.max(1e-12, ...items.flatMap((it) => series.map((s) => s.value(it) || 0)));
  const chart = svg("svg", { class: "chart", viewBox: "0 0 " + width + " " + height, role: "img" });
  chart.appendChild(svg("title", {}, document.getElementById(id).previousElementSibling?.textContent || id));
  items.forEach((it, i) => {
    const y0 = i * groupH;
    chart.appendChild(svg("text", { x: left - 6, y: y0 + barH - 2, "text-anchor": "end" }, label(it)));
    series.forEach((s, j) => {
      const v = s.value(it) || 0;
      const y = y0 + j * (barH + gap);
      const w = Math.max(1, (width - left - right) * v / max);
      const bar = svg("rect", { class: s.cls, x: left, y, width: w.toFixed(1), height: barH, "data-value": v });
      bar.appendChild(svg("title", {}, s.name + ": " + s.format(v)));
      chart.appendChild(bar);
      chart.appendChild(svg("text", { class: "value", x: left + w + 4, y: y + barH - 3 }, s.format(v)));
    });
  });
  box.appendChild(chart);
  if (series.length > 1) {
    const legend = el("div", null, "legend muted");
    for (const s of series) {
      const swatch = el("span");
      swatch.style.background = s.cls === "a" ? "#3b82f6" : s.cls === "b" ? "#cbd5e1" : "#94a3b8";
      legend.append(swatch, document.createTextNode(s.name));
    }
    box.appendChild(legend);
  }
}
function refused(id, err) {
  const box = document.getElementById(id);
  box.replaceChildren(el("div", err.message, "empty"));
}
async function drawStats() {
  try {
    const s = await get("stats");
    const totals = document.getElementById("totals");
    totals.replaceChildren();
    for (const [name, value] of [
      ["datasets", count(s.datasets)], ["versions", count(s.versions)], ["rows", count(s.rows)],
      ["raw", bytes(s.raw_bytes)], ["stored", bytes(s.stored_bytes)], ["ratio", ratio(s.ratio)],
    ]) {
      const d = el("div", name, "muted");
      d.prepend(el("b", value));
      totals.appendChild(d);
    }
    barChart("by-codec", s.by_codec, [
      { name: "ratio", cls: "a", value: (g) => g.ratio, format: ratio },
    ], (g) => g.codec + " (" + count(g.versions) + ")");
  } catch (err) {
    refused("by-codec", err);
  }
  try {
    const c = await get("cost_report");
    barChart("cost", c.storage_classes, [
      { name: "Permafrost", cls: "a", value: (l) => l.monthly_cost, format: money },
      { name: "as Parquet (estimate)", cls: "c", value: (l) => l.parquet_monthly_cost, format: money },
      { name: "raw", cls: "b", value: (l) => l.raw_monthly_cost, format: money },
    ], (l) => l.storage_class);
  } catch (err) {
    refused("cost", err);
  }
}
let chosen = null;
async function drawDatasets(query) {
  const body = document.getElementById("datasets");
  try {
    const items = query
      ? (await get("search?q=" + encodeURIComponent(query) + "&limit=100")).items
      : (await get("datasets?limit=100")).items;
    body.replaceChildren();
    if (items.length === 0) empty(body, 7, query ? "no dataset matches" : "no datasets registered yet");
    for (const d of items) {
      const tr = row(body, [
        [d.name], [d.version], [count(d.rows), "num"], [d.codec],
        [bytes(d.stored_bytes), "num"], [ratio(d.ratio), "num"], [d.description || ""],
      ], "pick" + (d.name === chosen ? " chosen" : ""));
      tr.dataset.name = d.name;
      tr.addEventListener("click", () => pick(d.name));
    }
    document.getElementById("updated").textContent = "updated " + new Date().toLocaleTimeString();
  } catch (err) {
    empty(body, 7, err.message);
    document.getElementById("updated").textContent = "cannot read the catalog: " + err.message;
  }
}
async function pick(name) {
  chosen = name;
  for (const tr of document.querySelectorAll("#datasets tr")) {
    tr.classList.toggle("chosen", tr.dataset.name === name);
  }
  const path = "datasets/" + encodeURIComponent(name);
  document.getElementById("detail").hidden = false;
  document.getElementById("detail-title").textContent = name;
  try {
    const [d, versions, columns, chunks] = await Promise.all([
      get(path), get(path + "/versions?limit=100"), get(path + "/columns"), get(path + "/chunks?limit=100"),
    ]);
    document.getElementById("detail-summary").textContent = d.version + " · " + count(d.rows) +
      " rows · " + d.columns + " columns · " + d.chunks + " chunks · " + bytes(d.stored_bytes) +
      " stored · " + (d.encrypted ? "encrypted · " : "") + d.path;
    barChart("columns", columns.columns, [
      { name: "stored", cls: "a", value: (c) => c.stored_bytes, format: bytes },
    ], (c) => c.name + " · " + c.type + " · " + Math.round(c.share * 100) + "%");
    const vb = document.getElementById("versions");
    vb.replaceChildren();
    for (const v of versions.items) {
      row(vb, [[v.version], [count(v.rows), "num"], [v.codec], [bytes(v.stored_bytes), "num"],
        [ratio(v.ratio), "num"], [v.storage_class], [v.registered_at]]);
    }
    const cb = document.getElementById("chunks");
    cb.replaceChildren();
    for (const c of chunks.items) {
      row(cb, [[c.chunk, "num"], [count(c.row_end - c.row_start), "num"], [bytes(c.length), "num"],
        [bytes(c.raw_bytes), "num"], [c.sha256.slice(0, 16) + "…"]]);
    }
    document.getElementById("chunk-note").textContent = chunks.total > chunks.items.length
      ? "(first " + chunks.items.length + " of " + chunks.total + ")" : "";
  } catch (err) {
    document.getElementById("detail-summary").textContent = err.message;
  }
}
document.getElementById("search-form").addEventListener("submit", (e) => {
  e.preventDefault();
  drawDatasets(document.getElementById("search").value.trim());
});
document.getElementById("login").addEventListener("submit", (e) => {
  e.preventDefault();
  try { localStorage.setItem(TOKEN_KEY, document.getElementById("token").value.trim()); } catch { /* not kept */ }
  document.getElementById("token").value = "";
  document.getElementById("login").hidden = true;
  start();
});
function start() {
  drawStats();
  const params = new URLSearchParams(location.search);
  drawDatasets(params.get("q") || "").then(() => { if (params.get("dataset")) pick(params.get("dataset")); });
}
start();
</script>
</body>
</html>
`;
