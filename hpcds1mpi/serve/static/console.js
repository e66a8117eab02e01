// hpcds1mpi console: asks the service for a recommendation and shows it. No libraries, no CDN.
// Every value from the server is put in the page as text (textContent, SVG attributes), never
// as HTML, so a workload or script line cannot become markup. The token lives only in this
// tab (sessionStorage); a "#token=..." fragment is read once and removed from the address bar.
"use strict";

const $ = (id) => document.getElementById(id);
const SVGNS = "http://www.w3.org/2000/svg";
let token = sessionStorage.getItem("hpcds1mpi-token") || "";

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (cls) node.className = cls;
  return node;
}

// Three significant digits; the unit is chosen for the rounded value (0.9996 s is "1.00 s", not
// "1.00e+3 ms"), and only the largest unit may reach 1000 ("1000 h", not "1.00e+3 h").
const rounded = (x) => Number(x.toPrecision(3));
const digits = (x) => (Math.abs(rounded(x)) >= 1000 && Math.abs(rounded(x)) < 1e6) ? rounded(x).toFixed(0) : x.toPrecision(3);

function fmtTime(s) {
  if (s === null || s === undefined || !isFinite(s)) return "?";
  if (rounded(s) < 1) return digits(s * 1000) + " ms";
  if (rounded(s) < 120) return digits(s) + " s";
  if (rounded(s) < 7200) return digits(s / 60) + " min";
  return digits(s / 3600) + " h";
}

function fmtEnergy(j) {
  if (j === null || j === undefined || !isFinite(j)) return "?";
  if (rounded(j) >= 1e6) return digits(j / 1e6) + " MJ";
  if (rounded(j) >= 1e3) return digits(j / 1e3) + " kJ";
  return digits(j) + " J";
}

// Where a row's values are its runs at this size, as recommend prints it after the pick's
// interval (" measured (1 run at this size)"); "" where they are the model's (s40 tester D11).
function measuredHere(r) {
  const n = r.measured_runs || 0;
  return n > 0 ? " measured (" + n + " run" + (n !== 1 ? "s" : "") + " at this size)" : "";
}

// What a table row's values are: its runs at this size, or the model's prediction.
function valuesFrom(r) {
  return measuredHere(r).trim() || (r.unmeasured ? "predicted, a level never measured" : "predicted");
}

function configText(r) {
  const s = (n, word) => n + " " + word + (n > 1 ? "s" : "");
  return s(r.nodes, "node") + " × " + s(r.ranks_per_node, "rank") + " × " +
    s(r.threads, "thread") + ", " + r.device + ", " + r.precision;
}

async function api(method, path, body) {
  const headers = { "Authorization": "Bearer " + token };
  const init = { method: method, headers: headers, cache: "no-store" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch (e) {  // no answer at all: the browser's own words ("Failed to fetch") say nothing
    const err = new Error("Cannot reach the server at " + location.origin + " (is hpcds1mpi " +
      "serve still running?); nothing was answered: start it again, then retry.");
    err.status = 0;
    throw err;
  }
  let data = null;
  try { data = await res.json(); } catch (e) { data = null; }
  if (!res.ok) {
    const why = data && data.error ? data.error : res.status + " " + res.statusText;
    const err = new Error(why);
    err.status = res.status;
    throw err;
  }
  return data;
}

function setToken(value) {
  token = (value || "").trim();
  if (token) sessionStorage.setItem("hpcds1mpi-token", token);
  else sessionStorage.removeItem("hpcds1mpi-token");
}

async function connect(problem) {
  const status = $("token-status");
  if (problem) { $("auth").hidden = false; status.textContent = problem; return; }
  if (!token) { status.textContent = "Paste the token to start."; return; }
  try {
    const models = await api("GET", "/v1/models");
    status.textContent = "";
    $("auth").hidden = true;
    $("who").textContent = "model " + models.model + " · energy " + models.energy;
    const list = $("workloads");
    list.replaceChildren(...models.workloads.map((w) => { const o = el("option"); o.value = w; return o; }));
    const part = $("partition");
    part.replaceChildren(el("option", "any allowed"));
    part.firstChild.value = "";
    for (const p of models.places) { const o = el("option", p); o.value = p; part.appendChild(o); }
  } catch (e) {
    $("auth").hidden = false;
    status.textContent = e.status === 401 ? "The server refused this token." :
      e.status === 0 ? e.message : "The server could not list its models: " + e.message;
  }
}

function numberOrNull(id, integer) {
  const text = $(id).value.trim();
  if (!text) return null;
  const n = Number(text);
  return integer ? Math.trunc(n) : n;
}

function question() {
  const q = {
    workload: $("workload").value.trim(),
    size: Math.trunc(Number($("size").value)),
    objective: $("objective").value,
  };
  if ($("emit").value) q.emit = $("emit").value;  // "": no script, the answer only
  if ($("partition").value) q.partition = [$("partition").value];
  if ($("device").value) q.device = $("device").value;
  const maxNodes = numberOrNull("max_nodes", true);
  if (maxNodes !== null) q.max_nodes = maxNodes;
  const deadline = numberOrNull("deadline", false);
  if (deadline !== null) q.deadline = deadline;
  const budget = numberOrNull("energy_budget", false);
  if (budget !== null) q.energy_budget = budget;
  const program = $("program").value.trim();
  if (program) q.program = program;
  const jobName = $("job_name").value.trim();
  if (jobName && q.emit) q.job_name = jobName;
  return q;
}

// The form's labels for the request keys the API's lines name ('max_nodes', "deadline must
// be > 0"): a line about the question is said in the words on the page.
const FIELDS = { workload: "Workload", size: "Problem size", partition: "Partition",
  objective: "Objective", device: "Device", emit: "Script for", max_nodes: "At most nodes",
  deadline: "Deadline", energy_budget: "Energy budget", program: "Program", job_name: "Job name" };

function inFormWords(text, q) {
  const label = (key) => "“" + FIELDS[key] + "”";
  const named = (key) => Object.hasOwn(FIELDS, key) && key !== (q && q.workload);  // not a workload called "size"
  return String(text)
    .replace(/drop 'emit'/g, "set " + label("emit") + " to none")
    .replace(/'([a-z_]+)'/g, (m, key) => named(key) ? label(key) : m)
    .replace(/^([a-z_]+)(?=(?: must | is | has |: ))/, (m, key) => named(key) ? label(key) : m);
}

// Deadline and energy budget must be more than 0, as the server checks (min="0" allows 0).
// Checked as typed and again on the button's click, which comes before the browser's own
// check of the form (a value set without an input event is checked too).
function mustBePositive(id) {
  const box = $(id);
  const check = () => box.setCustomValidity(
    box.value.trim() !== "" && !(Number(box.value) > 0) ? "Enter a number above 0." : "");
  for (const [target, kind] of [[box, "input"], [box, "change"], [$("submit"), "click"]]) target.addEventListener(kind, check);
  check();
}

function showRows(table, rows) {
  const body = table.tBodies[0];
  body.replaceChildren(...rows.map((r) => {
    const tr = el("tr");
    for (const v of [r.partition, r.nodes, r.ranks_per_node, r.threads, r.device, r.precision,
      fmtTime(r.runtime_s), fmtEnergy(r.energy_j), valuesFrom(r)]) tr.appendChild(el("td", v));
    return tr;
  }));
}

function svg(tag, attrs, text) {
  const node = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

const plottable = (r) => isFinite(r.runtime_s) && isFinite(r.energy_j) && r.runtime_s > 0 && r.energy_j > 0;

// The front as a scatter (runtime across, energy up, log axes when a range spans 10x), the
// alternatives as grey rings behind it for context, the pick in red.
function plotFront(rows, alternatives, pick) {
  const box = $("plot");
  box.replaceChildren();
  const pts = rows.filter(plottable), alts = (alternatives || []).filter(plottable);
  // A measured pick kept ahead of a never-measured layout that dominates it is off the front:
  // drawn all the same (s34: the pick had vanished from the plot).
  const offFront = pick && plottable(pick) && !pts.some((p) => p.pick) ? [pick] : [];
  if (!pts.length) { box.appendChild(el("p", "No front: nothing was picked.", "muted")); return false; }
  const W = 560, H = 300, L = 64, R = 30, T = 12, B = 42;
  const axis = (vals) => {
    let lo = Math.min(...vals), hi = Math.max(...vals);
    const log = hi / lo > 10;
    const f = log ? Math.log10 : (x) => x;
    let a = f(lo), b = f(hi);
    if (a === b) { a -= 0.5 * (Math.abs(a) || 1) * (log ? 0.2 : 0.1); b += 0.5 * (Math.abs(b) || 1) * (log ? 0.2 : 0.1); }
    const pad = (b - a) * 0.06;
    return { f: f, a: a - pad, b: b + pad, log: log };
  };
  const all = pts.concat(alts, offFront);
  const ax = axis(all.map((p) => p.runtime_s)), ay = axis(all.map((p) => p.energy_j));
  const X = (v) => L + (ax.f(v) - ax.a) / (ax.b - ax.a) * (W - L - R);
  const Y = (v) => H - B - (ay.f(v) - ay.a) / (ay.b - ay.a) * (H - T - B);
  const s = svg("svg", { viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": "runtime-energy front" });
  s.appendChild(svg("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, class: "axis" }));
  s.appendChild(svg("line", { x1: L, y1: T, x2: L, y2: H - B, class: "axis" }));
  for (let k = 0; k <= 4; k++) {
    const vx = ax.a + (ax.b - ax.a) * k / 4, vy = ay.a + (ay.b - ay.a) * k / 4;
    const rx = ax.log ? Math.pow(10, vx) : vx, ry = ay.log ? Math.pow(10, vy) : vy;
    s.appendChild(svg("text", { x: X(rx), y: H - B + 16, "text-anchor": "middle" }, fmtTime(rx)));
    s.appendChild(svg("text", { x: L - 6, y: Y(ry) + 4, "text-anchor": "end" }, fmtEnergy(ry)));
  }
  s.appendChild(svg("text", { x: (L + W - R) / 2, y: H - 6, "text-anchor": "middle" }, "runtime" + (ax.log ? " (log)" : "")));
  s.appendChild(svg("text", { x: 12, y: (T + H - B) / 2, transform: "rotate(-90 12 " + (T + H - B) / 2 + ")", "text-anchor": "middle" }, "energy" + (ay.log ? " (log)" : "")));
  for (const p of alts) {
    const ring = svg("circle", { cx: X(p.runtime_s), cy: Y(p.energy_j), r: 4, class: "alt" });
    ring.appendChild(svg("title", {}, "alternative: " + configText(p) + ": " + fmtTime(p.runtime_s) + ", " + fmtEnergy(p.energy_j)));
    s.appendChild(ring);
  }
  const sorted = pts.slice().sort((p, q) => p.runtime_s - q.runtime_s);
  s.appendChild(svg("polyline", { class: "front", points: sorted.map((p) => X(p.runtime_s) + "," + Y(p.energy_j)).join(" ") }));
  for (const p of sorted) {
    const dot = svg("circle", { cx: X(p.runtime_s), cy: Y(p.energy_j), r: p.pick ? 6 : 4, class: p.pick ? "pt pick" : "pt" });
    dot.appendChild(svg("title", {}, configText(p) + ": " + fmtTime(p.runtime_s) + ", " + fmtEnergy(p.energy_j)));
    s.appendChild(dot);
  }
  for (const p of offFront) {
    const dot = svg("circle", { cx: X(p.runtime_s), cy: Y(p.energy_j), r: 6, class: "pick" });
    dot.appendChild(svg("title", {}, "pick (off the predicted front: a never-measured layout is predicted better): " + configText(p) + ": " + fmtTime(p.runtime_s) + ", " + fmtEnergy(p.energy_j)));
    s.appendChild(dot);
  }
  box.appendChild(s);
  return true;
}

function show(data, scriptNote) {
  $("error").hidden = true;
  $("result").hidden = false;
  const v = data.verdict;
  const badge = $("verdict");
  badge.textContent = v.verdict;
  badge.className = "badge " + v.verdict;
  const pick = data.pick;
  if (pick) {
    $("pick-config").textContent = configText(pick) + " on " + (pick.cluster ? pick.cluster + "/" : "") + pick.partition;
    $("pick-numbers").textContent = "predicted runtime " + fmtTime(pick.runtime_s) + " (" + fmtTime(pick.runtime_lo) + "–" +
      fmtTime(pick.runtime_hi) + ")" + measuredHere(pick) + ", energy " + fmtEnergy(pick.energy_j) + " (" + fmtEnergy(pick.energy_lo) + "–" +
      fmtEnergy(pick.energy_hi) + ", " + data.energy + "), confidence " +
      (pick.confidence === null ? "?" : pick.confidence.toFixed(2)) + (pick.confidence_calibrated ? " (calibrated)" : " (uncalibrated)");
  } else {
    $("pick-config").textContent = "no settings guessed: the guard escalated this job";
    $("pick-numbers").textContent = "";
  }
  // Where one run may land: the workload's repeats scattered wider than the model's interval.
  const one = pick && pick.single_run;
  $("single-run").hidden = !one;
  $("single-run").textContent = one ? one.line : "";  // recommend's own line (s38 tester B3)
  const runtime = data.runtime && data.runtime.line;  // which time a program's model learned
  $("runtime-note").hidden = !runtime;
  $("runtime-note").textContent = runtime || "";
  $("reasons").replaceChildren(...v.reasons.map((r) => el("li", r)));
  $("notes").replaceChildren(...(data.notes || []).map((n) => el("li", "note: " + n)));
  const leftOut = data.left_out || [];
  $("left-out").hidden = leftOut.length === 0;
  $("left-out-heading").textContent = data.left_out_heading || "Left out";  // recommend's heading
  $("left-out-lines").replaceChildren(...leftOut.map((t) => el("li", t)));
  $("rejected").replaceChildren(...data.partitions.filter((p) => p.status !== "picked" && p.reason)
    .map((p) => el("p", "✗ " + (p.cluster ? p.cluster + "/" : "") + p.partition + ": " + p.reason)));
  showRows($("alternatives"), data.alternatives);
  $("alternatives-label").textContent = "(energy " + data.energy + ")";
  $("energy-label").textContent = "(energy " + data.energy + ")";
  $("plot-legend").hidden = !plotFront(data.front, data.alternatives, data.pick);
  const cal = data.calibration || [];
  $("calibration").hidden = cal.length === 0;
  $("calibration-steps").replaceChildren(...cal.map((c) => el("li", c.label + ": " + c.reason)));
  $("script").textContent = data.script || "";
  $("script").hidden = $("copy").hidden = !data.script;
  $("script-note").hidden = !scriptNote;
  $("script-note").textContent = scriptNote || "";
  $("copied").textContent = "";
}

async function ask(event) {
  event.preventDefault();
  $("answer").hidden = false;
  $("submit").disabled = true;
  $("busy").textContent = "asking…";
  const q = question();
  try {
    try {
      show(await api("POST", "/v1/recommend", q), q.emit ? "" : "No script asked (Script for: none).");
    } catch (e) {
      // The API refuses a question whose script cannot be written (422, as the command exits
      // 2): show the answer without a script, and why there is none.
      if (e.status !== 422 || !q.emit) throw e;
      const bare = Object.assign({}, q);
      delete bare.emit;
      delete bare.program;
      delete bare.job_name;
      show(await api("POST", "/v1/recommend", bare), inFormWords(e.message, q));
    }
  } catch (e) {
    $("result").hidden = true;
    $("error").hidden = false;
    $("error").textContent = e.status ? inFormWords(e.message, q) : e.message;
    if (e.status === 401) { $("auth").hidden = false; $("token-status").textContent = "The server refused this token."; }
  } finally {
    $("submit").disabled = false;
    $("busy").textContent = "";
  }
}

async function copyScript() {
  const text = $("script").textContent;
  if (!text) { $("copied").textContent = "no script to copy"; return; }
  let copied = true;
  try {
    await navigator.clipboard.writeText(text);
  } catch (e) {  // no clipboard API outside a secure context: select and copy instead
    const range = document.createRange();
    range.selectNodeContents($("script"));
    const sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
    copied = document.execCommand("copy");
  }
  $("copied").textContent = copied ? "copied" : "the browser did not copy: the script is selected, copy it with Ctrl+C";
}

// A "#token=..." fragment: removed at once, so it is never left in the address bar, then taken.
// The token is all that follows "token=" (a token may hold "&" or "#"), percent-decoded.
// Returns null where there is none, "" when taken, else why it could not be read.
function tokenFromFragment() {
  const m = /(?:^#|&)token=(.*)$/s.exec(location.hash);
  if (!m) return null;
  history.replaceState(null, "", location.pathname + location.search);
  let value;
  try {
    value = decodeURIComponent(m[1]).trim();
  } catch (e) {  // a "%" not followed by two hex digits (a raw "%" in the token)
    setToken("");
    return "The token in the address could not be read (a % in it must be written %25); paste the token here.";
  }
  setToken(value);
  return value ? "" : "The address held #token= with no token after it; paste the token here.";
}

window.addEventListener("hashchange", () => { const got = tokenFromFragment(); if (got !== null) connect(got); });

document.addEventListener("DOMContentLoaded", () => {
  // The handlers first: nothing the address holds may leave the form without them.
  $("token-form").addEventListener("submit", (e) => { e.preventDefault(); setToken($("token").value); $("token").value = ""; connect(); });
  $("ask").addEventListener("submit", ask);
  $("copy").addEventListener("click", copyScript);
  mustBePositive("deadline");
  mustBePositive("energy_budget");
  connect(tokenFromFragment());
});
