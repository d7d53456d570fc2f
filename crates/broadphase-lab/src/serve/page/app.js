// The lab's page: settings, stepping, the view, the figures and the walkthrough. Everything
// is computed by the server (`bplab serve`) through its JSON API; the page only draws.
"use strict";

const $ = (id) => document.getElementById(id);
const fmt = (v) => (v === null || v === undefined ? "-" : Number(v).toLocaleString("en-US"));
const lab = { id: null, state: null, playing: false, busy: false, times: [], compare: new Map() };

function status(text, error) {
  $("status").textContent = text;
  $("status").className = error ? "error" : "";
}

// One API call; a 4xx or 5xx throws the server's message.
async function api(method, path, body) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  if (response.status === 204) return null;
  const json = await response.json().catch(() => ({ error: response.statusText }));
  if (!response.ok) throw new Error(json.error || response.statusText);
  return json;
}

function settings() {
  const number = (id) => ($(id).value === "" ? null : Number($(id).value));
  return {
    scene: $("scene").value,
    n: number("n"),
    strategy: $("strategy").value,
    cell_size: number("cell-size"),
    radix_bits: Number($("radix-bits").value),
    schedule: $("schedule").value,
    keep_cells: $("keep-cells").checked,
    threads: number("threads"),
    seed: number("seed") ?? 1,
  };
}

// Runs one piece of work at a time; errors go to the status line.
async function exclusive(work) {
  if (lab.busy) return;
  lab.busy = true;
  try {
    await work();
  } catch (e) {
    status(e.message, true);
    pause();
  } finally {
    lab.busy = false;
  }
}

async function apply() {
  await exclusive(async () => {
    status("Building the scene…");
    const body = settings();
    const state = lab.id === null
      ? await api("POST", "/api/sessions", body)
      : await api("PUT", `/api/sessions/${lab.id}`, body).catch(async (e) => {
          if (!/no session/.test(e.message)) throw e;
          return api("POST", "/api/sessions", body);
        });
    lab.id = state.id;
    lab.times = [];
    show(state);
    await refreshView();
    clearWalk();
    status(`Frame 0 built: ${state.settings.strategy}, ${fmt(state.settings.n)} objects.`);
  });
}

async function step() {
  if (lab.id === null) return apply();
  await exclusive(async () => {
    const state = await api("POST", `/api/sessions/${lab.id}/step`, { frames: 1 });
    show(state);
    await refreshView();
    status(`Frame ${state.figures.frame} stepped.`);
  });
}

function show(state) {
  lab.state = state;
  const f = state.figures;
  $("session").textContent = `session ${state.id}`;
  $("fig-frame").textContent = f.frame;
  for (const key of ["brute_force_pairs", "cell_ids", "home_cells", "phantom_cells",
    "collision_cells", "cells_tested", "radix_passes", "candidate_pairs", "pairs"]) {
    $("fig-" + key.replace(/_/g, "-")).textContent = fmt(f[key]);
  }
  $("fig-frame-ms").textContent = f.frame_ms.toFixed(3);
  $("fig-cell-size").textContent = state.cell_size_used === null ? "-" : state.cell_size_used.toPrecision(4);
  lab.times.push(...state.frame_ms);
  lab.times = lab.times.slice(-120);
  drawChart();
  remember(state);
}

// The comparison table: one row per combination of settings, its latest figures.
function remember(state) {
  const s = state.settings;
  const key = `${s.scene} ${fmt(s.n)} ${s.strategy}` +
    (s.strategy === "grid" ? ` cell ${state.cell_size_used?.toPrecision(3)} r${s.radix_bits} ${s.schedule}` : "") +
    (s.strategy === "sweep" ? ` r${s.radix_bits}` : "");
  const f = state.figures;
  lab.compare.set(key, [fmt(f.candidate_pairs), fmt(f.pairs), fmt(f.collision_cells), fmt(f.radix_passes),
    f.frame > 0 ? f.frame_ms.toFixed(3) : "-"]);
  const body = $("compare").querySelector("tbody");
  body.textContent = "";
  for (const [k, cells] of lab.compare) {
    const tr = document.createElement("tr");
    const th = document.createElement("th");
    th.textContent = k;
    tr.appendChild(th);
    for (const c of cells) {
      const td = document.createElement("td");
      td.textContent = c;
      tr.appendChild(td);
    }
    body.appendChild(tr);
  }
}

function drawChart() {
  const c = $("chart"), g = c.getContext("2d");
  g.clearRect(0, 0, c.width, c.height);
  if (lab.times.length === 0) return;
  const max = Math.max(...lab.times) * 1.1 || 1;
  g.strokeStyle = "#1f5fa8";
  g.beginPath();
  lab.times.forEach((t, i) => {
    const x = (i / Math.max(1, 119)) * (c.width - 40) + 36;
    const y = c.height - 12 - (t / max) * (c.height - 20);
    if (i === 0) g.moveTo(x, y); else g.lineTo(x, y);
  });
  g.stroke();
  g.fillStyle = "#5b6475";
  g.font = "10px sans-serif";
  g.fillText(max.toFixed(2), 0, 10);
  g.fillText("0", 0, c.height - 12);
}

async function refreshView() {
  if (lab.id === null) return;
  const v = await api("GET", `/api/sessions/${lab.id}/view?plane=${$("plane").value}&max=3000`);
  const c = $("view"), g = c.getContext("2d");
  g.clearRect(0, 0, c.width, c.height);
  const [u0, v0, u1, v1] = v.bounds;
  const scale = (c.width - 20) / Math.max(u1 - u0, v1 - v0, 1e-6);
  const X = (u) => 10 + (u - u0) * scale;
  const Y = (w) => c.height - 10 - (w - v0) * scale;
  if (v.cell_size > 0) {
    g.fillStyle = "rgba(255, 170, 0, 0.35)";
    const s = v.cell_size * scale;
    for (const [cu, cv] of v.cells) g.fillRect(X(cu * v.cell_size), Y((cv + 1) * v.cell_size), s, s);
  }
  g.lineWidth = 1;
  for (let i = 0; i < v.overlapping.length; i++) {
    const [a, b, cc, d] = v.boxes.slice(4 * i, 4 * i + 4);
    const x = X(a), y = Y(d), w = Math.max(1, (cc - a) * scale), h = Math.max(1, (d - b) * scale);
    if (v.overlapping[i]) {
      g.fillStyle = "rgba(214, 39, 40, 0.55)";
      g.fillRect(x, y, w, h);
    }
    g.strokeStyle = "rgba(56, 103, 168, 0.8)";
    g.strokeRect(x, y, w, h);
  }
  $("view-note").textContent = `${fmt(v.overlapping.length)} of ${fmt(v.total)} boxes drawn; ` +
    `${fmt(v.overlapping_total)} overlap another` +
    (v.cell_size > 0 ? `; ${fmt(v.cells_total)} columns hold a collision cell` : "");
}

function play() {
  if (lab.playing) return pause();
  lab.playing = true;
  $("play").textContent = "Pause";
  const loop = async () => {
    if (!lab.playing) return;
    await step();
    if (lab.playing) setTimeout(loop, 30);
  };
  loop();
}

function pause() {
  lab.playing = false;
  $("play").textContent = "Play";
}

// The walkthrough: each stage asks for a guess, then reveals the figure and its data.
function clearWalk() {
  $("stages").textContent = "";
  $("walk-frame").textContent = "";
}

function stage(key, question, answer, details) {
  const div = document.createElement("div");
  div.className = "stage";
  div.id = "stage-" + key;
  div.innerHTML = `<div><b></b></div>
    <label>Your guess <input type="number" id="guess-${key}"></label>
    <button type="button" id="reveal-${key}">Reveal</button>
    <div class="answer" id="answer-${key}">Answer: <span id="walk-${key}"></span>
      <span class="verdict" id="verdict-${key}"></span><div class="details"></div></div>`;
  div.querySelector("b").textContent = question;
  div.querySelector(`#walk-${key}`).textContent = fmt(answer);
  if (details) div.querySelector(".details").appendChild(details);
  div.querySelector("button").addEventListener("click", () => {
    const guess = Number(div.querySelector("input").value);
    const verdict = div.querySelector(".verdict");
    if (div.querySelector("input").value === "") verdict.textContent = "(no guess)";
    else {
      const off = answer === 0 ? (guess === 0 ? 0 : 100) : Math.round((100 * (guess - answer)) / answer);
      verdict.textContent = off === 0 ? "exactly right" : `your guess is ${off > 0 ? "+" : ""}${off}% off`;
    }
    div.classList.add("revealed");
  });
  $("stages").appendChild(div);
}

function text(content, className) {
  const el = document.createElement("div");
  el.className = className || "";
  el.textContent = content;
  return el;
}

function entryLines(entries, keyBits) {
  return entries.map((e) => `object ${String(e.object).padStart(6)}  cell (${e.cell.join(", ")})  ` +
    `${e.home ? "home   " : "phantom"}  key ${e.key.toString(2).padStart(keyBits, "0")}`).join("\n");
}

async function loadWalk() {
  if (lab.id === null) return;
  await exclusive(async () => {
    const w = await api("GET", `/api/sessions/${lab.id}/walkthrough`);
    clearWalk();
    const s = lab.state.settings;
    $("walk-frame").textContent = `frame ${w.frame}, fine cell ${w.cell_size.toPrecision(4)}, ` +
      `${w.level_cell_sizes.length} level(s), schedule ${w.schedule}`;
    stage("brute", `How many pairs would brute force test for ${fmt(s.n)} objects?`, lab.state.figures.brute_force_pairs);

    const written = document.createElement("div");
    written.appendChild(text(`${fmt(w.home_cells)} home cells (one per object per level it lives on) and ` +
      `${fmt(w.phantom_cells)} phantom cells. The first ids written, in object order:`));
    written.appendChild(text(entryLines(w.written, w.key_bits), "entries"));
    stage("cell-ids", "How many cell ids do the objects write (home and phantom)?", w.grid.cell_ids, written);

    const sort = document.createElement("div");
    sort.appendChild(text(`The grid's own sort bins the ids into buckets (its first pass), then sorts each ` +
      `bucket by ${w.radix_bits}-bit digits; ${fmt(w.grid.radix_passes_skipped)} pass(es) skipped where every ` +
      `key had the same digit. Below, the ${w.key_bits}-bit keys (cell type, then coordinates) sorted one ` +
      `${w.radix_bits}-bit digit per pass, least significant first:`));
    const buttons = document.createElement("div");
    buttons.className = "passes";
    const list = text("", "entries");
    w.passes.forEach((p, i) => {
      const b = document.createElement("button");
      b.type = "button";
      b.id = `pass-${i + 1}`;
      b.textContent = `after pass ${i + 1} (bits ${p.bits[0]}–${p.bits[1] - 1})${p.skipped ? ", skipped" : ""}`;
      b.addEventListener("click", () => {
        buttons.querySelectorAll("button").forEach((x) => x.classList.remove("current"));
        b.classList.add("current");
        list.textContent = entryLines(p.entries, w.key_bits);
      });
      buttons.appendChild(b);
    });
    const before = document.createElement("button");
    before.type = "button";
    before.textContent = "before sorting";
    before.addEventListener("click", () => { list.textContent = entryLines(w.written, w.key_bits); });
    buttons.prepend(before);
    list.textContent = entryLines(w.written, w.key_bits);
    sort.appendChild(buttons);
    sort.appendChild(list);
    stage("passes", `How many radix passes does the grid's sort take with ${w.radix_bits}-bit digits?`,
      w.grid.radix_passes, sort);

    const cells = document.createElement("div");
    cells.appendChild(text(`Cells holding two boxes or more, one of them living there. ` +
      `${fmt(w.grid.cells_tested)} of them hold a box that changed and are tested. The first ones:`));
    cells.appendChild(text(w.cells.map((c) => `level ${c.level} cell (${c.cell.join(", ")}) type ${c.cell_type}: ` +
      `objects ${c.objects.join(", ")}; ${c.candidate_pairs} pair(s) tested here`).join("\n"), "entries"));
    stage("collision-cells", "How many collision cells?", w.grid.collision_cells, cells);

    const parity = document.createElement("table");
    parity.innerHTML = "<thead><tr><th>pass (cell type)</th><th>collision cells</th><th>candidate pairs</th><th>pairs found</th></tr></thead>";
    const body = document.createElement("tbody");
    for (const p of w.parity) {
      const tr = document.createElement("tr");
      for (const v of [`${p.cell_type + 1} (type ${p.cell_type})`, fmt(p.cells), fmt(p.candidate_pairs), fmt(p.pairs)]) {
        const td = document.createElement("td");
        td.textContent = v;
        tr.appendChild(td);
      }
      body.appendChild(tr);
    }
    parity.appendChild(body);
    const passes = document.createElement("div");
    passes.appendChild(text(`A pair is tested in one cell only: the one holding the lower corner of the two ` +
      `boxes' cells. The cells of one pass are never neighbours, so a solver could update all of them at once. ` +
      `The grid found ${fmt(w.grid.pairs_found)} overlapping pair(s) among its candidates.`));
    passes.appendChild(parity);
    stage("candidates", "How many candidate pairs do the eight parity passes test?", w.grid.candidate_pairs, passes);
    status(`Walkthrough of frame ${w.frame} loaded.`);
  });
}

const presets = {
  ex1: { n: 12000, strategy: "brute", scene: "uniform" },
  ex3a: { n: 3000, strategy: "grid", scene: "particles", cell: "" },
  ex3b: { n: 20000, strategy: "grid", scene: "sizes", cell: "" },
};

async function init() {
  try {
    const options = await api("GET", "/api/options");
    for (const [name, description] of options.scenes) {
      const o = document.createElement("option");
      o.value = name;
      o.textContent = name;
      o.title = description;
      $("scene").appendChild(o);
    }
    const d = options.defaults;
    $("scene").value = d.scene;
    $("n").value = d.n;
    $("n").max = options.max_n;
    $("threads").max = options.max_threads;
  } catch (e) {
    status(e.message, true);
    return;
  }
  $("apply").addEventListener("click", apply);
  $("step").addEventListener("click", step);
  $("play").addEventListener("click", play);
  $("plane").addEventListener("change", () => exclusive(refreshView));
  $("walk-load").addEventListener("click", loadWalk);
  document.querySelectorAll("[data-preset]").forEach((b) => b.addEventListener("click", () => {
    const p = presets[b.dataset.preset];
    $("n").value = p.n;
    $("strategy").value = p.strategy;
    $("scene").value = p.scene;
    if (p.cell !== undefined) $("cell-size").value = p.cell;
    apply();
  }));
  await apply();
}

init();
