// mcpl inspect: draws the server's or the surface host's snapshot, sent as JSON over
// server-sent events.
// Everything the server reports goes into the page through textContent or SVG attributes,
// never as markup.
"use strict";

const SVG = "http://www.w3.org/2000/svg";

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}

function row(cells) {
  const tr = el("tr");
  for (const c of cells) {
    if (c instanceof Node) { const td = el("td"); td.appendChild(c); tr.appendChild(td); }
    else tr.appendChild(el("td", c));
  }
  return tr;
}

function seconds(ms) { return (ms / 1000).toFixed(1) + " s"; }

function drawConnections(s) {
  const body = document.querySelector("#connections tbody");
  body.replaceChildren(...s.connections.map(c => {
    const tr = row([c.id, c.principal, c.rev, seconds(c.last_seen_ms), c.open ? "open" : "closed"]);
    tr.dataset.connection = String(c.id);
    return tr;
  }));
}

function drawPrincipals(s) {
  const box = document.getElementById("principals");
  box.replaceChildren(...s.principals.map(p => {
    const div = el("div", undefined, "principal");
    div.appendChild(el("h3", p.id));
    for (const t of p.toolsets) {
      const line = el("div", undefined, "toolset");
      line.dataset.toolset = t.toolset;
      if (t.instance) line.dataset.instance = t.instance;
      line.appendChild(el("strong", t.instance ? t.toolset + " / " + t.instance : t.toolset));
      line.appendChild(el("span", " " + (t.title || "") + " "));
      for (const tool of t.tools) line.appendChild(el("span", tool.name, "tool " + tool.visible));
      div.appendChild(line);
    }
    if (p.ended.length) {
      div.appendChild(el("div", "ended: " + p.ended.map(e => JSON.stringify(e)).join(", "), "toolset"));
    }
    return div;
  }));
}

function drawTimeline(s) {
  const svg = document.getElementById("timeline");
  const lanes = s.connections.map(c => c.id);
  const height = 20 + 20 * Math.max(1, lanes.length);
  const width = 900, left = 60;
  svg.setAttribute("height", String(height));
  const span = Math.max(1, s.now_ms);
  const nodes = [];
  lanes.forEach((id, i) => {
    const t = document.createElementNS(SVG, "text");
    t.setAttribute("x", "4"); t.setAttribute("y", String(24 + 20 * i));
    t.setAttribute("class", "lane");
    t.textContent = "conn " + id;
    nodes.push(t);
  });
  for (const c of s.changes) {
    const m = document.createElementNS(SVG, "circle");
    const lane = Math.max(0, lanes.indexOf(c.connection));
    m.setAttribute("cx", String(left + (width - left - 10) * c.t_ms / span));
    m.setAttribute("cy", String(20 + 20 * lane));
    m.setAttribute("r", "4");
    m.setAttribute("class", "mark");
    const title = document.createElementNS(SVG, "title");
    title.textContent = "rev " + c.rev + " by " + c.carrier;
    m.appendChild(title);
    nodes.push(m);
  }
  svg.replaceChildren(...nodes);
}

// One short line per entry: `play@vs-bot shown`, `go/vs-bot closed`, ...
function summary(h) {
  const parts = [];
  for (const t of h.tools || []) {
    const where = t.instance ? t.name + "@" + t.instance : t.name;
    const state = t.visible === true ? "shown" : t.visible === false ? "hidden" : "changed";
    parts.push(where + " " + state + (t.definition ? " (new definition)" : ""));
  }
  for (const t of h.toolsets || []) {
    parts.push((t.instance ? t.toolset + "/" + t.instance : t.toolset) + " " + (t.state || t.status || "changed"));
  }
  for (const s of h.suggest || []) parts.push("suggest " + (s.tool || s.name || JSON.stringify(s)));
  return parts.length ? parts.join(", ") : JSON.stringify(h);
}

function drawChanges(s) {
  const body = document.querySelector("#changes tbody");
  const rows = s.changes.slice().reverse().slice(0, 200).map(c => {
    const what = el("span", summary(c.hints));
    what.title = JSON.stringify(c.hints);
    const tr = row([seconds(c.t_ms), c.connection, c.principal, c.rev, c.carrier, what]);
    tr.lastChild.className = "what";
    return tr;
  });
  body.replaceChildren(...rows);
  document.getElementById("totals").textContent =
    "(" + s.total_changes + " in all" + (s.missed ? ", " + s.missed + " records missed" : "") + ")";
}

function drawServer(s) {
  drawConnections(s);
  drawPrincipals(s);
  drawTimeline(s);
  drawChanges(s);
}

// The host view: the list's change count first (0 is the point), then the backends.
function drawList(s) {
  const list = s.list || { tools: [], digest: "", changes: 0 };
  const count = document.getElementById("list-changes");
  count.textContent = String(list.changes);
  count.className = list.changes === 0 ? "count zero" : "count";
  document.getElementById("list-digest").textContent =
    list.tools.length + " tools · digest " + list.digest;
  document.getElementById("list-tools").replaceChildren(
    ...list.tools.map(t => el("span", t, "tool shown")));
}

function drawBackends(s) {
  const body = document.querySelector("#backends tbody");
  body.replaceChildren(...s.servers.map(b => {
    const open = el("div");
    for (const o of b.open) {
      const line = el("div", undefined, "toolset");
      line.dataset.toolset = o.toolset;
      if (o.instance) line.dataset.instance = o.instance;
      line.appendChild(el("strong", o.instance ? o.toolset + " / " + o.instance : o.toolset));
      if (o.title) line.appendChild(el("span", " " + o.title + " "));
      for (const t of o.visible) line.appendChild(el("span", t, "tool shown"));
      open.appendChild(line);
    }
    const link = b.link || (b.connected ? "connected" : "not connected");
    const flags = (b.hinted ? "toolHints" : "plain") + (b.push_events ? " · pushEvents" : "");
    const tr = row([b.name, link, b.rev, b.recovery || "no connection", flags, open, b.ended]);
    tr.dataset.server = b.name;
    tr.children[2].className = "rev";
    return tr;
  }));
}

function drawNews(s) {
  const box = document.getElementById("news");
  const agents = s.agents.filter(a => a.waiting.length);
  if (!agents.length) {
    box.replaceChildren(el("p", "Nothing waiting: every agent has been told everything."));
    return;
  }
  box.replaceChildren(...agents.map(a => {
    const div = el("div", undefined, "news");
    div.appendChild(el("h3", a.id + " (" + a.waiting.length + ")"));
    for (const w of a.waiting) {
      div.appendChild(el("div", w.server + ": " + w.state, "state"));
      div.appendChild(el("pre", w.text));
    }
    return div;
  }));
}

function drawRevMoves(s) {
  const body = document.querySelector("#rev-moves tbody");
  body.replaceChildren(...s.rev_moves.slice().reverse().slice(0, 100).map(
    m => row([seconds(m.t_ms), m.server, m.from, m.to])));
}

function drawHost(s) {
  drawList(s);
  drawBackends(s);
  drawNews(s);
  drawRevMoves(s);
}

function draw(s) {
  const host = s.view === "host";
  document.getElementById("server").hidden = host;
  document.getElementById("host").hidden = !host;
  document.getElementById("view").textContent = host ? "surface host" : "server";
  if (host) drawHost(s); else drawServer(s);
}

function start() {
  const status = document.getElementById("status");
  const source = new EventSource("/events");
  source.onopen = () => { status.textContent = "live"; };
  source.onerror = () => { status.textContent = "reconnecting…"; };
  source.onmessage = (e) => {
    if (!e.data) return;
    draw(JSON.parse(e.data));
    status.textContent = "live";
  };
}

document.addEventListener("DOMContentLoaded", start);
