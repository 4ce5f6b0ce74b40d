/**
 * The master's status page at `/`: plain HTML and a little JavaScript, no build
 * step. Every second it reads `GET /workers` and `GET /jobs` and redraws two
 * tables: workers with their status and heartbeat age; jobs with a progress bar,
 * rows/s, source MB/s, elapsed time, time left, compression ratio, and a sparkline
 * of the job's throughput (rows/s between refreshes, kept in the page while it is
 * open; an SVG drawn here, no charting library). Text goes in with `textContent`
 * only, so a path in a job cannot inject markup.
 *
 * With auth on the page itself is public but holds no data: the script sends
 * `Authorization: Bearer <token>` with the token kept in this browser's
 * `localStorage` (key `permafrost_token`), and when the master answers 401 it shows
 * a field to paste one (`cluster add-user` prints it). "Forget token" clears it.
 * The token never goes into the URL, so it stays out of logs and history.
 *
 * @module
 */

import { LOGIN_CSS, loginForm, TOKEN_KEY } from "../internal/page_login.ts";

/** The page. */
export const STATUS_PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Permafrost master</title>
<style>
  body { font: 14px/1.4 system-ui, sans-serif; margin: 2rem; color: #1d2733; }
  h1 { font-size: 1.3rem; margin: 0 0 .2rem; }
  h2 { font-size: 1.05rem; margin: 1.6rem 0 .4rem; }
  #updated { color: #6b7785; font-size: .85rem; }
  table { border-collapse: collapse; width: 100%; }
  th, td { text-align: left; padding: .3rem .6rem; border-bottom: 1px solid #e3e8ee; vertical-align: middle; }
  th { font-weight: 600; color: #4a5765; }
  td.num { text-align: right; font-variant-numeric: tabular-nums; }
  .bar { position: relative; width: 12rem; height: .9rem; background: #e3e8ee; border-radius: .45rem; overflow: hidden; }
  .bar > div { height: 100%; background: #3b82f6; }
  .status { font-weight: 600; }
  .idle, .DONE { color: #15803d; } .busy, .RUNNING { color: #1d4ed8; }
  .offline, .FAILED { color: #b91c1c; } .QUEUED, .CANCELLED { color: #6b7785; }
  .empty { color: #6b7785; font-style: italic; }
  svg.spark { width: 6rem; height: 1.2rem; vertical-align: middle; }
  svg.spark polyline { fill: none; stroke: #3b82f6; stroke-width: 1.5; }
  svg.spark polygon { fill: #3b82f622; stroke: none; }
${LOGIN_CSS}
  #logout[hidden] { display: none; }
  #logout { font: inherit; font-size: .85rem; }
</style>
</head>
<body>
<h1>Permafrost master</h1>
<div id="updated">loading…</div>
${loginForm("master")}
<button id="logout" type="button" hidden>Forget token</button>
<h2>Workers</h2>
<table>
  <thead><tr><th>worker</th><th>status</th><th>task</th><th class="num">jobs</th><th class="num">tasks done</th><th class="num">last heartbeat</th><th>url</th></tr></thead>
  <tbody id="workers"><tr><td colspan="6" class="empty">no workers yet</td></tr></tbody>
</table>
<h2>Jobs</h2>
<table>
  <thead><tr><th>job</th><th>status</th><th>progress</th><th class="num">tasks</th><th class="num">rows</th><th class="num">rows/s</th><th class="num">MB/s</th><th class="num">elapsed</th><th class="num">left</th><th class="num">ratio</th><th>throughput</th><th>codec</th><th>source → destination</th><th>error</th></tr></thead>
  <tbody id="jobs"><tr><td colspan="14" class="empty">no jobs yet</td></tr></tbody>
</table>
<noscript>This page refreshes with JavaScript; the same data is at <code>/workers</code> and <code>/jobs</code>.</noscript>
<script>
"use strict";
function cell(tr, text, cls) {
  const td = document.createElement("td");
  td.textContent = text == null ? "" : String(text);
  if (cls) td.className = cls;
  tr.appendChild(td);
  return td;
}
function fill(id, rows, columns, empty) {
  const body = document.getElementById(id);
  body.replaceChildren();
  if (rows.length === 0) {
    const tr = document.createElement("tr");
    cell(tr, empty, "empty").colSpan = columns;
    body.appendChild(tr);
  }
  return body;
}
function drawWorkers(workers) {
  const body = fill("workers", workers, 7, "no workers yet");
  for (const w of workers) {
    const tr = document.createElement("tr");
    tr.dataset.worker = w.worker_id;
    cell(tr, w.worker_id);
    cell(tr, w.status, "status " + w.status);
    cell(tr, w.task_id || "");
    cell(tr, w.jobs_done, "num");
    cell(tr, w.tasks_done, "num");
    cell(tr, w.heartbeat_age_s.toFixed(1) + " s ago", "num");
    cell(tr, w.url);
    body.appendChild(tr);
  }
}
function duration(s) {
  if (s == null) return "";
  if (s < 60) return s.toFixed(1) + " s";
  const m = Math.floor(s / 60);
  return m < 60 ? m + " min " + Math.round(s % 60) + " s" : Math.floor(m / 60) + " h " + (m % 60) + " min";
}
function number(v, digits) {
  return v == null ? "" : v.toLocaleString("en-US", { maximumFractionDigits: digits });
}
// Rows done per job at each refresh while the page is open: the sparkline's data.
const history = new Map();
function sample(j) {
  let h = history.get(j.job_id);
  if (!h) history.set(j.job_id, h = []);
  const last = h[h.length - 1];
  if (!last || last.rows !== j.rows_done || j.status === "RUNNING") {
    h.push({ t: performance.now(), rows: j.rows_done });
    if (h.length > 61) h.shift();
  }
  const rates = [];
  for (let i = 1; i < h.length; i++) {
    const dt = (h[i].t - h[i - 1].t) / 1000;
    if (dt > 0) rates.push((h[i].rows - h[i - 1].rows) / dt);
  }
  // Until the page has seen the job move, its average rate stands for it.
  if (rates.length === 0 && j.rows_per_s != null) rates.push(j.rows_per_s, j.rows_per_s);
  return rates;
}
const SVG = "http://www.w3.org/2000/svg";
function sparkline(rates) {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("class", "spark");
  svg.setAttribute("viewBox", "0 0 100 20");
  svg.setAttribute("preserveAspectRatio", "none");
  if (rates.length < 2) return svg;
  const max = Math.max(...rates, 1);
  const points = rates.map((r, i) => (i * 100 / (rates.length - 1)).toFixed(1) + "," + (19 - r / max * 18).toFixed(1));
  const area = document.createElementNS(SVG, "polygon");
  area.setAttribute("points", "0,20 " + points.join(" ") + " 100,20");
  const line = document.createElementNS(SVG, "polyline");
  line.setAttribute("points", points.join(" "));
  const title = document.createElementNS(SVG, "title");
  title.textContent = "rows/s, peak " + number(max, 0);
  svg.append(title, area, line);
  return svg;
}
function drawJobs(jobs) {
  const body = fill("jobs", jobs, 14, "no jobs yet");
  for (const j of jobs) {
    const tr = document.createElement("tr");
    tr.dataset.job = j.job_id;
    cell(tr, j.job_id);
    cell(tr, j.status + (j.status === "RUNNING" ? " (" + j.phase + ")" : ""), "status " + j.status);
    const td = cell(tr, "");
    const bar = document.createElement("div");
    bar.className = "bar";
    bar.title = Math.round(j.progress * 100) + "%";
    const fillDiv = document.createElement("div");
    fillDiv.style.width = (j.progress * 100).toFixed(1) + "%";
    bar.appendChild(fillDiv);
    td.appendChild(bar);
    td.appendChild(document.createTextNode(" " + Math.round(j.progress * 100) + "%"));
    cell(tr, j.tasks_total == null ? "…" : j.tasks_done + " / " + j.tasks_total, "num");
    cell(tr, j.total_rows == null ? "" : j.total_rows.toLocaleString("en-US"), "num");
    cell(tr, number(j.rows_per_s, 0), "num rate");
    cell(tr, number(j.mb_per_s, 1), "num mbs");
    cell(tr, duration(j.elapsed_s), "num elapsed");
    cell(tr, duration(j.eta_s), "num eta");
    cell(tr, j.ratio == null ? "" : j.ratio.toFixed(1) + "×", "num ratio");
    cell(tr, "", "spark").appendChild(sparkline(sample(j)));
    cell(tr, j.codec_used || j.codec);
    cell(tr, j.source + " → " + j.destination);
    cell(tr, j.error || "");
    body.appendChild(tr);
  }
}
const TOKEN_KEY = "${TOKEN_KEY}";
function token() {
  try { return localStorage.getItem(TOKEN_KEY) || ""; } catch { return ""; }
}
function get(path) {
  const t = token();
  return fetch(path, t ? { headers: { authorization: "Bearer " + t } } : {});
}
document.getElementById("login").addEventListener("submit", (e) => {
  e.preventDefault();
  const t = document.getElementById("token").value.trim();
  try { localStorage.setItem(TOKEN_KEY, t); } catch { /* private mode: not kept */ }
  document.getElementById("token").value = "";
  document.getElementById("login").hidden = true;
});
document.getElementById("logout").addEventListener("click", () => {
  try { localStorage.removeItem(TOKEN_KEY); } catch { /* nothing kept */ }
});
async function refresh() {
  try {
    const [w, j] = await Promise.all([get("workers"), get("jobs")]);
    const denied = w.status === 401 || j.status === 401;
    document.getElementById("login").hidden = !denied;
    document.getElementById("logout").hidden = token() === "";
    if (denied) {
      await Promise.all([w.body && w.body.cancel(), j.body && j.body.cancel()]);
      throw new Error(token() ? "the token was refused (expired or revoked?)" : "sign in with a token");
    }
    if (!w.ok || !j.ok) throw new Error("HTTP " + w.status + "/" + j.status);
    drawWorkers(await w.json());
    drawJobs(await j.json());
    document.getElementById("updated").textContent = "updated " + new Date().toLocaleTimeString();
  } catch (err) {
    document.getElementById("updated").textContent = "cannot read the master: " + err.message;
  } finally {
    setTimeout(refresh, 1000);
  }
}
refresh();
</script>
</body>
</html>
`;
