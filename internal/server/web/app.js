// cadre's web view: plain DOM, no build step. It reads the server's JSON
// API (docs/server.md) and follows a live run over its SSE stream. It
// renders what the API says — states, figures, trees come from the
// runtime — and sets all text as text (md.js renders Markdown the same
// way).
"use strict";

// The token arrives once, in the URL cadre serve printed; the server has
// moved it into an HttpOnly cookie, which authenticates every request from
// here on, so it leaves the address bar (and the history) at once.
const token = new URLSearchParams(location.search).get("token") || "";
if (token) {
  const u = new URL(location.href);
  u.searchParams.delete("token");
  history.replaceState(history.state, "", u.pathname + u.search + u.hash);
}
const app = document.getElementById("app");
const crumbs = document.getElementById("crumbs");
const conn = document.getElementById("conn");

// page holds what the current page owns (stream, timers, keys), closed
// when it changes.
let page = { close() {}, key() { return false; } };

// h builds an element: h("td", {class: "num"}, "12", child…). Text is
// always set as text, never parsed as HTML.
function h(tag, attrs, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "style") Object.assign(el.style, v);
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const k of kids.flat(Infinity)) {
    if (k === undefined || k === null || k === false) continue;
    el.append(k instanceof Node ? k : document.createTextNode(String(k)));
  }
  return el;
}

async function api(method, path, body) {
  const headers = {};
  if (token) headers.Authorization = "Bearer " + token;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const resp = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const type = resp.headers.get("Content-Type") || "";
  const data = type.includes("json") ? await resp.json() : await resp.text();
  if (!resp.ok) {
    const err = new Error((data && data.error) || resp.status + " " + resp.statusText);
    err.status = resp.status;
    throw err;
  }
  return data;
}

function withToken(path) {
  if (!token) return path;
  return path + (path.includes("?") ? "&" : "?") + "token=" + encodeURIComponent(token);
}

function link(hash) { return location.pathname + hash; } // the cookie carries the token

// Short ids. Ids are time-ordered (UUIDv7): sessions of the same minute
// share their first characters, so an id is shortened to the end of it,
// as long as every id this page has seen needs to stay distinct (6 hex
// digits at least).
const shortIDs = {
  seen: new Set(),
  len: 6,
  learn(ids) {
    let grew = false;
    for (const id of ids) if (id && !this.seen.has(id)) { this.seen.add(id); grew = true; }
    if (!grew) return;
    const all = [...this.seen].map((s) => s.replace(/-/g, ""));
    for (let n = Math.max(this.len, 6); n <= 32; n++) {
      if (new Set(all.map((s) => s.slice(-n))).size === all.length) { this.len = n; return; }
    }
    this.len = 32;
  },
  of(id) {
    if (!id) return "";
    this.learn([id]);
    const flat = id.replace(/-/g, "");
    return flat.length <= this.len ? id : "…" + flat.slice(-this.len);
  },
};

// Formatting.
const fmt = {
  tokens(n) { n = n || 0; return n >= 1e6 ? (n / 1e6).toFixed(1) + "M" : n >= 1e4 ? Math.round(n / 1e3) + "k" : n >= 1e3 ? (n / 1e3).toFixed(1) + "k" : String(n); },
  // A null cost is unknown (a model with no price): "?", never $0; an
  // undefined one (a run with no record yet) is not shown.
  cost(x) { return x === undefined ? "" : x === null ? "?" : "$" + x.toFixed(x >= 1 ? 2 : 4); },
  // A duration; "—" when either end is unknown, never NaN.
  dur(ms) {
    if (typeof ms !== "number" || !isFinite(ms)) return "—";
    if (ms < 0) ms = 0;
    const s = ms / 1000;
    if (s < 60) return s.toFixed(1) + "s";
    const m = Math.floor(s / 60);
    return m < 60 ? m + "m" + String(Math.floor(s % 60)).padStart(2, "0") + "s" : Math.floor(m / 60) + "h" + String(m % 60).padStart(2, "0") + "m";
  },
  when(t) { const d = new Date(t); return isNaN(d) ? "" : d.toLocaleString(undefined, { month: "short", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit" }); },
  short(id) { return shortIDs.of(id); },
  clip(s, n) { s = String(s || "").replace(/\s+/g, " ").trim(); return s.length > n ? s.slice(0, n - 1) + "…" : s; },
};

const time = (t) => { const v = Date.parse(t); return isNaN(v) ? null : v; };

function status(s) { return h("span", { class: "status s-" + (s || "unknown") }, s || "?"); }
function badge(n) { return n ? h("span", { class: "badge ask-badge", title: n + " permission request(s) waiting" }, "waiting for approval" + (n > 1 ? " ×" + n : "")) : ""; }
function show(...nodes) { app.replaceChildren(...nodes); }

// ---- Keyboard ---------------------------------------------------------------

const keys = [
  ["j / ↓", "next row"], ["k / ↑", "previous row"], ["Enter", "open the row (a session; an agent's transcript and details)"],
  ["Esc", "close the details panel, then back to the sessions"], ["g", "the sessions list"], ["?", "this list"],
];

function toggleHelp(force) {
  let el = document.getElementById("help");
  if (el && force !== true) { el.remove(); return; }
  if (el) return;
  el = h("div", { id: "help", role: "dialog", "aria-label": "keyboard shortcuts" },
    h("div", { class: "help-box" }, h("h2", {}, "Keys"),
      h("table", {}, h("tbody", {}, keys.map(([k, what]) => h("tr", {}, h("td", { class: "mono" }, h("kbd", {}, k)), h("td", {}, what))))),
      h("p", { class: "muted" }, "Esc or ? closes this.")));
  el.addEventListener("click", (e) => { if (e.target === el) el.remove(); });
  document.body.append(el);
}

document.getElementById("keys").addEventListener("click", () => toggleHelp());

document.addEventListener("keydown", (e) => {
  const t = e.target;
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.isContentEditable)) {
    if (e.key === "Escape") t.blur();
    return;
  }
  if (e.key === "?") { toggleHelp(); e.preventDefault(); return; }
  if (document.getElementById("help")) {
    if (e.key === "Escape") { toggleHelp(); e.preventDefault(); }
    return;
  }
  const k = { j: "down", ArrowDown: "down", k: "up", ArrowUp: "up", Enter: "open", Escape: "close", g: "home" }[e.key];
  if (!k) return;
  if (page.key(k)) { e.preventDefault(); return; }
  if (k === "close" || k === "home") { location.hash = "#/"; e.preventDefault(); }
});

// cursor moves a highlight through rows (a page's list) and keeps it in
// view.
function moveCursor(rows, at, dir) {
  if (!rows.length) return -1;
  const next = at < 0 ? (dir > 0 ? 0 : rows.length - 1) : Math.min(rows.length - 1, Math.max(0, at + dir));
  rows.forEach((r, i) => r.classList.toggle("cursor", i === next));
  rows[next].scrollIntoView({ block: "nearest" });
  return next;
}

// ---- Sessions list ----------------------------------------------------------

function sessionsPage() {
  crumbs.textContent = "sessions";
  const st = { closed: false, last: "", cursor: -1, rows: [], timer: 0 };
  const form = h("form", { class: "new", onsubmit: async (e) => {
    e.preventDefault();
    const prompt = form.querySelector("textarea").value.trim();
    if (!prompt) return;
    try {
      const run = await api("POST", "/api/runs", { prompt });
      location.hash = "#/session/" + run.id;
    } catch (err) { form.append(h("span", { class: "error" }, err.message)); }
  } }, h("textarea", { placeholder: "Start a run: a prompt for the main agent…", rows: 1 }), h("button", { class: "primary", type: "submit" }, "Run"));
  const list = h("div", { id: "sessions" }, h("p", { class: "muted" }, "Loading…"));
  const head = h("h2", {}, "Sessions · newest first");
  show(form, head, list);

  function row(s, waitingTree) {
    const d = s.depth || 0;
    const hash = "#/session/" + (s.root_id || s.id) + (d ? "/" + s.id : "");
    // A live run shows its main agent's state; a run waiting on the user
    // says so, on the run's row as on the agent's that asked.
    const state = s.state || (s.live ? "live" : s.status);
    const waiting = d ? s.pending_approvals : waitingTree;
    return h("tr", { class: (d ? "child" : "root") + (s.live ? " live" : ""), "data-session": s.id, "data-state": state, "data-hash": hash },
      h("td", { class: "id", title: s.id }, d ? h("span", { class: "tree" }, "  ".repeat(d - 1) + "└ ") : "", h("a", { href: link(hash) }, fmt.short(s.id))),
      h("td", {}, status(state), s.live ? h("span", { class: "live-dot", title: "a run of this server" }) : "", " ", badge(waiting)),
      h("td", { class: "mono" }, s.agent),
      h("td", { class: "title" }, s.description || s.title || ""),
      h("td", { class: "num" }, s.num_turns),
      h("td", { class: "num" }, fmt.tokens(s.tokens)),
      h("td", { class: "num" }, fmt.cost(s.cost_usd)),
      h("td", { class: "mono" }, fmt.when(s.updated)));
  }

  async function load() {
    if (st.closed) return;
    let sessions;
    try {
      // Newest first, each main session followed by its subagents' (any depth).
      sessions = await api("GET", "/api/sessions?limit=500&order=tree");
      conn.className = "conn live";
    } catch (err) {
      conn.className = "conn lost";
      if (!st.last) list.replaceChildren(h("p", { class: "error" }, err.message));
      return;
    }
    if (st.closed) return;
    const sig = JSON.stringify(sessions);
    if (sig === st.last) return; // nothing changed: keep the rows (and the cursor)
    st.last = sig;
    shortIDs.learn(sessions.map((s) => s.id));
    const waiting = {};
    for (const s of sessions) waiting[s.root_id || s.id] = (waiting[s.root_id || s.id] || 0) + (s.pending_approvals || 0);
    const running = sessions.filter((s) => !s.depth && s.live && s.state === "running").length;
    const asking = Object.values(waiting).reduce((a, b) => a + b, 0);
    head.replaceChildren("Sessions · newest first",
      running ? h("span", { class: "badge run-badge" }, running + " running") : "",
      asking ? h("span", { class: "badge ask-badge" }, asking + " waiting for approval") : "");
    if (!sessions.length) { list.replaceChildren(h("p", { class: "muted" }, "No sessions yet.")); return; }
    const selected = st.cursor >= 0 && st.rows[st.cursor] ? st.rows[st.cursor].dataset.session : "";
    const body = h("tbody", {}, sessions.map((s) => row(s, waiting[s.id] || 0)));
    list.replaceChildren(h("table", { class: "sessions" },
      h("thead", {}, h("tr", {}, ["id", "state", "agent", "title", "turns", "tokens", "cost", "updated"].map((t) => h("th", {}, t)))), body));
    st.rows = [...body.children];
    st.cursor = st.rows.findIndex((r) => r.dataset.session === selected);
    if (st.cursor >= 0) st.rows[st.cursor].classList.add("cursor");
  }

  // Live: the list is read again every two seconds while the page is
  // shown (runs start, agents ask, sessions end elsewhere too).
  const poll = async () => { await load(); if (!st.closed) st.timer = setTimeout(poll, 2000); };
  poll();
  page = {
    close() { st.closed = true; clearTimeout(st.timer); conn.className = "conn"; },
    key(k) {
      if (k === "down" || k === "up") { st.cursor = moveCursor(st.rows, st.cursor, k === "down" ? 1 : -1); return true; }
      if (k === "open" && st.cursor >= 0) { location.hash = st.rows[st.cursor].dataset.hash; return true; }
      return false;
    },
  };
}

// ---- Session page -------------------------------------------------------------

function notFoundPage(id, message) {
  crumbs.replaceChildren(h("a", { href: link("#/") }, "sessions"), " › ", h("span", {}, id));
  show(h("div", { class: "notfound", "data-notfound": id },
    h("h1", {}, "No such session"),
    h("p", {}, "This server knows no session ", h("code", {}, id), "."),
    message ? h("p", { class: "muted" }, message) : "",
    h("p", {}, h("a", { href: link("#/") }, "← all sessions"))));
}

function sessionPage(id, selected) {
  const st = {
    id, selected: selected || id, cursor: -1, panel: true, run: null, session: null, tree: null, agents: null, tasks: [], team: null,
    approvals: [], transcript: null, es: null, timers: [], closed: false, error: "",
  };
  crumbs.replaceChildren(h("a", { href: link("#/") }, "sessions"), " › ", h("span", { title: id }, fmt.short(id)));
  const els = {
    summary: h("div", { class: "summary" }),
    controls: h("div", { class: "controls" }),
    approvals: h("div", { class: "approvals" }),
    agents: h("div", {}),
    tasks: h("div", {}),
    board: h("aside", { class: "board", hidden: true }),
    transcriptHead: h("h2", {}, "Transcript"),
    transcript: h("div", { class: "transcript" }),
    send: h("div", {}),
    panel: h("aside", { class: "panel" }),
  };

  let pending = null;
  function refreshSoon(what) {
    pending = pending || new Set();
    pending.add(what);
    if (pending.size > 1) return;
    st.timers.push(setTimeout(async () => {
      const todo = pending; pending = null;
      await load(todo);
    }, 250));
  }

  async function load(todo) {
    if (st.closed) return;
    const jobs = [];
    if (todo.has("session")) jobs.push(api("GET", "/api/sessions/" + id).then((d) => { st.session = d.session; }).catch((e) => { st.error = e; }));
    if (todo.has("tree")) jobs.push(api("GET", "/api/sessions/" + id + "/tree").then((d) => { st.tree = d; }).catch(() => {}));
    if (todo.has("team")) jobs.push(api("GET", "/api/sessions/" + id + "/team").then((t) => { st.team = t; }).catch(() => {}));
    if (todo.has("tasks")) jobs.push(api("GET", "/api/tasks?session=" + encodeURIComponent(id)).then((ts) => { st.tasks = ts; }).catch(() => {}));
    if (todo.has("run")) jobs.push(api("GET", "/api/runs/" + id).then((r) => { st.run = r; }).catch(() => { st.run = null; }));
    if (todo.has("agents")) jobs.push(api("GET", "/api/runs/" + id + "/agents").then((a) => { st.agents = a; }).catch(() => {}));
    if (todo.has("transcript")) {
      const want = st.selected;
      jobs.push(api("GET", "/api/sessions/" + want).then((d) => { if (want === st.selected) st.transcript = d.transcript; })
        .catch((e) => { if (want === st.selected) st.transcript = { error: e.message }; }));
    }
    await Promise.all(jobs);
    render();
  }

  function render() {
    if (st.closed) return;
    if (st.error && !st.session) {
      if (st.error.status === 404 || st.error.status === 400) notFoundPage(id, st.error.message);
      else show(h("p", { class: "error" }, st.error.message));
      return;
    }
    if (!els.summary.isConnected) {
      show(els.summary, els.controls, els.approvals,
        h("div", { class: "beside" }, h("div", { class: "timeline" }, h("h2", {}, "Agents · timeline"), els.agents), els.board), els.tasks,
        h("div", { class: "split" }, h("section", { class: "conversation" }, els.transcriptHead, els.transcript, els.send), els.panel));
    }
    renderSummary(); renderControls(); renderAgents(); renderBoard(); renderTasks(); renderApprovals(); renderTranscript(); renderSend(); renderPanel();
  }

  const live = () => !!(st.run && st.run.running);

  function renderSummary() {
    const s = st.session;
    if (!s) { els.summary.replaceChildren(h("span", { class: "muted" }, "…")); return; }
    const r = st.run;
    els.summary.replaceChildren(
      h("span", { class: "state" }, status(r ? r.state : s.status), r && r.pending_approvals ? [" ", badge(r.pending_approvals)] : ""),
      h("span", { class: "title" }, s.description || s.title || ""),
      h("span", { title: s.id }, "session ", h("b", {}, fmt.short(s.id))),
      // A run of this server has the whole tree's figures as they grow;
      // the session record's change only when a turn ends.
      r ? h("span", { title: "the main agent and every subagent, so far" }, "tokens (all agents) ", h("b", {}, fmt.tokens(r.tokens))) : h("span", {}, "tokens ", h("b", {}, fmt.tokens(s.tokens))),
      r ? h("span", { title: "the whole tree, so far" }, "cost ", h("b", {}, fmt.cost(r.cost_usd))) : h("span", {}, "cost ", h("b", {}, fmt.cost(s.cost_usd))),
      h("span", {}, "turns ", h("b", {}, r ? r.num_turns : s.num_turns)),
      r && r.background_running ? h("span", {}, "background ", h("b", {}, r.background_running)) : "",
      h("span", { class: "muted" }, s.cwd));
  }

  function renderControls() {
    if (!live()) { els.controls.replaceChildren(); return; }
    const act = (path, label) => api("POST", `/api/runs/${id}/${path}`).then(() => refreshSoon("run"), (e) => els.controls.append(h("span", { class: "error" }, label + ": " + e.message)));
    if (els.controls.childElementCount) return;
    els.controls.replaceChildren(
      h("button", { type: "button", onclick: () => act("interrupt", "interrupt"), title: "stop the turn in progress; queued messages run next" }, "Interrupt turn"),
      h("button", { type: "button", onclick: () => act("abort", "stop all"), title: "stop the turn and every subagent; the run stays open" }, "Stop all agents"),
      h("button", { type: "button", onclick: () => act("close", "close"), title: "answer what is queued, wait for background agents, end" }, "Close"),
      h("button", { type: "button", class: "danger", "data-action": "stop", onclick: () => act("stop", "stop"), title: "stop everything now and end the run" }, "Stop run"));
  }

  // rows: the agents, tree order (each agent followed by its children),
  // from the run's agents tree, or for a session of an earlier server,
  // from its record and its children's.
  function rows() {
    const now = Date.now();
    if (st.agents) {
      const by = new Map(st.agents.map((a) => [a.id, a]));
      const out = [];
      const walk = (a, depth) => {
        const start = time(a.started);
        // A running agent's bar grows with the clock; an idle main
        // agent's stops at its last answer; a queued one has no length.
        let end = a.ended ? time(a.ended) : a.state === "running" ? now : a.state === "queued" ? start : null;
        if (end === null) end = time(a.last_active) ?? start;
        out.push({ ...a, depth, name: a.agent, mate: a.name, start, end });
        for (const c of a.children) if (by.has(c)) walk(by.get(c), depth + 1);
      };
      walk(st.agents[0], 0);
      return out;
    }
    const s = st.session;
    if (!s) return [];
    const out = [{ id, depth: 0, name: s.agent || "main", agent: s.agent || "main", description: s.title, state: s.status, start: time(s.created),
      end: s.status === "running" ? now : time(s.updated), calls: [], tokens: s.tokens, cost_usd: s.cost_usd, num_turns: s.num_turns, model: s.model,
      children: (st.tree ? st.tree.children : []).map((c) => c.id) }];
    for (const c of st.tree ? st.tree.children : []) {
      out.push({ id: c.id, depth: 1, name: c.agent, agent: c.agent, description: c.description || c.title, state: c.status, start: time(c.created),
        end: c.status === "running" ? now : time(c.updated), calls: [], tokens: c.tokens, cost_usd: c.cost_usd, subtree_cost_usd: c.cost_usd,
        num_turns: c.num_turns, model: c.model, children: [] });
    }
    if (out.length > 1 && out[0].cost_usd !== undefined) {
      out[0].subtree_cost_usd = out.slice(1).reduce((a, r) => (a === null || r.cost_usd === null ? null : a + (r.cost_usd || 0)), out[0].cost_usd);
    }
    return out;
  }

  function renderAgents() {
    const rs = rows();
    shortIDs.learn(rs.map((r) => r.id));
    if (!rs.length) { els.agents.replaceChildren(h("p", { class: "muted" }, "…")); return; }
    const starts = rs.map((r) => r.start).filter((x) => x !== null);
    const ends = rs.map((r) => r.end).filter((x) => x !== null);
    const t0 = starts.length ? Math.min(...starts) : Date.now();
    const t1 = Math.max(...ends, t0 + 1000);
    const span = t1 - t0;
    const pct = (t) => ((t - t0) / span) * 100;
    const body = h("tbody");
    for (const r of rs) {
      const lane = h("div", { class: "lane-box" });
      if (r.start !== null) {
        lane.append(h("div", { class: "bar s-" + r.state, "data-agent": r.name, title: `${r.name} ${r.state} ${fmt.dur(r.end - r.start)}`,
          style: { left: pct(r.start) + "%", width: Math.max(pct(r.end) - pct(r.start), 0.4) + "%" } }));
      }
      for (const c of r.calls || []) {
        lane.append(h("div", { class: "tick", title: c.name + " at +" + fmt.dur(time(c.at) - t0), style: { left: pct(time(c.at)) + "%" } }));
      }
      const subtree = r.children && r.children.length && r.subtree_cost_usd !== undefined;
      body.append(h("tr", { class: "agent" + (r.id === st.selected ? " selected" : ""), "data-agent": r.name, "data-id": r.id, "data-state": r.state,
        onclick: () => select(r.id) },
        h("td", { class: "name" }, r.depth ? h("span", { class: "tree" }, "  ".repeat(r.depth - 1) + "└ ") : "", r.name,
          r.mate ? h("span", { class: "mate" }, " " + r.mate) : "",
          r.index ? h("span", { class: "muted" }, " #" + r.index) : "", r.background ? h("span", { class: "muted" }, " bg") : ""),
        h("td", { class: "title" }, r.description || "", r.tool && r.state === "running" ? h("span", { class: "tool" }, " · ", h("b", {}, r.tool)) : ""),
        h("td", {}, status(r.state)),
        h("td", { class: "num" }, r.state === "queued" ? "queued" : fmt.dur(r.end - r.start)),
        h("td", { class: "num" }, (r.calls || []).length),
        h("td", { class: "num" }, fmt.tokens(r.tokens)),
        h("td", { class: "num", title: subtree ? "own · with its subagents" : "" }, fmt.cost(r.cost_usd), subtree ? h("span", { class: "muted subtree" }, " · Σ " + fmt.cost(r.subtree_cost_usd)) : ""),
        h("td", { class: "lane" }, lane)));
    }
    els.agents.replaceChildren(h("table", { class: "agents" },
      h("thead", {}, h("tr", {}, ["agent", "task", "state", "time", "tools", "tokens", "cost"].map((x) => h("th", {}, x)),
        h("th", {}, h("div", { class: "axis" }, h("span", {}, "0s"), h("span", {}, fmt.dur(span)))))),
      body));
    const trs = [...body.children];
    if (st.cursor >= trs.length) st.cursor = trs.length - 1;
    if (st.cursor >= 0) trs[st.cursor].classList.add("cursor");
  }

  // The session's background tasks, oldest first: its background agents
  // and its background commands (Bash run_in_background, kind local_bash).
  function renderTasks() {
    const ts = (st.tasks || []).slice().reverse();
    if (!ts.length) { els.tasks.replaceChildren(); return; }
    const now = Date.now();
    const body = h("tbody");
    for (const t of ts) {
      const start = time(t.started) ?? time(t.created);
      const end = t.status === "running" || t.status === "pending" ? now : time(t.finished);
      const what = t.kind === "local_bash" ? h("span", { class: "mono" }, t.prompt) : (t.description || "");
      const stop = t.status === "running" || t.status === "pending"
        ? h("button", { class: "danger", onclick: () => api("POST", "/api/tasks/" + encodeURIComponent(t.id) + "/stop").then(() => refreshSoon("tasks"), (e) => els.tasks.append(h("p", { class: "error" }, e.message))) }, "Stop")
        : "";
      body.append(h("tr", { "data-task": t.id, "data-kind": t.kind },
        h("td", { class: "id", title: t.id }, fmt.short(t.id)),
        h("td", { class: "mono" }, t.kind === "local_bash" ? "shell" : t.agent),
        h("td", {}, status(t.status === "pending" ? "queued" : t.status)),
        h("td", { class: "title" }, t.kind === "local_bash" && t.description !== t.prompt ? [t.description, " · "] : "", what),
        h("td", { class: "num" }, t.status === "pending" ? "queued" : fmt.dur(end - start)),
        h("td", {}, h("a", { href: "/api/tasks/" + encodeURIComponent(t.id) + "/output", target: "_blank", rel: "noopener" }, "output"), " ", stop)));
    }
    els.tasks.replaceChildren(h("h2", {}, "Background tasks"), h("table", { class: "tasks" },
      h("thead", {}, h("tr", {}, ["id", "kind", "state", "task", "time", ""].map((x) => h("th", {}, x)))), body));
  }

  // The team the session leads, beside the timeline: its roster and its
  // task list by status, each task with its owner, what it still waits
  // on and what it blocks. Subjects, descriptions and names are the
  // model's text: set as text, like everything here.
  function renderBoard() {
    const t = st.team;
    const has = !!(t && (t.members.length || t.tasks.length));
    els.board.hidden = !has;
    if (!has) { els.board.replaceChildren(); return; }
    const team = t.name || "default";
    const ids = (xs) => xs.map((x) => "#" + x).join(", ");
    const roster = h("table", { class: "roster" }, h("tbody", {}, t.members.map((m) =>
      h("tr", { "data-teammate": m.name, "data-state": m.state, title: m.id, onclick: () => { if (agentOf(m.id)) select(m.id); } },
        h("td", { class: "mono" }, m.name), h("td", { class: "mono muted" }, m.agent), h("td", {}, status(m.state)),
        h("td", { class: "title" }, m.task ? ["on ", h("span", { class: "mate-task" }, fmt.clip(m.task, 60))] : "")))));
    const card = (k) => h("div", { class: "tcard", "data-task": k.id, "data-status": k.status, "data-owner": k.owner || "", title: k.description || "" },
      h("div", {}, h("span", { class: "mono muted" }, "#" + k.id), " ", h("span", { class: "subject" }, k.subject)),
      h("div", { class: "tmeta" },
        k.owner ? h("span", { class: "owner mono" }, k.owner) : h("span", { class: "muted" }, "unowned"),
        k.waiting.length ? h("span", { class: "waits", "data-waiting": k.waiting.join(",") }, "waits on " + ids(k.waiting)) : "",
        // A completed task holds nothing up any more.
        k.blocks.length && k.status !== "completed" ? h("span", { class: "blocks muted", "data-blocks": k.blocks.join(",") }, "blocks " + ids(k.blocks)) : ""));
    const cols = [["pending", "Pending"], ["in_progress", "In progress"], ["completed", "Completed"]].map(([key, label]) => {
      const ks = t.tasks.filter((k) => k.status === key);
      return h("div", { class: "tcol", "data-column": key }, h("h3", {}, label, h("span", { class: "muted" }, " " + ks.length)), ks.map(card));
    });
    els.board.replaceChildren(h("h2", {}, "Team · ", h("span", { class: "team-name" }, team)), roster, h("div", { class: "tcols" }, cols));
  }

  function select(agentID) {
    st.selected = agentID;
    st.panel = true;
    const i = rows().findIndex((r) => r.id === agentID);
    if (i >= 0) st.cursor = i;
    history.replaceState(null, "", link("#/session/" + id + (agentID === id ? "" : "/" + agentID)));
    st.transcript = null;
    render();
    load(new Set(["transcript"]));
  }

  // diffView shows an edit's unified diff, its lines coloured by kind
  // (the file headers are left out: the card's head names the file).
  function diffView(diff) {
    const lines = diff.replace(/\n$/, "").split("\n").filter((l) => !/^(---|\+\+\+) /.test(l));
    const kind = (l) => l.startsWith("@@") ? "hunk" : l[0] === "+" ? "add" : l[0] === "-" ? "del" : "";
    return h("pre", { class: "diff" }, ...lines.map((l) => h("span", { class: kind(l) }, l + "\n")));
  }

  function renderApprovals() {
    if (!st.approvals.length) { els.approvals.replaceChildren(); return; }
    els.approvals.replaceChildren(h("h2", {}, "Waiting for approval"), ...st.approvals.map((a) => {
      const msg = h("input", { placeholder: "reason (told to the model on deny)" });
      const answer = (decision) => api("POST", `/api/runs/${a.run_id}/approvals/${a.id}`, { decision, message: msg.value })
        .catch((e) => els.approvals.append(h("p", { class: "error" }, e.message)));
      return h("div", { class: "ask", "data-approval": a.id },
        h("div", { class: "head" }, h("b", {}, a.agent), a.agent_id ? h("span", { title: a.agent_id }, " " + fmt.short(a.agent_id)) : "", " wants ", h("b", {}, a.tool), a.target ? " " + a.target : ""),
        a.reason ? h("div", { class: "muted" }, a.reason) : "",
        a.diff ? diffView(a.diff) : inputView(a.input),
        h("div", { class: "actions" },
          h("button", { class: "primary", onclick: () => answer("allow") }, "Allow once"),
          a.suggestions && a.suggestions.length ? h("button", { onclick: () => answer("always"), title: "adds " + a.suggestions.join(", ") }, "Always allow") : "",
          msg, h("button", { class: "danger", onclick: () => answer("deny") }, "Deny")));
    }));
  }

  function agentOf(agentID) { return rows().find((r) => r.id === agentID); }

  function renderTranscript() {
    const a = agentOf(st.selected);
    els.transcriptHead.replaceChildren("Conversation · ", a ? a.name : "agent", " ", h("span", { class: "muted", title: st.selected }, fmt.short(st.selected)));
    if (st.transcript === null) { els.transcript.replaceChildren(h("div", { class: "entry muted" }, "Loading…")); return; }
    if (st.transcript.error) { els.transcript.replaceChildren(h("div", { class: "entry error" }, st.transcript.error)); return; }
    if (!st.transcript.length) { els.transcript.replaceChildren(h("div", { class: "entry muted" }, "Nothing yet.")); return; }
    // Open tool cards stay open across re-renders.
    const open = new Set([...els.transcript.querySelectorAll("details[open][data-call]")].map((d) => d.dataset.call));
    els.transcript.replaceChildren(...conversation(st.transcript, { rows: rows(), select, open }));
  }

  function renderSend() {
    if (!live()) { els.send.replaceChildren(); return; }
    const main = st.selected === id;
    if (els.send.firstChild && els.send.firstChild.dataset.for === st.selected) return; // keep what is being typed
    const ta = h("textarea", { rows: 1, placeholder: main ? "Message the main agent (queued until its turn)…" : "Message this subagent (SendMessage)…" });
    const form = h("form", { class: "send", onsubmit: async (e) => {
      e.preventDefault();
      const text = ta.value.trim();
      if (!text) return;
      try {
        if (main) await api("POST", `/api/runs/${id}/messages`, { text });
        else await api("POST", `/api/runs/${id}/subagents/${encodeURIComponent(st.selected)}/messages`, { text });
        ta.value = "";
      } catch (err) { form.append(h("span", { class: "error" }, err.message)); }
    } }, ta, h("button", { class: "primary", type: "submit" }, "Send"));
    form.dataset.for = st.selected;
    els.send.replaceChildren(form);
  }

  // The details of the selected agent: what it was asked, with what, and
  // what it has cost, its own and its subtree's.
  function renderPanel() {
    const a = agentOf(st.selected);
    els.panel.hidden = !st.panel || !a;
    if (els.panel.hidden) return;
    const all = rows();
    const kid = (cid) => {
      const c = all.find((r) => r.id === cid);
      return h("li", {}, h("a", { href: "#", onclick: (e) => { e.preventDefault(); select(cid); } }, c ? c.name : "agent", " ", fmt.short(cid)),
        c ? [" ", status(c.state), " ", h("span", { class: "muted" }, fmt.clip(c.description, 60))] : "");
    };
    const tools = a.tools === null || a.tools === undefined ? (a.agent === "main" ? "" : "every tool available") : a.tools.join(", ") || "none";
    const dl = (pairs) => h("dl", {}, pairs.filter(([, v]) => v !== "" && v !== undefined && v !== null).map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
    els.panel.replaceChildren(
      h("div", { class: "panel-head" }, h("b", {}, a.name), " ", status(a.state),
        h("button", { type: "button", class: "close", title: "close (Esc)", onclick: () => { st.panel = false; renderPanel(); } }, "×")),
      a.description ? h("div", { class: "panel-desc" }, a.description) : "",
      dl([
        ["id", h("span", { class: "mono", title: a.id }, a.id)],
        ["model", a.model ? h("span", { class: "mono" }, a.model) : ""],
        ["tools", tools ? h("span", { class: "mono tools" }, tools, a.disallowed_tools && a.disallowed_tools.length ? " (not " + a.disallowed_tools.join(", ") + ")" : "") : ""],
        ["turns", a.num_turns ?? ""],
        ["tokens", fmt.tokens(a.tokens)],
        ["tool calls", (a.calls || []).length || a.tool_uses || ""],
        ["cost", fmt.cost(a.cost_usd)],
        ["with subagents", a.children && a.children.length ? fmt.cost(a.subtree_cost_usd) : ""],
        ["started", fmt.when(a.started)],
        ["time", a.state === "queued" ? "queued" : fmt.dur(a.end - a.start)],
      ]),
      a.prompt ? h("details", { class: "prompt", open: true }, h("summary", {}, "Prompt"), md(a.prompt)) : "",
      a.summary && a.state !== "running" ? h("details", { class: "prompt" }, h("summary", {}, "Result"), md(a.summary)) : "",
      ...(a.children && a.children.length ? [h("h3", {}, "Subagents (" + a.children.length + ")"), h("ul", { class: "kids" }, a.children.map(kid))] : []));
  }

  function connect() {
    const es = new EventSource(withToken("/api/runs/" + id + "/events"));
    st.es = es;
    es.onopen = () => { conn.className = "conn live"; };
    es.onerror = () => { if (!st.closed) conn.className = "conn lost"; };
    const any = (ev) => {
      let d = {};
      try { d = JSON.parse(ev.data); } catch (_) {}
      const agent = d.parent_tool_use_id ? d.agent_id : id;
      const todo = ["agents", "run"];
      if (agent === st.selected || ev.type === "result" || (d.subtype && d.subtype.startsWith("task_"))) todo.push("transcript");
      if (ev.type === "result" || (d.subtype && d.subtype.startsWith("task_"))) todo.push("tree", "session", "tasks");
      // The board changes with the task list (team_task_changed) and with
      // a teammate's state: it joins, goes idle, wakes, ends (task_*).
      if (ev.type === "result" || d.subtype === "team_task_changed" || (d.subtype && d.subtype.startsWith("task_"))) todo.push("team");
      for (const w of todo) refreshSoon(w);
    };
    for (const t of ["system", "assistant", "user", "result"]) es.addEventListener(t, any);
    es.addEventListener("approvals", (ev) => { st.approvals = JSON.parse(ev.data); renderApprovals(); refreshSoon("run"); });
    es.addEventListener("end", () => { es.close(); conn.className = "conn"; els.controls.replaceChildren(); for (const w of ["run", "agents", "session", "tree", "transcript", "tasks", "team"]) refreshSoon(w); });
  }

  page = {
    close() { st.closed = true; if (st.es) st.es.close(); st.timers.forEach(clearTimeout); clearInterval(st.tick); conn.className = "conn"; },
    key(k) {
      const trs = [...els.agents.querySelectorAll("tr.agent")];
      if (k === "down" || k === "up") { st.cursor = moveCursor(trs, st.cursor < 0 ? trs.findIndex((t) => t.dataset.id === st.selected) : st.cursor, k === "down" ? 1 : -1); return true; }
      if (k === "open" && st.cursor >= 0 && trs[st.cursor]) { select(trs[st.cursor].dataset.id); return true; }
      if (k === "close" && st.panel && !els.panel.hidden) { st.panel = false; renderPanel(); return true; }
      return false;
    },
  };
  (async () => {
    await load(new Set(["session", "tree", "run", "transcript", "tasks", "team"]));
    if (st.run) {
      await load(new Set(["agents"]));
      if (st.run.running) connect();
    }
    // Running bars grow with the clock.
    st.tick = setInterval(() => { if (live()) { renderAgents(); renderTasks(); } }, 1000);
  })();
}

// ---- The conversation ----------------------------------------------------------

// notifications parses the <task-notification> blocks a user message
// carries (how the runtime tells an agent that a background run ended)
// into events: which task, how it ended, its summary, result and figures.
function notifications(text) {
  const out = [];
  const unescape = (s) => s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, "\"").replace(/&#39;/g, "'").replace(/&amp;/g, "&");
  for (const m of text.matchAll(/<task-notification>([\s\S]*?)<\/task-notification>/g)) {
    const f = {};
    for (const t of m[1].matchAll(/<([a-z-]+)>([\s\S]*?)<\/\1>/g)) f[t[1]] = unescape(t[2].trim());
    const usage = {};
    for (const u of (f.usage || "").matchAll(/([a-z ]+):\s*([^,]+)/g)) usage[u[1].trim()] = u[2].trim();
    out.push({ id: f["task-id"], toolUseID: f["tool-use-id"], kind: f["task-type"] || "agent", status: f.status, summary: f.summary,
      result: f.result ?? f["output-tail"], exitCode: f["exit-code"], usage });
  }
  return out;
}

// The boilerplate a background Agent call returns, made an event: which
// agent went to the background, under which id.
function launched(text) {
  if (!/^Async agent launched successfully\./.test(text)) return null;
  const m = /agentId:\s*([\w-]+)/.exec(text);
  return { id: m ? m[1] : "", queued: /waits for a free place/.test(text) };
}

function resultText(b) {
  if (typeof b.content === "string") return b.content;
  return (b.content || []).map((c) => c.text || (c.type === "image" ? "[image]" : "")).join("\n");
}

// The main argument of a call, for its card's title.
function callTarget(name, input) {
  if (!input || typeof input !== "object") return "";
  if (name === "Agent" || name === "Task") return [input.subagent_type, input.description].filter(Boolean).join(": ");
  for (const k of ["file_path", "path", "command", "pattern", "url", "query", "notebook_path", "description", "prompt", "skill", "to", "task_id"]) {
    if (typeof input[k] === "string" && input[k]) return input[k];
  }
  return "";
}

// inputView shows a tool's input as its fields, each value as typed:
// strings as text (lines kept), anything else as indented JSON.
function inputView(input) {
  if (input === undefined || input === null) return "";
  if (typeof input !== "object" || Array.isArray(input)) return h("pre", { class: "input" }, JSON.stringify(input, null, 2));
  return h("table", { class: "input" }, h("tbody", {}, Object.entries(input).map(([k, v]) =>
    h("tr", {}, h("th", {}, k), h("td", {}, h("pre", {}, typeof v === "string" ? v : JSON.stringify(v, null, 2)))))));
}

// conversation renders transcript entries: text as Markdown, each tool
// call as a card holding its input and its result, and notifications and
// background launches as events on the timeline.
function conversation(entries, ctx) {
  const out = [];
  const cards = new Map(); // tool_use id → card
  const byCall = new Map((ctx.rows || []).filter((r) => r.tool_use_id).map((r) => [r.tool_use_id, r]));
  const byID = new Map((ctx.rows || []).map((r) => [r.id, r]));
  let prev = null;
  const agentLink = (aid, label) => aid && byID.has(aid)
    ? h("a", { href: "#", class: "agent-link", onclick: (e) => { e.preventDefault(); ctx.select(aid); } }, label)
    : h("span", {}, label);
  const turn = (role, t) => {
    const el = h("div", { class: "entry " + role }, h("div", { class: "who" }, role, h("span", { class: "muted" }, " · " + fmt.when(t))));
    out.push(el);
    return el;
  };
  for (const e of entries) {
    const m = e.message;
    if (!m) {
      if (e.subtype) out.push(h("div", { class: "event muted" }, "● ", e.type === "summary" ? "earlier turns were summarised" : e.subtype));
      prev = null;
      continue;
    }
    const role = e.type === "assistant" ? "assistant" : "user";
    let el = null;
    const into = () => {
      if (el) return el;
      // Consecutive entries of the same speaker read as one message.
      el = prev && prev.role === role ? prev.el : turn(role, e.timestamp);
      prev = { role, el };
      return el;
    };
    for (const b of m.content || []) {
      if (b.type === "text") {
        const evs = role === "user" ? notifications(b.text) : [];
        if (evs.length) {
          for (const n of evs) out.push(noteEvent(n, e.timestamp));
          prev = null;
          continue;
        }
        if (!b.text.trim()) continue;
        into().append(role === "assistant" ? md(b.text) : h("div", { class: "user-text" }, md(b.text)));
      } else if (b.type === "thinking") {
        into().append(h("details", { class: "thinking" }, h("summary", {}, "thinking"), h("pre", {}, b.thinking || "")));
      } else if (b.type === "tool_use") {
        const target = callTarget(b.name, b.input);
        const run = byCall.get(b.id);
        const card = h("details", { class: "card", "data-call": b.id, "data-tool": b.name, open: ctx.open && ctx.open.has(b.id) ? true : undefined },
          h("summary", {}, h("span", { class: "card-tool" }, b.name), " ", h("span", { class: "card-target" }, fmt.clip(target, 120)),
            h("span", { class: "card-state muted" }, " · running…")),
          h("div", { class: "card-body" }, h("div", { class: "card-label" }, "input"), inputView(b.input)));
        if (run) card.querySelector("summary").append(" ", agentLink(run.id, "→ " + run.name + " " + fmt.short(run.id)));
        cards.set(b.id, card);
        into().append(card);
      } else if (b.type === "tool_result") {
        const card = cards.get(b.tool_use_id);
        const text = resultText(b);
        const l = launched(text);
        if (card) {
          const state = card.querySelector(".card-state");
          if (l) {
            // Not a result: the agent went to the background; its end comes
            // as a notification, below.
            state.textContent = l.queued ? " · queued in the background" : " · launched in the background";
            card.classList.add("launched");
            card.dataset.agent = l.id;
            if (!card.querySelector(".agent-link") && l.id) card.querySelector("summary").append(" ", agentLink(l.id, "→ " + fmt.short(l.id)));
          } else {
            state.textContent = b.is_error ? " · error" : " · done";
            state.className = "card-state " + (b.is_error ? "error" : "muted");
            card.classList.toggle("failed", !!b.is_error);
            card.querySelector(".card-body").append(h("div", { class: "card-label" }, b.is_error ? "error" : "result"),
              h("pre", { class: "result" + (b.is_error ? " error" : "") }, text));
          }
        } else if (l) {
          out.push(h("div", { class: "event muted" }, "● agent ", fmt.short(l.id), " launched in the background"));
        } else {
          into().append(h("pre", { class: "result" + (b.is_error ? " error" : "") }, text));
        }
      } else if (b.type === "image") {
        into().append(h("div", { class: "muted" }, "[image]"));
      } else {
        into().append(h("div", { class: "muted" }, "[" + b.type + "]"));
      }
    }
  }
  return out;

  function noteEvent(n, at) {
    const r = byID.get(n.id);
    const who = n.kind === "local_bash" ? "shell" : r ? r.name : "agent";
    const figures = [n.usage.duration, n.usage.tokens ? fmt.tokens(Number(n.usage.tokens)) + " tokens" : "", n.usage["tool uses"] ? n.usage["tool uses"] + " tool uses" : "",
      n.usage.cost && n.usage.cost !== "?" ? n.usage.cost : "", n.exitCode !== undefined ? "exit " + n.exitCode : ""].filter(Boolean).join(" · ");
    const state = { completed: "completed", failed: "failed", killed: "killed", stopped: "killed", timeout: "timeout" }[n.status] || n.status;
    return h("details", { class: "event note s-" + state, "data-notification": n.id || "", "data-status": state },
      h("summary", {}, "● ", agentLink(n.id, who + " " + fmt.short(n.id)), " ", status(state),
        r && r.description ? h("span", {}, " ", fmt.clip(r.description, 80)) : n.summary ? h("span", {}, " ", fmt.clip(n.summary, 80)) : "",
        figures ? h("span", { class: "muted" }, " · " + figures) : "", h("span", { class: "muted" }, " · " + fmt.when(at))),
      n.result ? h("div", { class: "card-body" }, md(n.result)) : "");
  }
}

function route() {
  page.close();
  page = { close() {}, key() { return false; } };
  const help = document.getElementById("help");
  if (help) help.remove();
  const parts = location.hash.replace(/^#\/?/, "").split("/");
  if (parts[0] === "session" && parts[1]) sessionPage(parts[1], parts[2]);
  else sessionsPage();
}

window.addEventListener("hashchange", route);
route();
