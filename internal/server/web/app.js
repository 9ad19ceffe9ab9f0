// cadre's web view: plain DOM, no build step. It reads the server's JSON
// API (docs/server.md) and follows a live run over its SSE stream.
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

// page holds what the current page owns (stream, timers), closed when it
// changes.
let page = { close() {} };

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
  for (const k of kids.flat()) {
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

// Formatting.
const fmt = {
  tokens(n) { n = n || 0; return n >= 1e6 ? (n / 1e6).toFixed(1) + "M" : n >= 1e4 ? Math.round(n / 1e3) + "k" : n >= 1e3 ? (n / 1e3).toFixed(1) + "k" : String(n); },
  // A null cost is unknown (a model with no price): "?", never $0; an
  // undefined one (a run with no record yet) is not shown.
  cost(x) { return x === undefined ? "" : x === null ? "?" : "$" + x.toFixed(x >= 1 ? 2 : 4); },
  dur(ms) { if (ms < 0) ms = 0; const s = ms / 1000; return s < 60 ? s.toFixed(1) + "s" : Math.floor(s / 60) + "m" + String(Math.round(s % 60)).padStart(2, "0") + "s"; },
  when(t) { const d = new Date(t); return isNaN(d) ? "" : d.toLocaleString(undefined, { month: "short", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit" }); },
  short(id) { return (id || "").slice(0, 8); },
};

function status(s) { return h("span", { class: "status s-" + (s || "unknown") }, s || "?"); }

// ---- Sessions list ----------------------------------------------------

async function sessionsPage() {
  crumbs.textContent = "sessions";
  const form = h("form", { class: "new", onsubmit: async (e) => {
    e.preventDefault();
    const prompt = form.querySelector("textarea").value.trim();
    if (!prompt) return;
    try {
      const run = await api("POST", "/api/runs", { prompt });
      location.hash = "#/session/" + run.id;
    } catch (err) { form.append(h("span", { class: "error" }, err.message)); }
  } }, h("textarea", { placeholder: "Start a run: a prompt for the main agent…", rows: 1 }), h("button", { class: "primary", type: "submit" }, "Run"));
  let sessions;
  // Newest first, each main session followed by its subagents' (any depth).
  try { sessions = await api("GET", "/api/sessions?limit=500&order=tree"); } catch (err) { return show(h("p", { class: "error" }, err.message)); }
  const body = h("tbody");
  for (const s of sessions) body.append(row(s));
  function row(s) {
    const d = s.depth || 0;
    const hash = "#/session/" + (s.root_id || s.id) + (d ? "/" + s.id : "");
    return h("tr", { class: d ? "child" : "", "data-session": s.id },
      h("td", { class: "id" }, d ? h("span", { class: "tree" }, "  ".repeat(d - 1) + "└ ") : "", h("a", { href: link(hash) }, fmt.short(s.id))),
      h("td", {}, s.live ? status("live") : status(s.status)),
      h("td", { class: "mono" }, s.agent),
      h("td", { class: "title" }, s.description || s.title || ""),
      h("td", { class: "num" }, s.num_turns),
      h("td", { class: "num" }, fmt.tokens(s.tokens)),
      h("td", { class: "num" }, fmt.cost(s.cost_usd)),
      h("td", { class: "mono" }, fmt.when(s.updated)));
  }
  show(form, h("h2", {}, "Sessions · newest first"),
    sessions.length ? h("table", { class: "sessions" },
      h("thead", {}, h("tr", {}, ["id", "status", "agent", "title", "turns", "tokens", "cost", "updated"].map((t) => h("th", {}, t)))), body)
      : h("p", { class: "muted" }, "No sessions yet."));
}

function show(...nodes) { app.replaceChildren(...nodes); }

// ---- Session page -------------------------------------------------------

function sessionPage(id, selected) {
  const st = {
    id, selected: selected || id, live: false, run: null, session: null, tree: null, activity: null, tasks: [],
    approvals: [], transcript: [], es: null, timers: [], closed: false, error: "",
  };
  crumbs.replaceChildren(h("a", { href: link("#/") }, "sessions"), " › ", h("span", {}, fmt.short(id)));
  const els = {
    summary: h("div", { class: "summary" }),
    approvals: h("div", { class: "approvals" }),
    agents: h("div", {}),
    tasks: h("div", {}),
    transcriptHead: h("h2", {}, "Transcript"),
    transcript: h("div", { class: "transcript" }),
    send: h("div", {}),
  };
  show(els.summary, els.approvals, h("h2", {}, "Agents · timeline"), els.agents, els.tasks, els.transcriptHead, els.transcript, els.send);

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
    if (todo.has("session")) jobs.push(api("GET", "/api/sessions/" + id).then((d) => { st.session = d.session; }).catch((e) => { st.error = e.message; }));
    if (todo.has("tree")) jobs.push(api("GET", "/api/sessions/" + id + "/tree").then((d) => { st.tree = d; }).catch(() => {}));
    if (todo.has("tasks")) jobs.push(api("GET", "/api/tasks?session=" + encodeURIComponent(id)).then((ts) => { st.tasks = ts; }).catch(() => {}));
    if (todo.has("run")) jobs.push(api("GET", "/api/runs/" + id).then((r) => { st.run = r; }).catch(() => { st.run = null; }));
    if (todo.has("activity") && st.run) jobs.push(api("GET", "/api/runs/" + id + "/activity").then((a) => { st.activity = a; }).catch(() => {}));
    if (todo.has("transcript")) jobs.push(api("GET", "/api/sessions/" + st.selected).then((d) => { st.transcript = d.transcript; st.selSession = d.session; }).catch((e) => { st.transcript = []; st.selSession = null; st.error = e.message; }));
    await Promise.all(jobs);
    if (todo.has("activity") && !st.activity && st.run) {
      st.activity = await api("GET", "/api/runs/" + id + "/activity").catch(() => null);
    }
    render();
  }

  function render() {
    if (st.closed) return;
    renderSummary(); renderAgents(); renderTasks(); renderApprovals(); renderTranscript(); renderSend();
  }

  function renderSummary() {
    const s = st.session;
    if (!s) { els.summary.replaceChildren(h("span", { class: st.error ? "error" : "muted" }, st.error || "…")); return; }
    els.summary.replaceChildren(
      h("span", {}, status(s.status), st.run && st.run.running ? h("span", { class: "muted" }, " open") : ""),
      h("span", { class: "title" }, s.title || ""),
      h("span", {}, "session ", h("b", {}, s.id)),
      // A run of this server has the whole tree's figures as they grow;
      // the session record's change only when a turn ends.
      st.run ? h("span", { title: "the main agent and every subagent, so far" }, "tokens (all agents) ", h("b", {}, fmt.tokens(st.run.tokens))) : h("span", {}, "tokens ", h("b", {}, fmt.tokens(s.tokens))),
      st.run ? h("span", {}, "cost ", h("b", {}, fmt.cost(st.run.cost_usd))) : h("span", {}, "cost ", h("b", {}, fmt.cost(s.cost_usd))),
      h("span", {}, "turns ", h("b", {}, s.num_turns)),
      h("span", { class: "muted" }, s.cwd));
  }

  // rows: the main agent, then its subagent runs depth first, each with
  // its start, end, calls and figures.
  function rows() {
    const now = Date.now();
    const child = new Map((st.tree ? st.tree.children : []).map((c) => [c.id, c]));
    const out = [];
    const s = st.session || {};
    if (st.activity) {
      const m = st.activity.main;
      const busy = s.status === "running" || st.activity.runs.some((r) => !r.ended);
      out.push({ id, depth: 0, name: "main", desc: s.title || "", status: busy ? "running" : (s.status || "idle"),
        start: Date.parse(m.started), end: m.ended ? Date.parse(m.ended) : (busy ? now : Math.max(Date.parse(s.updated) || 0, Date.parse(m.started))),
        calls: m.calls, tokens: s.tokens, cost: s.cost_usd });
      const by = new Map();
      for (const r of st.activity.runs) (by.get(r.parent_tool_use_id || "") || by.set(r.parent_tool_use_id || "", []).get(r.parent_tool_use_id || "")).push(r);
      const walk = (parent, depth) => {
        for (const r of by.get(parent) || []) {
          const c = child.get(r.agent_id) || {};
          out.push({ id: r.agent_id, depth, name: r.agent_type || "agent", desc: r.description, status: r.ended ? (r.status || "completed") : "running",
            start: Date.parse(r.started), end: r.ended ? Date.parse(r.ended) : now, calls: r.calls, tokens: Math.max(r.tokens || 0, c.tokens || 0),
            cost: c.cost_usd, background: r.background, tool: r.tool, toolUses: r.tool_uses });
          walk(r.tool_use_id, depth + 1);
        }
      };
      walk("", 1);
      return out;
    }
    // A session of an earlier server: its record and its children's.
    out.push({ id, depth: 0, name: s.agent || "main", desc: s.title || "", status: s.status, start: Date.parse(s.created), end: Date.parse(s.updated), calls: [], tokens: s.tokens, cost: s.cost_usd });
    for (const c of st.tree ? st.tree.children : []) {
      out.push({ id: c.id, depth: 1, name: c.agent, desc: c.description || c.title, status: c.status, start: Date.parse(c.created),
        end: c.status === "running" ? now : Date.parse(c.updated), calls: [], tokens: c.tokens, cost: c.cost_usd });
    }
    return out;
  }

  function renderAgents() {
    const rs = rows();
    if (!rs.length) { els.agents.replaceChildren(h("p", { class: "muted" }, "…")); return; }
    const t0 = Math.min(...rs.map((r) => r.start).filter((x) => !isNaN(x)));
    const t1 = Math.max(...rs.map((r) => r.end).filter((x) => !isNaN(x)), t0 + 1000);
    const span = t1 - t0;
    const pct = (t) => ((t - t0) / span) * 100;
    const body = h("tbody");
    for (const r of rs) {
      const lane = h("div", { class: "lane-box" });
      const bar = h("div", { class: "bar s-" + r.status, "data-agent": r.name, title: `${r.name} ${r.status} ${fmt.dur(r.end - r.start)}`,
        style: { left: pct(r.start) + "%", width: Math.max(pct(r.end) - pct(r.start), 0.4) + "%" } });
      lane.append(bar);
      for (const c of r.calls || []) {
        lane.append(h("div", { class: "tick", title: c.name + " at +" + fmt.dur(Date.parse(c.at) - t0), style: { left: pct(Date.parse(c.at)) + "%" } }));
      }
      body.append(h("tr", { class: "agent" + (r.id === st.selected ? " selected" : ""), "data-agent": r.name, "data-id": r.id,
        onclick: () => select(r.id) },
        h("td", { class: "name" }, r.depth ? h("span", { class: "tree" }, "  ".repeat(r.depth - 1) + "└ ") : "", r.name, r.background ? h("span", { class: "muted" }, " bg") : ""),
        h("td", { class: "title" }, r.desc || "", r.tool && r.status === "running" ? h("span", { class: "tool" }, " · ", h("b", {}, r.tool)) : ""),
        h("td", {}, status(r.status)),
        h("td", { class: "num" }, fmt.dur(r.end - r.start)),
        h("td", { class: "num" }, (r.calls || []).length),
        h("td", { class: "num" }, fmt.tokens(r.tokens)),
        h("td", { class: "num" }, fmt.cost(r.cost)),
        h("td", { class: "lane" }, lane)));
    }
    els.agents.replaceChildren(h("table", { class: "agents" },
      h("thead", {}, h("tr", {}, ["agent", "task", "status", "time", "tools", "tokens", "cost"].map((x) => h("th", {}, x)),
        h("th", {}, h("div", { class: "axis" }, h("span", {}, "0s"), h("span", {}, fmt.dur(span)))))),
      body));
  }

  // The session's background tasks, oldest first: its background agents
  // and its background commands (Bash run_in_background, kind local_bash).
  function renderTasks() {
    const ts = (st.tasks || []).slice().reverse();
    if (!ts.length) { els.tasks.replaceChildren(); return; }
    const now = Date.now();
    const body = h("tbody");
    for (const t of ts) {
      const start = Date.parse(t.started) || Date.parse(t.created);
      const end = t.status === "running" || t.status === "pending" ? now : Date.parse(t.finished);
      const what = t.kind === "local_bash" ? h("span", { class: "mono" }, t.prompt) : (t.description || "");
      const stop = t.status === "running" || t.status === "pending"
        ? h("button", { class: "danger", onclick: () => api("POST", "/api/tasks/" + encodeURIComponent(t.id) + "/stop").then(() => refreshSoon("tasks"), (e) => els.tasks.append(h("p", { class: "error" }, e.message))) }, "Stop")
        : "";
      body.append(h("tr", { "data-task": t.id, "data-kind": t.kind },
        h("td", { class: "id", title: t.id }, fmt.short(t.id)),
        h("td", { class: "mono" }, t.kind === "local_bash" ? "shell" : t.agent),
        h("td", {}, status(t.status)),
        h("td", { class: "title" }, t.kind === "local_bash" && t.description !== t.prompt ? [t.description, " · "] : "", what),
        h("td", { class: "num" }, fmt.dur(end - start)),
        h("td", {}, h("a", { href: "/api/tasks/" + encodeURIComponent(t.id) + "/output", target: "_blank", rel: "noopener" }, "output"), " ", stop)));
    }
    els.tasks.replaceChildren(h("h2", {}, "Background tasks"), h("table", { class: "tasks" },
      h("thead", {}, h("tr", {}, ["id", "kind", "status", "task", "time", ""].map((x) => h("th", {}, x)))), body));
  }

  function select(agentID) {
    st.selected = agentID;
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
        h("div", { class: "head" }, h("b", {}, a.agent), a.agent_id ? " " + fmt.short(a.agent_id) : "", " wants ", h("b", {}, a.tool), a.target ? " " + a.target : ""),
        a.reason ? h("div", { class: "muted" }, a.reason) : "",
        a.diff ? diffView(a.diff) : h("pre", {}, JSON.stringify(a.input, null, 2)),
        h("div", { class: "actions" },
          h("button", { class: "primary", onclick: () => answer("allow") }, "Allow once"),
          a.suggestions && a.suggestions.length ? h("button", { onclick: () => answer("always"), title: "adds " + a.suggestions.join(", ") }, "Always allow") : "",
          msg, h("button", { class: "danger", onclick: () => answer("deny") }, "Deny")));
    }));
  }

  function renderTranscript() {
    const who = st.selected === id ? "main" : (rows().find((r) => r.id === st.selected) || {}).name || fmt.short(st.selected);
    els.transcriptHead.textContent = "Transcript · " + who + " · " + st.selected;
    if (st.transcript === null) { els.transcript.replaceChildren(h("div", { class: "entry muted" }, "Loading…")); return; }
    if (!st.transcript.length) { els.transcript.replaceChildren(h("div", { class: "entry muted" }, "Nothing yet.")); return; }
    els.transcript.replaceChildren(...st.transcript.map(entry));
  }

  function renderSend() {
    if (!(st.run && st.run.running)) { els.send.replaceChildren(); return; }
    const main = st.selected === id;
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
    } }, ta, h("button", { class: "primary", type: "submit" }, "Send"),
      h("button", { type: "button", onclick: () => api("POST", `/api/runs/${id}/interrupt`) }, "Interrupt"),
      h("button", { type: "button", class: "danger", onclick: () => api("POST", `/api/runs/${id}/abort`) }, "Stop all"));
    // Keep what is being typed across re-renders.
    if (els.send.firstChild && els.send.firstChild.dataset.for === st.selected) return;
    form.dataset.for = st.selected;
    els.send.replaceChildren(form);
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
      const todo = ["activity", "run"];
      if (agent === st.selected || ev.type === "result") todo.push("transcript");
      if (ev.type === "result" || (d.subtype && d.subtype.startsWith("task_"))) todo.push("tree", "session", "tasks");
      for (const w of todo) refreshSoon(w);
    };
    for (const t of ["system", "assistant", "user", "result"]) es.addEventListener(t, any);
    es.addEventListener("approvals", (ev) => { st.approvals = JSON.parse(ev.data); renderApprovals(); });
    es.addEventListener("end", () => { es.close(); conn.className = "conn"; for (const w of ["run", "activity", "session", "tree", "transcript", "tasks"]) refreshSoon(w); });
  }

  page = { close() { st.closed = true; if (st.es) st.es.close(); st.timers.forEach(clearTimeout); clearInterval(st.tick); conn.className = "conn"; } };
  (async () => {
    await load(new Set(["session", "tree", "run", "transcript", "tasks"]));
    if (st.run) {
      await load(new Set(["activity"]));
      if (st.run.running) connect();
    }
    // Running bars grow with the clock.
    st.tick = setInterval(() => { if (st.run && st.run.running) renderAgents(); }, 1000);
  })();
}

// entry renders one transcript entry: text, tool calls and results.
function entry(e) {
  const m = e.message;
  const role = e.type === "assistant" ? "assistant" : e.type === "user" ? "user" : e.type;
  const el = h("div", { class: "entry " + role }, h("div", { class: "who" }, role, " · ", fmt.when(e.timestamp)));
  if (!m) { el.append(h("pre", { class: "muted" }, e.subtype || "")); return el; }
  for (const b of m.content || []) {
    if (b.type === "text") el.append(h("pre", {}, b.text));
    else if (b.type === "thinking") el.append(h("pre", { class: "muted" }, b.thinking || ""));
    else if (b.type === "tool_use") el.append(h("div", { class: "tool" }, "→ ", h("b", {}, b.name), " ", JSON.stringify(b.input)));
    else if (b.type === "tool_result") {
      const text = (b.content || []).map((c) => c.text || "").join("\n") || (typeof b.content === "string" ? b.content : "");
      el.append(h("pre", { class: "result" + (b.is_error ? " error" : "") }, text));
    } else el.append(h("div", { class: "muted" }, "[" + b.type + "]"));
  }
  return el;
}

function route() {
  page.close();
  page = { close() {} };
  const parts = location.hash.replace(/^#\/?/, "").split("/");
  if (parts[0] === "session" && parts[1]) sessionPage(parts[1], parts[2]);
  else sessionsPage();
}

window.addEventListener("hashchange", route);
route();
