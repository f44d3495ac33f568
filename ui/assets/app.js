// git codex's page: reads /api/state and /api/events, listens to
// /api/stream and re-reads the state after each new commit. Plain DOM, no
// library; every text from the state goes in through textContent.
"use strict";

const params = new URLSearchParams(location.search);
const at = params.get("at") || "";
let state = null;
let logNext = "";
let reloadTimer = null;
let stateSeq = 0; // only the newest request's answer is shown

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v === true ? "" : v);
  }
  for (const k of kids.flat()) {
    if (k === null || k === undefined) continue;
    e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  }
  return e;
}

function table(caption, heads, rows, opt) {
  const t = el("table", {},
    el("caption", { class: "muted" }, caption),
    el("thead", {}, el("tr", {}, heads.map((h, i) => el("th", { scope: "col", class: opt && opt.includes(i) ? "opt" : null }, h)))),
    el("tbody", {}, rows));
  return el("div", { class: "scroll" }, t);
}

function td(v, cls) { return el("td", { class: cls || null }, v === undefined || v === null ? "" : v); }
function short(c) { return c ? String(c).slice(0, 10) : ""; }
function when(t) { if (!t) return ""; const d = new Date(t); return isNaN(d) ? "" : d.toLocaleString(); }

async function api(path, opts) {
  const res = await fetch(path, Object.assign({ credentials: "same-origin", cache: "no-store" }, opts || {}));
  let body = null;
  try { body = await res.json(); } catch (e) { body = null; }
  if (!res.ok) {
    const msg = body && body.error ? body.error.code + ": " + body.error.message : res.status + " " + res.statusText;
    throw new Error(msg);
  }
  return body;
}

function notice(msg) {
  const n = document.getElementById("notice");
  n.textContent = msg || "";
  n.hidden = !msg;
}

function withAt(path) {
  if (!at) return path;
  return path + (path.includes("?") ? "&" : "?") + "at=" + encodeURIComponent(at);
}

async function loadState() {
  const mine = ++stateSeq;
  try {
    const s = await api(withAt("/api/state"));
    if (mine !== stateSeq) return;
    state = s;
    notice("");
    render();
  } catch (e) {
    notice(e.message);
  }
}

function render() {
  const s = state;
  const start = document.getElementById("start");
  start.hidden = s.initialized;
  document.getElementById("start-text").textContent = s.hint || "";
  document.getElementById("where").textContent = s.initialized
    ? (s.tip ? "Now" : "Past state") + " at " + short(s.commit) + " (clock " + s.clock + ", " + when(s.time) + ")"
    : "No state yet";
  renderInstances(s);
  renderReviews(s);
  renderMail(s);
  renderRecords(s);
}

function actionButtons(a) {
  if (!state.tip || !a.status) return "";
  // another machine runs it: peek, nudge, abandon and kill would all be
  // refused here (INSTANCE_ELSEWHERE), so none is offered; say where
  if (a.live === "elsewhere") {
    const where = a.host || "its machine";
    return el("span", { class: "muted elsewhere", title: "runs on " + where + ": peek, nudge, abandon or kill it there (git codex peek/send/abandon/kill " + a.id + ")" }, "on " + where);
  }
  const b = (label, fn) => el("button", { type: "button", onclick: fn, "aria-label": label + " " + a.id }, label);
  return el("span", { class: "actions" },
    b("Peek", () => peek(a.id)),
    b("Nudge", () => { const t = prompt("Type into " + a.id + "'s pane:"); if (t) act("instance_send", { id: a.id, text: t }); }),
    b("Abandon", () => { if (confirm("Abandon " + a.id + "?")) act("instance_abandon", { id: a.id }); }),
    b("Kill", () => { if (confirm("Kill " + a.id + "?")) act("instance_kill", { id: a.id }); }));
}

function renderInstances(s) {
  const body = document.getElementById("instances-body");
  const groups = new Map();
  for (const a of s.agents) {
    const key = a.epic ? "epic " + a.epic : a.supervisor ? "supervisor " + a.supervisor : "no supervisor";
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(a);
  }
  const out = [];
  if (!s.agents.length) out.push(el("p", { class: "muted" }, "No agents yet. Start one with `git codex spawn coding \"<task>\"`."));
  for (const [key, list] of groups) {
    out.push(el("h3", {}, key + " (" + list.length + ")"));
    out.push(table("Instances under " + key, ["id", "type", "status", "live", "branch", "worktree", "updated", "actions"],
      list.map(a => el("tr", { "data-agent": a.id },
        el("th", { scope: "row" }, a.id), td(a.type), td(a.status || "registered", "status st-" + (a.status || "")),
        td(a.live === "elsewhere" && a.host ? "elsewhere (" + a.host + ")" : a.live || "", "live-" + (a.live || "")), td(a.branch, "mono"), td(a.worktree, "mono opt"), td(when(a.updated_at || a.created_at), "opt"),
        el("td", {}, actionButtons(a)))), [5, 6]));
  }
  body.replaceChildren(...out);
}

function kind(s, name) { return (s.kinds || []).find(k => k.name === name) || { records: [], count: 0 }; }

function renderReviews(s) {
  const rels = kind(s, "relationship").records;
  const fbs = kind(s, "feedback").records;
  const byCoder = new Map();
  for (const r of rels) {
    if (!byCoder.has(r.parent)) byCoder.set(r.parent, []);
    byCoder.get(r.parent).push({ it: r.iteration, reviewer: r.child, commit: r.reviewed_commit, at: r.created_at, fb: null });
  }
  for (const f of fbs) {
    const list = byCoder.get(f.coder) || [];
    const row = list.find(x => x.it === f.iteration && x.reviewer === f.reviewer);
    if (row) row.fb = f; else { list.push({ it: f.iteration, reviewer: f.reviewer, commit: f.reviewed_commit, at: f.created_at, fb: f }); byCoder.set(f.coder, list); }
  }
  const out = [];
  if (!byCoder.size) out.push(el("p", { class: "muted" }, "No reviews yet: a coder asks with request_review."));
  for (const [coder, list] of byCoder) {
    list.sort((a, b) => a.it - b.it);
    out.push(el("h3", {}, coder + " — " + list.length + " of " + (s.review_limit || "?") + " reviews"));
    out.push(table("Review loop of " + coder, ["iteration", "reviewer", "reviewed", "verdict", "feedback", "landed as"],
      list.map(x => el("tr", {}, td(x.it), td(x.reviewer), td(short(x.commit), "mono"),
        td(x.fb ? x.fb.feedback_type + (x.fb.priority ? " (" + x.fb.priority + ")" : "") : "pending"),
        td(x.fb ? x.fb.feedback + (x.fb.actionable_items && x.fb.actionable_items.length ? "\n• " + x.fb.actionable_items.join("\n• ") : "") : "", "wrap"),
        td(x.fb ? short(x.fb.commit) + (x.fb.delivery && x.fb.delivery !== "delivered" ? " " + x.fb.delivery : "") : "", "mono")))));
  }
  document.getElementById("reviews-body").replaceChildren(...out);
}

function renderMail(s) {
  const counts = Object.entries(s.mail || {}).sort();
  const out = [];
  out.push(table("Mail per recipient", ["recipient", "messages", "unread"],
    counts.map(([to, c]) => el("tr", {}, el("th", { scope: "row" },
      el("a", { href: "#inbox", onclick: () => showInbox(to) }, to === "human" ? "human (the people's inbox)" : to)), td(c.total), td(c.unread)))));
  out.push(el("section", { id: "inbox", hidden: true, "aria-labelledby": "inbox-h" }, el("h3", { id: "inbox-h", tabindex: "-1" }, "Inbox"), el("div", { id: "inbox-body" })));
  const mail = kind(s, "mail").records;
  out.push(el("h3", {}, "Newest messages"));
  out.push(mailTable("Newest mail, all recipients", mail.slice(0, 100)));
  document.getElementById("mail-body").replaceChildren(...out);
}

function mailTable(caption, mail) {
  return table(caption, ["when", "from", "to", "subject", "body", "read"],
    mail.map(m => el("tr", {}, td(when(m.created_at)), td(m.from), td(m.to), td(m.subject), td(m.body, "wrap"), td(m.is_read ? "yes" : "no"))));
}

// showInbox pages one recipient's mail from /api/records (newest first).
async function showInbox(to) {
  try {
    const page = await api(withAt("/api/records/mail?limit=200&under=" + encodeURIComponent(to)));
    const sec = document.getElementById("inbox");
    sec.hidden = false;
    document.getElementById("inbox-h").textContent = "Inbox of " + to + " (" + page.count + (page.count > page.records.length ? ", newest " + page.records.length + " shown" : "") + ")";
    document.getElementById("inbox-body").replaceChildren(mailTable("Mail to " + to, page.records));
    document.getElementById("inbox-h").focus();
  } catch (e) {
    notice(e.message);
  }
}

// Every other kind is shown the same way: its newest records as a table of
// their simple fields, so a kind added to the tools shows up by itself.
function renderRecords(s) {
  const skip = new Set(["agent", "mail", "relationship", "feedback"]);
  const out = [];
  for (const k of s.kinds || []) {
    if (skip.has(k.name)) continue;
    const cols = [];
    for (const r of k.records.slice(0, 50)) {
      for (const [key, v] of Object.entries(r || {})) {
        if (cols.length < 8 && !cols.includes(key) && !/token|hash$/.test(key)) cols.push(key);
      }
    }
    const cell = v => {
      if (!v || typeof v !== "object") return v;
      if (v.holder) return "held by " + v.holder;
      if (v.phase) return "phase " + v.phase + (v.active_role ? ", " + v.active_role + " active" : "");
      const j = JSON.stringify(v);
      return j.length > 120 ? j.slice(0, 117) + "…" : j;
    };
    const d = el("details", { open: k.count > 0 && k.count <= 20 },
      el("summary", {}, k.name + " (" + k.count + (k.more ? ", newest " + k.records.length + " shown" : "") + ")"),
      k.count ? table(k.name + " records in " + k.dir + "/", cols, k.records.map(r => el("tr", {}, cols.map(c => td(cell(r[c]), "wrap"))))) : el("p", { class: "muted" }, "none"));
    out.push(d);
  }
  document.getElementById("records-body").replaceChildren(...out);
}

function logQuery(before) {
  const q = new URLSearchParams();
  q.set("limit", "50");
  const tool = document.getElementById("f-tool").value.trim();
  const actor = document.getElementById("f-actor").value.trim();
  if (tool) q.set("tool", tool);
  if (actor) q.set("actor", actor);
  if (document.getElementById("f-errors").checked) q.set("errors", "1");
  if (document.getElementById("f-changes").checked) q.set("changes", "1");
  if (document.getElementById("f-reads").checked) q.set("reads", "1");
  if (before) q.set("before", before);
  else if (at) q.set("at", at);
  return "/api/events?" + q.toString();
}

function eventRow(e) {
  return el("tr", { "data-commit": e.commit },
    td(when(e.time), "opt"), td(e.kind, "k-" + e.kind), td(e.tool), td(e.actor), td(e.result, e.error ? "k-refusal" : ""),
    td(e.summary, "wrap"),
    el("td", {}, el("a", { href: "#commit", onclick: () => showCommit(e.commit) }, short(e.commit)), " ",
      el("a", { href: "?at=" + e.commit, title: "the state after this call" }, "state")));
}

let logTbody = null;
async function loadLog(more) {
  try {
    const page = await api(logQuery(more ? logNext : ""));
    logNext = page.next || "";
    document.getElementById("log-more").hidden = !logNext;
    if (!more) {
      logTbody = el("tbody", {});
      const t = el("table", {}, el("caption", { class: "muted" }, "Audit events, newest first"),
        el("thead", {}, el("tr", {}, ["time", "kind", "tool", "actor", "result", "summary", "commit"].map((h, i) => el("th", { scope: "col", class: i === 0 ? "opt" : null }, h)))), logTbody);
      document.getElementById("log-body").replaceChildren(el("div", { class: "scroll" }, t));
    }
    logTbody.append(...page.events.map(eventRow));
  } catch (e) {
    notice(e.message);
  }
}

function matchesFilter(e) {
  const tool = document.getElementById("f-tool").value.trim();
  const actor = document.getElementById("f-actor").value.trim();
  return (!tool || e.tool === tool) && (!actor || e.actor === actor) &&
    (!document.getElementById("f-errors").checked || e.kind === "refusal") &&
    (!document.getElementById("f-changes").checked || e.kind === "change");
}

async function showCommit(id) {
  try {
    const c = await api("/api/commit/" + id);
    const sec = document.getElementById("commit");
    sec.hidden = false;
    document.getElementById("commit-body").replaceChildren(
      el("p", {}, el("code", {}, c.commit), " — ", c.summary),
      el("p", {}, c.tool + " by " + c.actor + ": " + c.result + (c.follows ? " (follows " + short(c.follows) + ")" : "")),
      c.args ? el("pre", {}, c.args) : "",
      c.changes.length ? el("ul", {}, c.changes.map(ch => el("li", {}, ch.action + " ", el("code", {}, ch.path)))) : el("p", { class: "muted" }, "No records changed (a read or a refusal)."));
    document.getElementById("commit-h").focus();
  } catch (e) {
    notice(e.message);
  }
}

async function act(tool, args) {
  const out = document.getElementById("act-result");
  out.textContent = "calling " + tool + "…";
  try {
    const r = await api("/api/call/" + encodeURIComponent(tool), {
      method: "POST", headers: { "Content-Type": "application/json", "X-Codex-UI": "1" }, body: JSON.stringify(args),
    });
    out.textContent = r.ok ? tool + ": ok\n" + JSON.stringify(r.data, null, 2) : tool + ": " + r.error.code + ": " + r.error.message;
    return r;
  } catch (e) {
    out.textContent = tool + ": " + e.message;
    return null;
  }
}

async function peek(id) {
  const r = await act("instance_peek", { id: id, lines: 40 });
  if (r && r.ok) {
    document.getElementById("pane").hidden = false;
    document.getElementById("pane-h").textContent = "Pane of " + id;
    const lines = (r.data.screen || "").replace(/\s+$/, "").split("\n");
    document.getElementById("pane-text").textContent = lines.slice(-40).join("\n");
  }
}

async function loadTools() {
  try {
    const ts = await api("/api/tools");
    document.getElementById("t-name").replaceChildren(...ts.map(t => el("option", { value: t.name, title: t.description }, t.name + (t.command ? " (git codex " + t.command + ")" : ""))));
  } catch (e) { /* the form stays empty */ }
}

function connect() {
  const live = document.getElementById("live");
  if (at) { live.textContent = "a past state: not live"; return; }
  const es = new EventSource("/api/stream");
  es.addEventListener("hello", () => { live.textContent = "live"; live.classList.add("on"); });
  es.addEventListener("commit", ev => {
    const e = JSON.parse(ev.data);
    if (logTbody && matchesFilter(e)) logTbody.prepend(eventRow(e));
    clearTimeout(reloadTimer);
    reloadTimer = setTimeout(loadState, 30);
  });
  es.onerror = () => {
    live.textContent = "reconnecting…"; live.classList.remove("on");
    es.close();
    setTimeout(() => { connect(); loadState(); loadLog(false); }, 1000);
  };
}

document.addEventListener("DOMContentLoaded", () => {
  document.getElementById("at").value = at;
  document.getElementById("at-form").addEventListener("submit", ev => {
    ev.preventDefault();
    const v = document.getElementById("at").value.trim();
    location.search = v ? "?at=" + encodeURIComponent(v) : "";
  });
  document.getElementById("now").addEventListener("click", () => { location.search = ""; });
  document.getElementById("log-filter").addEventListener("submit", ev => { ev.preventDefault(); loadLog(false); });
  document.getElementById("log-more").addEventListener("click", () => loadLog(true));
  document.getElementById("pane-close").addEventListener("click", () => { document.getElementById("pane").hidden = true; });
  document.getElementById("mail-form").addEventListener("submit", ev => {
    ev.preventDefault();
    const f = ev.target;
    act("mail_send", { to: f.to.value, subject: f.subject.value, body: f.body.value }).then(r => { if (r && r.ok) f.reset(); });
  });
  document.getElementById("tool-form").addEventListener("submit", ev => {
    ev.preventDefault();
    let args;
    try { args = JSON.parse(document.getElementById("t-args").value || "{}"); } catch (e) { document.getElementById("act-result").textContent = "the arguments are not JSON: " + e.message; return; }
    act(document.getElementById("t-name").value, args);
  });
  document.getElementById("commit-h").tabIndex = -1;
  loadState();
  loadLog(false);
  loadTools();
  connect();
});
