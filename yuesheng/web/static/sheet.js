// The director's page: select, highlight and zoom. Everything about the rite comes from the JSON island
// and the markup; nothing here computes the rite.
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("rite-data").textContent);
  const cues = data.cues;
  const byId = new Map(cues.map((c, i) => [c.id, Object.assign({ index: i }, c)]));
  const SVGNS = "http://www.w3.org/2000/svg";
  const tl = document.getElementById("timeline");
  const plan = document.getElementById("plan");
  const detail = document.getElementById("cue-detail");
  const labelWidth = Number(tl.dataset.labelWidth);
  let view = { t0: 0, t1: data.duration };
  let selected = null;
  let width = 0; // the plot's width in pixels, measured once per layout

  // --- the timeline: lay out for the current view -------------------------------------------------
  const blocks = Array.from(tl.querySelectorAll("#plot .block"));
  const marks = Array.from(tl.querySelectorAll("#plot .mark"));
  const plotWidth = () => width || (width = Math.max(200, tl.clientWidth - labelWidth - 10));
  const xOf = (t) => labelWidth + (t - view.t0) / (view.t1 - view.t0) * width;

  function hms(s) {
    s = Math.round(s);
    const h = Math.floor(s / 3600), m = Math.floor(s % 3600 / 60), sec = s % 60;
    return h + ":" + String(m).padStart(2, "0") + ":" + String(sec).padStart(2, "0");
  }

  function axis() {
    const g = document.getElementById("axis");
    g.replaceChildren();
    const span = view.t1 - view.t0;
    const steps = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200];
    const step = steps.find((s) => span / s <= plotWidth() / 90) || 7200;
    for (let t = Math.ceil(view.t0 / step) * step; t <= view.t1; t += step) {
      const x = xOf(t);
      const line = document.createElementNS(SVGNS, "line");
      line.setAttribute("x1", x); line.setAttribute("x2", x); line.setAttribute("y1", 0); line.setAttribute("y2", 5);
      const text = document.createElementNS(SVGNS, "text");
      text.setAttribute("x", x + 2); text.setAttribute("y", 14); text.textContent = hms(t);
      g.append(line, text);
    }
  }

  function layout() {
    width = 0;
    const w = plotWidth();
    document.getElementById("plot-clip-rect").setAttribute("width", w);
    for (const b of blocks) {
      const x0 = xOf(Number(b.dataset.t0)), x1 = xOf(Number(b.dataset.t1));
      const rect = b.querySelector("rect"), text = b.querySelector("text");
      rect.setAttribute("x", x0);
      rect.setAttribute("width", Math.max(1, x1 - x0));
      const left = Math.max(x0, labelWidth);
      text.setAttribute("x", left + 2);
      const room = Math.min(x1, labelWidth + w) - left;
      text.style.display = room > text.textContent.length * 11 + 4 ? "" : "none";
    }
    for (const m of marks) {
      const x = xOf(Number(m.dataset.t));
      const circle = m.querySelector("circle"), line = m.querySelector("line"), text = m.querySelector("text");
      if (circle) circle.setAttribute("cx", x);
      if (line) { line.setAttribute("x1", x); line.setAttribute("x2", x); }
      if (text) { text.setAttribute("x", x + 2); text.style.display = (view.t1 - view.t0) < 900 ? "" : "none"; }
    }
    axis();
  }

  function zoomTo(t0, t1) {
    const min = 2;
    if (t1 - t0 < min) { const mid = (t0 + t1) / 2; t0 = mid - min / 2; t1 = mid + min / 2; }
    const span = Math.min(t1 - t0, data.duration);
    t0 = Math.max(0, Math.min(t0, data.duration - span));
    view = { t0: t0, t1: t0 + span };
    layout();
  }

  function zoomBy(factor, at) {
    const span = view.t1 - view.t0;
    const centre = at === undefined ? (view.t0 + view.t1) / 2 : at;
    const share = (centre - view.t0) / span;
    const next = span * factor;
    zoomTo(centre - share * next, centre - share * next + next);
  }

  const zoomSelect = document.getElementById("zoom");
  data.zooms.forEach((z, i) => {
    const o = document.createElement("option");
    o.value = i; o.textContent = z.label + " (" + hms(z.t0) + "–" + hms(z.t1) + ")";
    zoomSelect.append(o);
  });
  zoomSelect.addEventListener("change", () => {
    const z = data.zooms[Number(zoomSelect.value)];
    const pad = (z.t1 - z.t0) * 0.02;
    zoomTo(z.t0 - pad, z.t1 + pad);
  });
  document.getElementById("zoom-in").addEventListener("click", () => zoomBy(0.5));
  document.getElementById("zoom-out").addEventListener("click", () => zoomBy(2));
  document.getElementById("zoom-all").addEventListener("click", () => { zoomSelect.value = "0"; zoomTo(0, data.duration); });
  tl.addEventListener("wheel", (ev) => {
    ev.preventDefault();
    const rect = tl.getBoundingClientRect();
    const t = view.t0 + (ev.clientX - rect.left - labelWidth) / plotWidth() * (view.t1 - view.t0);
    zoomBy(ev.deltaY > 0 ? 1.25 : 0.8, Math.max(view.t0, Math.min(view.t1, t)));
  }, { passive: false });
  let drag = null;
  tl.addEventListener("pointerdown", (ev) => { drag = { x: ev.clientX, t0: view.t0, t1: view.t1, moved: false }; });
  window.addEventListener("pointermove", (ev) => {
    if (!drag) return;
    const dx = ev.clientX - drag.x;
    if (Math.abs(dx) > 3) drag.moved = true;
    if (drag.moved) {
      const dt = dx / plotWidth() * (drag.t1 - drag.t0);
      zoomTo(drag.t0 - dt, drag.t1 - dt);
    }
  });
  window.addEventListener("pointerup", () => { setTimeout(() => { drag = null; }, 0); });
  window.addEventListener("resize", layout);

  // --- the plan -------------------------------------------------------------------------------------
  const positions = new Map();
  document.querySelectorAll("[data-position]").forEach((el) => positions.set(el.dataset.position, el));

  function planView(box) {
    plan.setAttribute("viewBox", box);
    const h = Number(box.split(" ")[3]), w = Number(box.split(" ")[2]);
    const k = Math.min(plan.clientHeight / h, plan.clientWidth / w) || 1;
    plan.style.setProperty("--pf", (11 / k) + "px");
    plan.style.setProperty("--pr", (4 / k) + "px");
    plan.style.setProperty("--ps", (1.2 / k) + "px");
    plan.style.setProperty("--pd", (4 / k) + "px");
  }
  for (const id of ["plan-hall", "plan-whole"]) {
    const button = document.getElementById(id);
    button.addEventListener("click", () => {
      plan.classList.toggle("whole", id === "plan-whole");
      planView(button.dataset.box);
    });
  }
  planView(plan.getAttribute("viewBox"));

  function centre(el) {
    const scale = Number(plan.dataset.scale);
    return [Number(el.dataset.x) * scale, Number(el.dataset.y) * scale];
  }

  function showPlan(cue) {
    for (const el of positions.values()) {
      el.classList.remove("here", "occupied");
      const who = el.querySelector(".who");
      if (who) who.textContent = "";
    }
    for (const [pos, people] of Object.entries(cue.at)) {
      const el = positions.get(pos);
      if (!el) continue;
      el.classList.add("occupied");
      const who = el.querySelector(".who");
      if (who) who.textContent = people.map((p) => data.names[p] || p).join("、");
    }
    for (const pos of cue.here) {
      const el = positions.get(pos);
      if (el) el.classList.add("here");
    }
    const moves = document.getElementById("moves");
    moves.replaceChildren();
    for (const m of cue.moves) {
      const a = positions.get(m.from), b = positions.get(m.to);
      if (!a || !b || a.dataset.x === undefined || b.dataset.x === undefined) continue;
      const [x1, y1] = centre(a), [x2, y2] = centre(b);
      const line = document.createElementNS(SVGNS, "line");
      line.setAttribute("x1", x1); line.setAttribute("y1", y1); line.setAttribute("x2", x2); line.setAttribute("y2", y2);
      line.dataset.who = m.who;
      const title = document.createElementNS(SVGNS, "title");
      title.textContent = (data.names[m.who] || m.who) + ": " + (data.names[m.from] || m.from) + " → " + (data.names[m.to] || m.to);
      line.append(title);
      moves.append(line);
    }
  }

  // --- the details ------------------------------------------------------------------------------------
  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }

  function showDetail(cue) {
    const rows = [
      ["when", cue.start + " – " + cue.end],
      ["duration", cue.dur + " — " + cue.basis],
      ["who", cue.who.join("、") || "—"],
      ["where", cue.where || "—"],
      [cue.music ? "music" : "action", cue.what],
    ];
    if (cue.words) rows.push(["cue words", cue.words]);
    if (cue.music) {
      rows.push(["pieces", cue.pieces.map((p) => p.title + (p.zhong > 1 ? " ×" + p.zhong + " 終" : "") +
        (p.lost ? " (lost: a modern realization sounds)" : "")).join("; ") || "—"]);
      rows.push(["parts", cue.parts.join(" ") || "—"]);
      if (cue.instruments.length) rows.push(["instruments", cue.instruments.join(" ")]);
    }
    if (cue.moves.length) {
      rows.push(["moves", cue.moves.map((m) => (data.names[m.who] || m.who) + ": " +
        (m.from ? (data.names[m.from] || m.from) : "(first placed)") + " → " + (data.names[m.to] || m.to)).join("; ")]);
    }
    if (cue.note) rows.push(["note", cue.note]);
    const dl = el("dl");
    for (const [k, v] of rows) dl.append(el("dt", k), el("dd", v));
    const h = el("h3");
    h.append(el("code", cue.id), document.createTextNode(" · " + cue.section));
    const quote = el("blockquote");
    quote.append(el("span", cue.page, "page"), document.createTextNode(" " + cue.quote));
    const source = el("p", cue.cite, "source");
    detail.replaceChildren(h, dl, quote, source);
  }

  // --- selection --------------------------------------------------------------------------------------
  function select(id, { scroll = true } = {}) {
    const cue = byId.get(id);
    if (!cue) return;
    selected = cue;
    document.querySelectorAll("[data-cue].selected").forEach((e) => e.classList.remove("selected"));
    document.querySelectorAll('[data-cue="' + CSS.escape(id) + '"]').forEach((e) => e.classList.add("selected"));
    if (cue.t1 < view.t0 || cue.t0 > view.t1) {
      const span = view.t1 - view.t0;
      zoomTo(cue.t0 - span / 3, cue.t0 + span * 2 / 3);
    }
    showPlan(cue);
    showDetail(cue);
    const row = document.querySelector('#cues tr[data-cue="' + CSS.escape(id) + '"]');
    if (row && scroll) row.scrollIntoView({ block: "nearest" });
    history.replaceState(null, "", "#" + encodeURIComponent(id));
  }

  document.addEventListener("click", (ev) => {
    if (drag && drag.moved) return;
    const target = ev.target.closest("[data-cue]");
    if (target) select(target.dataset.cue, { scroll: !target.closest("#cues") });
  });
  function visible() {
    return cues.filter((c) => {
      const row = document.querySelector('#cues tr[data-cue="' + CSS.escape(c.id) + '"]');
      return !row || !(row.classList.contains("hidden") || row.parentElement.classList.contains("hidden"));
    });
  }
  document.addEventListener("keydown", (ev) => {
    if (ev.target.closest("select, input, textarea")) return;
    const step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[ev.key];
    if (step) {
      ev.preventDefault();
      const list = visible();
      const at = selected ? list.findIndex((c) => c.id === selected.id) : -1;
      const next = list[Math.max(0, Math.min(list.length - 1, at < 0 ? 0 : at + step))];
      if (next) select(next.id);
    } else if (ev.key === "+" || ev.key === "=") zoomBy(0.5);
    else if (ev.key === "-") zoomBy(2);
    else if (ev.key === "0") zoomTo(0, data.duration);
  });

  // --- the table's filters ----------------------------------------------------------------------------
  const sectionFilter = document.getElementById("filter-section");
  const personFilter = document.getElementById("filter-person");
  function filter() {
    const section = sectionFilter.value, person = personFilter.value;
    let shown = 0;
    document.querySelectorAll("#cues tbody.section").forEach((tbody) => {
      let any = false;
      tbody.querySelectorAll("tr[data-cue]").forEach((row) => {
        const ok = (!section || row.dataset.section === section) && (!person || row.dataset.who.includes(" " + person + " "));
        row.classList.toggle("hidden", !ok);
        if (ok) { any = true; shown += 1; }
      });
      tbody.classList.toggle("hidden", !any);
    });
    document.getElementById("row-count").textContent = shown + " of " + cues.length + " cues";
  }
  sectionFilter.addEventListener("change", filter);
  personFilter.addEventListener("change", filter);

  layout();
  filter();
  const start = decodeURIComponent(location.hash.slice(1));
  if (byId.has(start)) select(start);
  document.documentElement.dataset.ready = "true";
})();
