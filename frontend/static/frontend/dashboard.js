// The moderator dashboard: the `moderate` socket, the question with its answer line, the
// judge's suggestion and the ruling buttons (keys a/r/n/p), match controls, scores and a log.
import {
  MatchSocket, answerHtml, applyEvent, escapeHtml, modelFromSnapshot, pageData, renderHeader, renderScoreboard,
  renderWords, setConn, teamName, toast,
} from "./match.js";

const $ = (id) => document.getElementById(id);
const page = pageData();
let m = null;
let protests = []; // {protest_id, team_id, question_id, reason, at, status, resolution}
let endedQuestion = null; // the last tossup that ended: it may be flagged as ill-posed

const socket = new MatchSocket({
  code: page.code,
  role: "moderate",
  token: page.token,
  onSnapshot(state, seq) {
    m = modelFromSnapshot(state);
    protests = state.protests || [];
    loadRoster();
    log(`snapshot at seq ${seq} (${m.status}, ${m.phase})`);
    render();
  },
  onEvent(type, d, seq) {
    log(describe(type, d), seq);
    if (type === "protest_marked") protests.push(d);
    if (type === "tossup_ended") showFlagForm(d.question_id);
    if (type === "protest_resolved") protests = protests.map((p) => (p.protest_id === d.protest_id ? d : p));
    // bonus_part events carry no answer line: the moderator's snapshot does.
    if (applyEvent(m, type, d) === "resync" || type === "bonus_part") socket.resync();
    render();
  },
  onError: (err) => toast(`${err.code}: ${err.message}`),
  onStatus: setConn,
});

function player(id) {
  return (m.players.find((p) => p.id === id) || {}).name || `player ${id}`;
}

function describe(type, d) {
  switch (type) {
    case "words": return `words ${d.start}–${d.start + d.words.length - 1}`;
    case "tossup_started": return `tossup ${d.index + 1} started (${d.token_count} words)`;
    case "buzz": return `BUZZ ${d.player} (${d.team}, ${d.kind}) at word ${d.token_index}`;
    case "answer_given": return `${player(d.player_id)} answered “${d.guess}” → judge: ${d.verdict}${d.reason ? ` (${d.reason})` : ""}`;
    case "buzz_ruled": return `${player(d.player_id)}: ${d.ruling} ${d.points}`;
    case "tossup_ended": return `tossup ended: ${d.outcome}`;
    case "bonus_answer_given": return `bonus part ${d.part + 1}: “${d.guess}” → judge: ${d.verdict}`;
    case "bonus_part_ruled": return `bonus part ${d.part + 1}: ${d.ruling} ${d.points}`;
    case "points_adjusted": return `${teamName(m, d.team_id)} ${d.points} points: ${d.reason}`;
    case "question_flagged": return `flag from ${d.reporter}: ${d.problem}`;
    case "bonus_started": return `bonus for ${teamName(m, d.team_id)}`;
    case "bonus_part": return `bonus part ${d.part + 1} read`;
    case "bonus_prompt": return `bonus part ${d.part + 1}: prompt${d.directed_prompt ? ` “${d.directed_prompt}”` : ""}`;
    case "buzz_received": return `buzz received from ${player(d.player_id)} at word ${d.token_index}`;
    case "tossup_answer": return "answer line sent to the moderator";
    case "tossup_replayed": return `tossup replayed from the start (scores ${JSON.stringify(d.scores)})`;
    case "tossup_revealed": return `answer revealed after ${d.words_revealed} words`;
    case "ruling_undone": return `${d.bonus_id != null ? `bonus part ${d.part + 1}` : player(d.player_id)}: ${d.points_reversed} points reversed${d.reason ? ` (${d.reason})` : ""}`;
    case "protest_marked": return `protest #${d.protest_id} by ${protestBy(d)}: ${d.reason}`;
    case "protest_resolved": return `protest #${d.protest_id} resolved: ${teamName(m, d.resolution.team_id)} ${d.resolution.points} points`;
    case "race": return `race: ${d.candidates.length} candidate(s), rule ${d.rule}`;
    default: return `${type} ${Object.keys(d).length ? JSON.stringify(d).slice(0, 120) : ""}`;
  }
}

function protestBy(p) {
  return p.team_id == null ? "the moderator" : teamName(m, p.team_id);
}

function renderProtests() {
  const open = protests.filter((p) => p.status === "open");
  const select = $("adjust-protest");
  const chosen = select.value;
  select.innerHTML = `<option value="">no protest</option>${open.map((p) => `<option value="${p.protest_id}">#${p.protest_id} ${escapeHtml(p.reason.slice(0, 30))}</option>`).join("")}`;
  if (open.some((p) => String(p.protest_id) === chosen)) select.value = chosen;
  $("protests").innerHTML = protests
    .map((p) => `<li>#${p.protest_id} ${escapeHtml(protestBy(p))} on question ${p.question_id ?? "—"}: ${escapeHtml(p.reason)} — <strong>${p.status}</strong>${p.resolution ? ` (${escapeHtml(teamName(m, p.resolution.team_id))} ${p.resolution.points})` : ""}</li>`)
    .join("");
}

function log(text, seq = null) {
  const li = document.createElement("li");
  li.textContent = `${new Date().toLocaleTimeString()} ${seq !== null ? `#${seq} ` : ""}${text}`;
  const list = $("log");
  list.prepend(li);
  while (list.children.length > 300) list.lastChild.remove();
}

function render() {
  if (!m) return;
  const t = m.tossup;
  renderHeader(m);
  renderScoreboard($("scoreboard"), m);
  renderWords($("q-text"), t, { buzzIndex: t && t.buzz ? t.buzz.token_index : null });
  $("q-progress").textContent = t ? `· word ${t.words.length}/${t.token_count} · ${m.phase}${m.paused ? " (paused)" : ""}` : "";
  $("q-answer").innerHTML = t && t.answer_line ? answerHtml(t.answer_line) : "—";
  $("status-line").textContent = `${m.status} · ${m.wpm} wpm`;
  $("btn-pause").textContent = m.paused ? "Resume" : "Pause";
  $("btn-pause").dataset.cmd = m.paused ? "resume" : "pause";
  if (document.activeElement !== $("wpm")) $("wpm").value = Math.round(m.wpm);

  const teamSelect = $("adjust-team");
  if (teamSelect.options.length !== m.teams.length) {
    teamSelect.innerHTML = m.teams.map((x) => `<option value="${x.id}">${escapeHtml(x.name)}</option>`).join("");
    $("protest-team").innerHTML = `<option value="">moderator note</option>${teamSelect.innerHTML}`;
  }
  renderProtests();

  // Ruling panel: the pending tossup buzz, or the pending bonus answer.
  const buzz = t && t.buzz && ["answering", "ruling"].includes(m.phase) ? t.buzz : null;
  const bonusPending = m.bonus && m.phase === "bonus_ruling" ? m.bonus.pending : null;
  $("ruling").hidden = !buzz && !bonusPending;
  if (buzz) {
    $("buzz-line").textContent = `${player(buzz.player_id)} (${teamName(m, buzz.team_id)}) buzzed at word ${buzz.token_index}`;
    $("judge-line").innerHTML = buzz.guess != null
      ? `Answer: <strong>“${escapeHtml(buzz.guess)}”</strong> — judge suggests <strong>${escapeHtml(buzz.verdict)}</strong>${buzz.reason ? ` <span class="muted">(${escapeHtml(buzz.reason)})</span>` : ""}${buzz.directed_prompt ? ` · prompt: “${escapeHtml(buzz.directed_prompt)}”` : ""}`
      : "waiting for the answer…";
    if (buzz.directed_prompt && !$("directed-prompt").value) $("directed-prompt").value = buzz.directed_prompt;
  } else if (bonusPending) {
    $("buzz-line").textContent = `Bonus part ${bonusPending.part + 1} (${teamName(m, m.bonus.team_id)})`;
    $("judge-line").innerHTML = `Answer: <strong>“${escapeHtml(bonusPending.guess)}”</strong> — judge suggests <strong>${escapeHtml(bonusPending.verdict)}</strong>${bonusPending.directed_prompt ? ` · prompt: “${escapeHtml(bonusPending.directed_prompt)}”` : ""}`;
    if (bonusPending.directed_prompt && !$("directed-prompt").value) $("directed-prompt").value = bonusPending.directed_prompt;
  } else {
    $("directed-prompt").value = "";
  }
  renderBonus();
}

function renderBonus() {
  const b = m.bonus;
  $("bonus").hidden = !b;
  if (!b) return;
  const parts = b.parts
    .map((p) => {
      const res = p.result ? ` → <strong>${escapeHtml(p.result.ruling)}</strong> (${p.result.points})` : "";
      const ans = p.answer_line ? `<br><span class="muted">Answer:</span> ${answerHtml(p.answer_line)}` : "";
      return `<li${p.part === b.part && !b.ended ? ' class="current"' : ""}>[${p.value}] ${escapeHtml(p.text)}${ans}${res}</li>`;
    })
    .join("");
  $("bonus").innerHTML = `<p><strong>Bonus for ${escapeHtml(teamName(m, b.team_id))}</strong> ${escapeHtml(b.leadin)}</p><ol>${parts}</ol>${b.ended ? `<p>Bonus total: ${b.points}</p>` : ""}`;
}

function showFlagForm(questionId) {
  endedQuestion = questionId;
  $("flag-question").textContent = `#${questionId}`;
  $("flag-form").hidden = false;
}

$("flag-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  if (endedQuestion === null) return;
  socket.send({ type: "flag", question_id: endedQuestion, problem: $("flag-problem").value, comment: $("flag-comment").value.trim() });
  $("flag-comment").value = "";
  toast("flag sent", "info");
});

function command(name, extra = {}) {
  socket.send({ type: "command", name, ...extra });
}

function rule(outcome) {
  if ($("ruling").hidden) return;
  const extra = { outcome };
  const directed = $("directed-prompt").value.trim();
  if (outcome === "prompt" && directed) extra.directed_prompt = directed;
  command("rule", extra);
}

document.querySelector(".controls").addEventListener("click", (ev) => {
  const btn = ev.target.closest("button[data-cmd]");
  if (!btn) return;
  if (btn.dataset.cmd === "end" && !confirm("End the match?")) return;
  if (btn.dataset.cmd === "replay" && !confirm("Replay this tossup? Its points and its bonus are reversed.")) return;
  command(btn.dataset.cmd);
});
$("ruling").addEventListener("click", (ev) => {
  const btn = ev.target.closest("button[data-rule]");
  if (btn) rule(btn.dataset.rule);
});
$("speed-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  command("speed", { wpm: Number($("wpm").value) });
});
$("adjust-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const extra = { team_id: Number($("adjust-team").value), points: Number($("adjust-points").value), reason: $("adjust-reason").value.trim() };
  if ($("adjust-protest").value) extra.protest_id = Number($("adjust-protest").value);
  command("adjust", extra);
  $("adjust-points").value = "";
  $("adjust-reason").value = "";
});
$("protest-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const extra = { reason: $("protest-reason").value.trim() };
  if ($("protest-team").value) extra.team_id = Number($("protest-team").value);
  command("protest", extra);
  $("protest-reason").value = "";
});
document.addEventListener("keydown", (ev) => {
  if (["INPUT", "TEXTAREA", "SELECT"].includes(document.activeElement.tagName) || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const outcome = { a: "accept", r: "reject", n: "no_penalty", p: "prompt" }[ev.key.toLowerCase()];
  if (outcome) {
    ev.preventDefault();
    rule(outcome);
  }
});

// --- seats: the roster and one-time reclaim codes (HTTP; moderator token + CSRF) ----------
const reclaimCodes = new Map(); // player_id -> code issued in this page

async function api(url, method = "GET") {
  const res = await fetch(url, {
    method,
    headers: { "X-Moderator-Token": page.token, "X-CSRFToken": page.csrf || "" },
    credentials: "same-origin",
  });
  const body = await res.json().catch(() => ({ code: "http", message: `HTTP ${res.status}` }));
  if (!res.ok) throw new Error(body.message || body.code);
  return body;
}

async function loadRoster() {
  let body;
  try {
    body = await api(`/api/match/${encodeURIComponent(page.code)}/players`);
  } catch (err) {
    toast(`players: ${err.message}`);
    return;
  }
  $("roster").innerHTML = body.players
    .map((p) => {
      const code = reclaimCodes.get(p.player_id);
      const action = p.kind !== "human"
        ? '<span class="muted">bot</span>'
        : code && p.reclaim_pending
          ? `reclaim code <strong class="mono reclaim-code">${escapeHtml(code)}</strong>`
          : `<button type="button" data-reclaim="${p.player_id}">issue reclaim code</button>${p.reclaim_pending ? ' <span class="muted">(a code is pending)</span>' : ""}`;
      return `<tr data-player="${p.player_id}"><td>#${p.player_id}</td><td>${escapeHtml(p.name)}</td><td>${escapeHtml(p.team)}</td><td>${action}</td></tr>`;
    })
    .join("");
}

$("roster").addEventListener("click", async (ev) => {
  const btn = ev.target.closest("button[data-reclaim]");
  if (!btn) return;
  const id = Number(btn.dataset.reclaim);
  const row = btn.closest("tr");
  const name = row ? row.children[1].textContent : `player ${id}`;
  if (!confirm(`Issue a reclaim code for ${name}? Whoever types it with that name takes the seat, and the old tablet loses it.`)) return;
  try {
    const body = await api(`/api/match/${encodeURIComponent(page.code)}/players/${id}/reclaim`, "POST");
    reclaimCodes.set(id, body.reclaim_code);
    toast(`Reclaim code for ${body.name}: ${body.reclaim_code}`, "info", 10000);
  } catch (err) {
    toast(`reclaim: ${err.message}`);
  }
  loadRoster();
});
$("roster-refresh").addEventListener("click", loadRoster);
// Lobby joins publish no event: refresh the roster now and then (cheap: one small query).
setInterval(() => { if (document.visibilityState === "visible") loadRoster(); }, 10000);

socket.connect();
