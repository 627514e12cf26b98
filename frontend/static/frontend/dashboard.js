// The moderator dashboard: the `moderate` socket (with presence frames), the question with the
// moderator preview (unrevealed words greyed, power marks), the ruling panel (keys a/r/n/p), the
// controls the current phase allows, the question list with outcomes, the seats with their live
// connection state, protests, scores and a grouped log.
import {
  ClockOffset, MatchSocket, answerHtml, applyEvent, bonusTextHtml, escapeHtml, modelFromSnapshot, pageData,
  renderHeader, rankTeams, renderScoreboard, resultText, setConn, setHtml, teamName, toast, tokenHtml,
} from "./match.js";
import { initLineups, renderLineups } from "./dashlineups.js";
import { initScoresheet, renderScoresheet, scoresheetError } from "./scoresheet.js";

const $ = (id) => document.getElementById(id);
const page = pageData();
let m = null;
let history = []; // the match's rulings (snapshot `history`, then buzz_ruled / bonus_part_ruled events)
let protests = []; // {protest_id, team_id, question_id, reason, at, status, resolution}
let replaced = []; // questions thrown out for spares (snapshot `replaced`)
let questions = []; // /api/match/<code>/questions: every tossup's words, marks, answer line, outcome
let seats = []; // /api/match/<code>/players
let presence = new Map(); // player_id -> {state, connections, last_seen} (the `presence` frame)
let endedQuestion = null; // the last tossup that ended: it may be flagged as ill-posed
let prompted = null; // the answer the moderator prompted on: {key, guess, directed} (shown beside the new one)
let suggestedFor = null; // which answer the directed-prompt field was filled from (the judge's suggestion)
const clock = new ClockOffset(); // server − this machine, for the countdown to the next tossup

const PHASE_NAMES = {
  lobby: "Lobby: waiting to start", reading: "Reading the tossup", dead_time: "Dead time (tossup read out)",
  answering: "A player is answering", ruling: "Waiting for your ruling", between: "Between questions",
  bonus: "Bonus", bonus_ruling: "Waiting for your bonus ruling", ended: "Match over",
};
const PRESENCE_NAMES = { connected: "connected", reconnecting: "reconnecting", gone: "gone", never: "never joined" };
// Once the match is over a seat that is not connected has simply left.
const LEFT = { reconnecting: "left", gone: "left", never: "never joined" };

const socket = new MatchSocket({
  code: page.code,
  path: "moderate",
  token: page.token,
  params: { presence: 1 },
  onSnapshot(state, seq) {
    m = modelFromSnapshot(state);
    history = state.history || [];
    protests = state.protests || [];
    replaced = state.replaced || [];
    loadRoster();
    loadQuestions();
    log("snapshot", `snapshot at seq ${seq} (${m.status}, ${m.phase})`);
    socket.ping();
    render();
  },
  onEvent(type, d, seq) {
    log(type, describe(type, d), seq);
    if (type === "protest_marked") protests.push(d);
    if (type === "tossup_ended") {
      showFlagForm(d.question_id);
      setOutcome(d.question_id, d.outcome);
    }
    if (type === "tossup_started" || type === "tossup_replayed") setOutcome(d.question_id, null);
    if (type === "ruling_corrected" && d.outcome) setOutcome(d.question_id, d.outcome);
    if (type === "buzz_ruled") history.push({ kind: "tossup", ...d, undone: false });
    if (type === "bonus_part_ruled") history.push({ kind: "bonus", ...d, undone: false });
    if (type === "prompt" || type === "bonus_prompt") rememberPrompt(d);
    if (type === "player_joined") loadRoster();
    if (type === "protest_resolved") protests = protests.map((p) => (p.protest_id === d.protest_id ? d : p));
    // bonus_part events carry no answer line: the moderator's snapshot does.
    if (applyEvent(m, type, d) === "resync" || type === "bonus_part") socket.resync();
    render();
  },
  onPresence(frame) {
    presence = new Map(frame.seats.map((s) => [s.player_id, s]));
    renderRoster();
  },
  onPong: (p) => clock.add(p),
  onError: (err) => {
    scoresheetError(err);
    if (err.code === "stale_view") {
      // Another dashboard (or the reading) changed the match before this command landed: show
      // why nothing happened, and bring the view up to date before the moderator acts again.
      toast(`Not applied: the match changed before your command arrived. Look again. (${err.message})`, "error", 6000);
      socket.resync();
      return;
    }
    toast(`${err.code}: ${err.message}`);
  },
  onStatus: setConn,
});

function player(id) {
  return (m.players.find((p) => p.player_id === id) || seats.find((p) => p.player_id === id) || {}).name || `player ${id}`;
}

function describe(type, d) {
  switch (type) {
    case "tossup_started": return `Tossup ${d.index + 1} started (${d.token_count} words)`;
    case "buzz": return `BUZZ ${d.player} (${d.team}, ${d.kind}) at word ${d.token_index}`;
    case "answer_given": return `${player(d.player_id)} answered “${d.guess}” → judge: ${d.verdict}${d.reason ? ` (${d.reason})` : ""}`;
    case "buzz_ruled": return `${player(d.player_id)}: ${d.ruling} ${d.points}`;
    case "tossup_ended": return `tossup ended: ${d.outcome}`;
    case "bonus_answer_given": return `bonus part ${d.part + 1}: “${d.guess}” → judge: ${d.verdict}`;
    case "bonus_part_ruled": return `bonus part ${d.part + 1}: ${d.ruling} ${d.points}`;
    case "bonus_ended": return `bonus ended: ${d.points} points`;
    case "points_adjusted": return `${teamName(m, d.team_id)} ${d.points} points: ${d.reason}`;
    case "question_flagged": return `flag from ${d.reporter}: ${d.problem}`;
    case "bonus_started": return `bonus for ${teamName(m, d.team_id)}`;
    case "bonus_part": return `bonus part ${d.part + 1} read`;
    case "bonus_prompt": return `bonus part ${d.part + 1}: prompt${d.directed_prompt ? ` “${d.directed_prompt}”` : ""}`;
    case "buzz_received": return `buzz received from ${player(d.player_id)} at word ${d.token_index}`;
    case "tossup_answer": return "answer line sent to the moderator";
    case "awaiting_ruling": return "waiting for your ruling";
    case "bonus_answer_lines": return "bonus answer lines sent to the moderator";
    case "reading_resumed": return "reading resumed";
    case "prompt": return `prompt${d.directed_prompt ? ` “${d.directed_prompt}”` : ""}`;
    case "player_joined": return `${d.name} took a seat (${teamName(m, d.team_id)})`;
    case "team_added": return `team ${d.name} added`;
    case "lineup_changed": return `${teamName(m, d.team_id)} lineup (${d.reason.replace("_", " ")}): ${d.player_in != null ? `${player(d.player_in)} in` : ""}${d.player_in != null && d.player_out != null ? ", " : ""}${d.player_out != null ? `${player(d.player_out)} out` : ""}`;
    case "timeout_called": return `timeout: ${teamName(m, d.team_id)} (${d.length} s, ${d.left} left)`;
    case "timeout_undone": return `UNDONE timeout of ${teamName(m, d.team_id)} (${d.left} left)`;
    case "halftime": return "halftime";
    case "overtime_started": return "tied after regulation: OVERTIME";
    case "paused": return "paused";
    case "resumed": return "resumed";
    case "speed_changed": return `speed ${d.wpm} wpm`;
    case "pace_changed": return d.between_questions === null ? "pace: the next tossup waits for Next" : `pace: the next tossup ${d.between_questions} s after a question`;
    case "between_questions": return d.next_tossup_at === null ? "between questions: waiting for Next" : "between questions";
    case "bonus_withdrawn": return `bonus of ${teamName(m, d.team_id)} withdrawn`;
    case "ruling_corrected": return `CORRECTED ${d.bonus_id != null ? `bonus part ${d.part + 1} (${teamName(m, d.team_id)})` : player(d.player_id)}: ${d.ruling_before} ${signed(d.points_before)} → ${d.ruling} ${signed(d.points)} — ${d.reason}`;
    case "question_replaced": return `THROWN OUT ${d.kind} ${d.kind === "tossup" ? d.tossup_index + 1 : ""}: a spare is read in its place — ${d.reason}`;
    case "ruling_reviewed": return `REVIEWED by ${d.by} ${d.bonus_id != null ? `tossup ${d.tossup_index + 1} bonus part ${d.part + 1}` : `tossup ${d.tossup_index + 1} ${player(d.player_before)}${d.player_id !== d.player_before ? ` → ${player(d.player_id)}` : ""}`}: ${d.ruling_before} ${signed(d.points_before)} → ${d.ruling} ${signed(d.points)} — ${d.reason}`;
    case "buzz_added": return `BUZZ ADDED by ${d.by} tossup ${d.tossup_index + 1} ${player(d.player_id)} ${d.fully_read ? "after the end" : `word ${d.token_index + 1}`}: ${d.ruling} ${signed(d.points)} — ${d.reason}`;
    case "match_started": return "match started";
    case "match_ended": return "match ended";
    case "tossup_replayed": return `tossup replayed from the start (scores ${JSON.stringify(d.scores)})`;
    case "tossup_revealed": return `answer revealed after ${d.revealed_token_count} words`;
    case "ruling_undone": return `UNDONE ${d.bonus_id != null ? `bonus part ${d.part + 1}` : player(d.player_id)}: ${d.points_reversed} points reversed${d.reason ? ` (${d.reason})` : ""}`;
    case "protest_marked": return `protest #${d.protest_id} by ${protestBy(d)}: ${d.reason}`;
    case "protest_resolved": return `protest #${d.protest_id} resolved: ${teamName(m, d.resolution.team_id)} ${d.resolution.points} points`;
    case "race": return `race: ${d.candidates.length} candidate(s), rule ${d.rule}`;
    case "buzz_proposed": return `${player(d.player_id)} (semi-autonomous) would buzz at word ${d.token_index}: waiting for confirmation`;
    case "proposal_closed": return `${player(d.player_id)}'s pending buzz: ${d.outcome}${d.by != null ? ` by ${player(d.by)}` : ""}`;
    case "muted_buzz": return `${player(d.player_id)} (muted) would have buzzed at word ${d.token_index}`;
    case "answer_delegated": return `answer of ${player(d.player_id)}'s buzz given to ${player(d.answerer_id)}`;
    case "bonus_suggestion": return `bonus part ${d.part + 1}: ${player(d.player_id)} suggests “${d.guess}” (${Math.round(d.confidence * 100)}%)`;
    case "bonus_decision": return `bonus part ${d.part + 1}: ${d.decision}${d.consulted != null ? ` (${player(d.consulted)})` : ""}`;
    default: return `${type} ${Object.keys(d).length ? JSON.stringify(d).slice(0, 120) : ""}`;
  }
}

// --- the log: words grouped into one line per tossup, the events that matter highlighted ---
const LOG_KINDS = {
  buzz: "buzz", buzz_received: "buzz", answer_given: "buzz", bonus_answer_given: "buzz", buzz_proposed: "buzz",
  buzz_ruled: "ruling", bonus_part_ruled: "ruling", tossup_ended: "ruling", bonus_ended: "ruling",
  ruling_undone: "correction", ruling_corrected: "correction", question_replaced: "correction", ruling_reviewed: "correction", buzz_added: "correction", tossup_replayed: "correction", points_adjusted: "correction",
  timeout_undone: "correction",
  protest_marked: "correction", protest_resolved: "correction", question_flagged: "correction",
  tossup_started: "start", bonus_started: "start",
};

function log(type, text, seq = null) {
  const list = $("log");
  const first = list.firstElementChild;
  if (type === "words") return; // words are counted on the tossup's own line (wordsLine)
  const li = document.createElement("li");
  li.className = `log-${LOG_KINDS[type] || "info"}`;
  li.textContent = `${new Date().toLocaleTimeString()} ${seq !== null ? `#${seq} ` : ""}${text}`;
  if (first && first.dataset.words) first.after(li);
  else list.prepend(li);
  while (list.children.length > 300) list.lastChild.remove();
}

/** The one log line that follows the words read of the current tossup. */
function wordsLine() {
  const t = m && m.tossup;
  const list = $("log");
  let li = list.querySelector("li[data-words]");
  if (!t || !t.words.length) {
    if (li) li.remove();
    return;
  }
  if (!li || li.dataset.words !== String(t.question_id)) {
    if (li) li.removeAttribute("data-words");
    li = document.createElement("li");
    li.className = "log-words";
    li.dataset.words = String(t.question_id);
    list.prepend(li);
  }
  li.textContent = `tossup ${t.index + 1}: words 1–${t.words.length} of ${t.token_count} read`;
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
    .map((p) => `<li class="${p.status}">#${p.protest_id} ${escapeHtml(protestBy(p))} on question ${p.question_id ?? "—"}: ${escapeHtml(p.reason)} — <strong>${p.status}</strong>${p.resolution ? ` (${escapeHtml(teamName(m, p.resolution.team_id))} ${p.resolution.points})` : ""}</li>`)
    .join("");
}

// --- the question: every word of the live tossup, those not read yet greyed ---------------
function question(id) {
  return questions.find((q) => q.question_id === id) || null;
}

function renderPreview() {
  const t = m.tossup;
  const el = $("q-text");
  // While a bonus is read the tossup's text steps aside (its answer line stays).
  el.hidden = !!(m.bonus && !m.bonus.ended);
  if (!t) {
    el.textContent = m.status === "lobby" ? "The first tossup appears here when you press Start." : "";
    return;
  }
  const q = question(t.question_id);
  const tokens = q ? q.tokens : t.words;
  const read = t.outcome ? tokens.length : t.words.length;
  const buzzAt = t.buzz ? t.buzz.token_index : null;
  const parts = [];
  tokens.forEach((w, i) => {
    if (q && i === q.superpower_index) parts.push('<span class="powermark" title="superpower mark">(+)</span>');
    if (q && i === q.power_index) parts.push('<span class="powermark" title="power mark">(*)</span>');
    parts.push(`<span class="w${i < read ? "" : " unread"}" data-i="${i}">${tokenHtml(t.words[i] ?? w)}</span>`);
    if (i === buzzAt) parts.push('<span class="buzzmark" title="buzz">(#)</span>');
  });
  el.innerHTML = parts.join(" ");
  // Keep the word being read in view when the question overflows its card (laptop layout only).
  const last = el.querySelector(`.w[data-i="${Math.max(0, (buzzAt ?? read) - 1)}"]`);
  const card = el.closest(".question");
  if (last && card.scrollHeight > card.clientHeight) {
    const top = last.offsetTop - card.offsetTop;
    if (top < card.scrollTop || top > card.scrollTop + card.clientHeight - 40) card.scrollTop = top - card.clientHeight / 2;
  }
}

// --- the question list ------------------------------------------------------------------------
async function loadQuestions() {
  try {
    questions = (await api(`/api/match/${encodeURIComponent(page.code)}/questions`)).tossups;
  } catch (err) {
    toast(`questions: ${err.message}`);
    return;
  }
  render();
}

function setOutcome(questionId, outcome) {
  const q = question(questionId);
  if (q) q.outcome = outcome;
}

function signed(points) {
  return points > 0 ? `+${points}` : points < 0 ? `−${-points}` : "0";
}

function outcomeText(q) {
  const t = m.tossup;
  const current = t && t.question_id === q.question_id;
  const standing = history.filter((h) => h.kind === "tossup" && h.question_id === q.question_id && !h.undone);
  // Every neg stays in sight on the rail, the bots' too, whoever took the tossup in the end.
  const negs = standing.filter((h) => h.points < 0).map((h) => `${player(h.player_id)} ${signed(h.points)}`);
  const with_negs = (text) => [text, ...negs].join(" · ");
  if (current && !t.outcome) return ["live", with_negs("reading now")];
  const outcome = q.outcome || (current ? t.outcome : null);
  if (!outcome) return ["unread", "—"];
  if (outcome !== "answered") return [outcome, with_negs(outcome)];
  const win = standing.find((h) => h.ruling === "correct");
  return win ? ["answered", with_negs(`${player(win.player_id)} ${signed(win.points)}`)] : ["undone", "ruling undone"];
}

function renderNav() {
  const current = m.tossup ? m.tossup.question_id : null;
  $("qnav").innerHTML = questions
    .map((q) => {
      const [cls, text] = outcomeText(q);
      return `<li class="q-${cls}${q.question_id === current ? " current" : ""}" data-question="${q.question_id}"${q.question_id === current ? ' aria-current="step"' : ""}><span class="qn">${q.index + 1}</span> <span class="qcat">${escapeHtml(q.category || "tossup")}</span><span class="qout">${escapeHtml(text)}</span></li>`;
    })
    .join("");
}

// --- the phase-aware controls ---------------------------------------------------------------
/** Seconds until the next tossup starts by itself (null: it waits for Next, or none is due). */
function secondsToNext() {
  if (m.phase !== "between" || m.nextTossupAt === null || m.paused) return null;
  return Math.max(0, Math.ceil(m.nextTossupAt - (Date.now() / 1000 + clock.offset)));
}

function renderCountdown() {
  if (!m) return;
  const left = secondsToNext();
  const waiting = m.status === "running" && m.phase === "between" && m.nextTossupAt === null && !m.paused;
  $("countdown").textContent = left !== null ? `· next tossup in ${left} s` : waiting ? "· press Next tossup when the room is ready" : "";
}
setInterval(renderCountdown, 500);

function renderControls() {
  const phase = m.status === "ended" ? "ended" : m.phase;
  const live = history.some((h) => !h.undone);
  const lastTossup = m.tossup && m.tossup.index + 1 >= m.tossupCount;
  for (const btn of document.querySelectorAll("#phase-buttons button[data-cmd]")) {
    let show = btn.dataset.phases.split(" ").includes(phase);
    if (btn.dataset.needs === "history") show = show && live;
    if (btn.dataset.cmd === "next") show = show && !lastTossup;
    // While paused the engine takes only Resume, Undo and End (of these buttons).
    if (m.paused) show = show && ["pause", "resume", "undo", "end"].includes(btn.dataset.cmd);
    btn.hidden = !show;
  }
  $("btn-pause").textContent = m.paused ? "Resume" : "Pause";
  $("btn-pause").dataset.cmd = m.paused ? "resume" : "pause";
  $("btn-pause").classList.toggle("primary", m.paused);
  $("btn-skip").textContent = phase === "bonus" || phase === "bonus_ruling" ? "Skip bonus" : "Skip tossup";
  const end = document.querySelector("#phase-buttons [data-cmd=end]");
  const finish = phase === "between" && lastTossup; // after the last tossup End is the way on
  end.classList.toggle("primary", finish);
  end.classList.toggle("danger", !finish);
  $("phase-label").textContent = `${PHASE_NAMES[phase] || phase}${m.paused ? " — paused" : ""}`;
  $("phase-label").dataset.phase = phase;
  $("pace-form").hidden = phase === "ended";
  if (document.activeElement !== $("pace")) $("pace").value = paceOption(m.betweenQuestions);
  renderCountdown();
}

/** The pace menu's entry for `seconds` (a pace set elsewhere gets an entry of its own). */
function paceOption(seconds) {
  const select = $("pace");
  const value = seconds === null ? "" : String(seconds);
  if (![...select.options].some((o) => o.value === value)) {
    select.add(new Option(`${seconds} s after a question`, value));
  }
  return value;
}

function render() {
  if (!m) return;
  const t = m.tossup;
  renderHeader(m);
  renderScoreboard($("scoreboard"), m);
  renderPreview();
  renderNav();
  renderControls();
  wordsLine();
  const q = t ? question(t.question_id) : null;
  $("q-progress").textContent = t ? `· word ${t.words.length}/${t.token_count}` : "";
  const line = t && (t.answer_line || (q && q.answer_line));
  $("q-answer").innerHTML = line ? answerHtml(line) : "—";
  $("status-line").textContent = `· ${m.wpm} wpm`;
  if (document.activeElement !== $("wpm")) $("wpm").value = Math.round(m.wpm);

  const teamSelect = $("adjust-team");
  if (teamSelect.options.length !== m.teams.length) {
    teamSelect.innerHTML = m.teams.map((x) => `<option value="${x.team_id}">${escapeHtml(x.name)}</option>`).join("");
    $("protest-team").innerHTML = `<option value="">moderator note</option>${teamSelect.innerHTML}`;
  }
  renderProtests();
  renderRoster();
  renderScoresheet();

  // Ruling panel: the pending tossup buzz, or the pending bonus answer; always on screen.
  const buzz = t && t.buzz && ["answering", "ruling"].includes(m.phase) ? t.buzz : null;
  const bonusPending = m.bonus && m.phase === "bonus_ruling" ? m.bonus.pending : null;
  const ruling = $("ruling");
  ruling.dataset.pending = String(!!(buzz || bonusPending));
  const canRule = (buzz && m.phase === "ruling") || !!bonusPending;
  for (const btn of ruling.querySelectorAll("button[data-rule]")) btn.disabled = !canRule;
  ruling.querySelector(".rule-buttons").hidden = m.status === "ended";
  if (buzz) {
    const key = `t:${t.question_id}:${buzz.player_id}`;
    $("buzz-line").textContent = `${player(buzz.player_id)} (${teamName(m, buzz.team_id)}) buzzed at word ${buzz.token_index + 1}${q && q.power_index != null && buzz.token_index < q.power_index ? " — in power" : ""}`;
    $("judge-line").innerHTML = promptedHtml(key) + (buzz.guess != null
      ? `${prompted && prompted.key === key ? "Now" : "Answer"}: <strong>“${escapeHtml(buzz.guess)}”</strong> — judge suggests <strong class="verdict">${escapeHtml(buzz.verdict)}</strong>${buzz.reason ? ` <span class="muted">(${escapeHtml(buzz.reason)})</span>` : ""}${buzz.directed_prompt ? ` · prompt: “${escapeHtml(buzz.directed_prompt)}”` : ""}`
      : "waiting for the answer…");
    suggestPrompt(`${key}:${buzz.prompts}:${buzz.guess}`, buzz.guess != null ? buzz.directed_prompt : null);
  } else if (bonusPending) {
    const key = `b:${m.bonus.bonus_id}:${bonusPending.part}`;
    $("buzz-line").textContent = `Bonus part ${bonusPending.part + 1} (${teamName(m, m.bonus.team_id)})`;
    $("judge-line").innerHTML = `${promptedHtml(key)}${prompted && prompted.key === key ? "Now" : "Answer"}: <strong>“${escapeHtml(bonusPending.guess)}”</strong> — judge suggests <strong class="verdict">${escapeHtml(bonusPending.verdict)}</strong>${bonusPending.directed_prompt ? ` · prompt: “${escapeHtml(bonusPending.directed_prompt)}”` : ""}`;
    suggestPrompt(`${key}:${bonusPending.guess}`, bonusPending.directed_prompt);
  } else {
    $("buzz-line").textContent = m.status === "ended" ? "The match is over: rulings can still be corrected" : "No buzz to rule on";
    $("judge-line").textContent = "";
    $("directed-prompt").value = "";
    suggestedFor = null;
  }
  renderHybrid(buzz);
  renderLineups(m);
  renderBonus();
  renderCorrections();
  renderMatchOver();
}

/** The answer that was prompted on, shown above the answer given after the prompt. */
function promptedHtml(key) {
  if (!prompted || prompted.key !== key) return "";
  return `Prompted on <strong>“${escapeHtml(prompted.guess)}”</strong>${prompted.directed ? ` (“${escapeHtml(prompted.directed)}”)` : ""}<br>`;
}

function rememberPrompt(d) {
  const t = m && m.tossup;
  if (d.bonus_id != null) {
    const pending = m.bonus && m.bonus.pending;
    prompted = { key: `b:${d.bonus_id}:${d.part}`, guess: pending ? pending.guess : "", directed: d.directed_prompt || "" };
  } else {
    prompted = { key: `t:${d.question_id}:${d.player_id}`, guess: (t && t.buzz && t.buzz.guess) || "", directed: d.directed_prompt || "" };
  }
}

/** Fill the directed-prompt field with the judge's suggestion once per answer: an earlier answer's
 * text never stays for the next ruling. */
function suggestPrompt(forAnswer, suggestion) {
  if (suggestedFor === forAnswer) return;
  suggestedFor = forAnswer;
  $("directed-prompt").value = suggestion || "";
}

/** Hybrid teams (HYBRID.md): an AI's buzz waiting for confirmation, delegating the answer of
 * the buzz being answered to the buzzer's team's AI (and back), the captain's bonus choice. */
function renderHybrid(buzz) {
  const t = m.tossup;
  const rows = [];
  for (const p of (t && !t.outcome && t.proposals) || []) {
    rows.push(`<p>${escapeHtml(player(p.player_id))} (${escapeHtml(teamName(m, p.team_id))}) would buzz at word ${p.token_index + 1}: `
      + `<button type="button" data-hybrid="confirm_buzz" data-bot="${p.player_id}">Confirm</button> `
      + `<button type="button" data-hybrid="decline_buzz" data-bot="${p.player_id}">Decline</button></p>`);
  }
  if (buzz && m.phase === "answering") {
    const bots = m.players.filter((p) => p.kind === "bot" && p.team_id === buzz.team_id && p.player_id !== buzz.player_id);
    if (buzz.answerer_id) {
      rows.push(`<p>${escapeHtml(player(buzz.answerer_id))} answers for ${escapeHtml(player(buzz.player_id))}: `
        + `<button type="button" data-hybrid="delegate">Revert to ${escapeHtml(player(buzz.player_id))}</button></p>`);
    } else if (bots.length) {
      rows.push(`<p>${bots.map((p) => `<button type="button" data-hybrid="delegate" data-bot="${p.player_id}">Delegate to ${escapeHtml(p.name)}</button>`).join(" ")}</p>`);
    }
  }
  const b = m.bonus;
  if (m.bonusDecisions && b && m.phase === "bonus" && !b.ended && !b.decision) {
    const ai = (b.suggestions || []).filter((x) => x.part === b.part);
    const said = ai.map((x) => `${escapeHtml(player(x.player_id))}: “${escapeHtml(x.guess)}” (${Math.round(x.confidence * 100)}%)`).join("; ");
    rows.push(`<p>Bonus part ${b.part + 1} — AI: ${said || "no suggestion yet"}. For the captain: `
      + ["own", "consult", "abstain"].map((d) => `<button type="button" data-hybrid="bonus_decision" data-decision="${d}"${d === "consult" && !ai.length ? " disabled" : ""}>${d}</button>`).join(" ")
      + "</p>");
  }
  const html = rows.join("");
  if ($("hybrid-tools").innerHTML !== html) $("hybrid-tools").innerHTML = html;
}

$("hybrid-tools").addEventListener("click", (ev) => {
  const btn = ev.target.closest("button[data-hybrid]");
  if (!btn) return;
  const name = btn.dataset.hybrid;
  if (name === "bonus_decision") command(name, { bonus_id: m.bonus.bonus_id, part: m.bonus.part, decision: btn.dataset.decision });
  else command(name, btn.dataset.bot ? { bot_id: Number(btn.dataset.bot) } : {});
});

function renderBonus() {
  const b = m.bonus;
  $("bonus").hidden = !b;
  if (!b) return;
  const parts = b.parts
    .filter(Boolean)
    .map((p) => {
      const res = p.result ? ` → <strong>${escapeHtml(p.result.ruling)}</strong> (${p.result.points})` : "";
      const ans = p.answer_line ? `<br><span class="muted">Answer:</span> ${answerHtml(p.answer_line)}` : "";
      return `<li${p.part === b.part && !b.ended ? ' class="current"' : ""}>[${p.value}] ${bonusTextHtml(p.tokens, p.text)}${ans}${res}</li>`;
    })
    .join("");
  setHtml($("bonus"), `<p><strong>Bonus for ${escapeHtml(teamName(m, b.team_id))}</strong> ${bonusTextHtml(b.leadin_tokens, b.leadin)}</p><ol>${parts}</ol>${b.ended ? `<p>Bonus total: ${b.points}</p>` : ""}`);
}

// --- correcting a ruling after the fact (the engine's CorrectRuling) --------------------------
const TOSSUP_FIXES = ["correct", "wrong", "no_penalty"];
const PART_FIXES = ["correct", "wrong"];
const RULING_NAMES = { correct: "correct", wrong: "wrong", no_penalty: "no penalty", timeout: "no answer", abstained: "abstained" };

/** History positions that may be corrected: the newest tossup ruling that stands and the parts of
 * the bonus it earned (as competition/game/corrections.py `correctable`). */
function correctable() {
  let newest = -1;
  for (let i = history.length - 1; i >= 0 && newest < 0; i--) {
    if (history[i].kind === "tossup" && !history[i].undone) newest = i;
  }
  if (newest < 0) return [];
  const index = history[newest].tossup_index;
  const parts = [];
  for (let i = newest + 1; i < history.length; i++) {
    const h = history[i];
    if (h.kind === "bonus" && !h.undone && h.tossup_index === index && h.ruling !== "abstained") parts.push(i);
  }
  return [newest, ...parts];
}

function correctionRow(position) {
  const h = history[position];
  const t = m.tossup;
  // The engine refuses a tossup correction while another buzz on it is being answered.
  if (h.kind === "tossup" && t && !t.outcome && t.index === h.tossup_index && t.buzz) return "";
  const who = h.kind === "tossup" ? `Tossup ${h.tossup_index + 1}: ${player(h.player_id)} (${teamName(m, h.team_id)})` : `Bonus part ${h.part + 1} (${teamName(m, h.team_id)})`;
  const fixes = (h.kind === "tossup" ? TOSSUP_FIXES : PART_FIXES).filter((r) => r !== h.ruling);
  const buttons = fixes.map((r) => `<button type="button" class="small-btn" data-correct="${position}" data-ruling="${r}">make it ${RULING_NAMES[r]}</button>`).join(" ");
  return `<li>${escapeHtml(who)}: ${RULING_NAMES[h.ruling] || h.ruling} ${signed(h.points)}${h.guess ? ` “${escapeHtml(h.guess)}”` : ""} → ${buttons}</li>`;
}

function renderCorrections() {
  const rows = correctable().map(correctionRow).filter(Boolean);
  $("correct-form").hidden = !rows.length;
  const html = rows.join("");
  if ($("correct-list").innerHTML !== html) $("correct-list").innerHTML = html;
}

$("correct-list").addEventListener("click", (ev) => {
  const btn = ev.target.closest("button[data-correct]");
  if (!btn) return;
  btn.blur();
  const reason = $("correct-reason").value.trim();
  if (!reason) {
    toast("Say why the ruling changes first (it goes in the log and the recap).");
    $("correct-reason").focus();
    return;
  }
  command("correct_ruling", { history_index: Number(btn.dataset.correct), ruling: btn.dataset.ruling, reason });
  $("correct-reason").value = "";
});
$("correct-form").addEventListener("submit", (ev) => ev.preventDefault());

// --- the end of the match: the final standings, the recap, the analysis and the fit ------------
let fitPoll = null;

function renderMatchOver() {
  const ended = m.status === "ended";
  $("match-over").hidden = !ended;
  document.querySelector(".dash .question").hidden = ended; // the recap has every question now
  if (!ended) return;
  const ranked = rankTeams(m.teams);
  $("final-result").textContent = resultText(ranked);
  $("final-standings").innerHTML = ranked
    .map((r) => `<li${r.rank === 1 ? ' class="winner"' : ""}><span class="rank">${r.rank}${r.tied ? "=" : ""}</span> <span class="name">${escapeHtml(r.team.name)}</span> <strong class="score">${r.team.score}</strong></li>`)
    .join("");
  if (fitPoll === null) fitPoll = setTimeout(pollFit, 0);
}

/** The fit the match's end queued: waiting, running (with its progress), or ready (a link). */
async function pollFit() {
  let body;
  try {
    const res = await fetch(`${page.fit_progress_url}?dataset=${encodeURIComponent(page.fit_dataset)}`);
    body = await res.json();
  } catch {
    fitPoll = setTimeout(pollFit, 5000);
    return;
  }
  const status = $("fit-status");
  if (body.latest !== null) {
    status.innerHTML = `<a href="${page.fit_url.replace("/0/", `/${body.latest}/`)}">the fit of this match</a> (skills and ADVSCORE)`;
    return;
  }
  const running = body.running.find((f) => f.dataset === page.fit_dataset);
  status.textContent = running ? `fitting this match: ${Math.round(running.progress * 100)} %` : "the fit of this match: waiting for the worker…";
  fitPoll = setTimeout(pollFit, 2000);
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

initScoresheet({
  model: () => m,
  history: () => history,
  replaced: () => replaced,
  seats: () => (m ? m.players : []),
  playerName: (id) => player(id),
  command: (name, fields) => command(name, fields),
});

function command(name, extra = {}) {
  socket.send({ type: "command", name, ...extra });
}
initLineups($("lineups"), command, () => clock.offset);

function rule(verdict) {
  if ($("ruling").dataset.pending !== "true") return;
  const extra = { verdict };
  const directed = $("directed-prompt").value.trim();
  if (verdict === "prompt" && directed) extra.directed_prompt = directed;
  command("rule", extra);
  $("directed-prompt").value = ""; // used once: the next answer gets the judge's own suggestion
}

$("phase-buttons").addEventListener("click", (ev) => {
  const btn = ev.target.closest("button[data-cmd]");
  if (!btn) return;
  // A control keeps no focus: a later Space or Enter must not undo, skip or end again.
  btn.blur();
  if (btn.dataset.cmd === "end" && !confirm("End the match?")) return;
  if (btn.dataset.cmd === "replay" && !confirm("Replay this tossup? Its points and its bonus are reversed.")) return;
  // Next names the tossup it goes on from: a click that comes after the pace started the next one changes nothing.
  command(btn.dataset.cmd, btn.dataset.cmd === "next" && m.tossup ? { after_index: m.tossup.index } : {});
});
$("pace").addEventListener("change", () => {
  const value = $("pace").value;
  command("pace", value === "" ? {} : { between_questions: Number(value) });
});
$("pace-form").addEventListener("submit", (ev) => ev.preventDefault());
$("ruling").addEventListener("click", (ev) => {
  const btn = ev.target.closest("button[data-rule]");
  if (!btn) return;
  btn.blur(); // the next answer is ruled by a deliberate click or key, never by a stray Enter
  rule(btn.dataset.rule);
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
  const verdict = { a: "accept", r: "reject", n: "no_penalty", p: "prompt" }[ev.key.toLowerCase()];
  if (verdict) {
    ev.preventDefault();
    rule(verdict);
  }
});

// --- seats: the roster with live connection state, and one-time reclaim codes -----------------
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
  try {
    seats = (await api(`/api/match/${encodeURIComponent(page.code)}/players`)).players;
  } catch (err) {
    toast(`players: ${err.message}`);
    return;
  }
  renderRoster();
}

function seatState(id) {
  const p = presence.get(id);
  return p ? p.state : "never";
}

function presenceLabel(state) {
  return m && m.status === "ended" && state !== "connected" ? LEFT[state] : PRESENCE_NAMES[state];
}

function seatRow(p) {
  const code = reclaimCodes.get(p.player_id);
  const action = p.kind !== "human"
    ? '<span class="muted">bot</span>'
    : code && p.reclaim_pending
      ? `reclaim code <strong class="mono reclaim-code">${escapeHtml(code)}</strong>`
      : `<button type="button" class="small-btn" data-reclaim="${p.player_id}">reclaim code</button>${p.reclaim_pending ? ' <span class="muted">(pending)</span>' : ""}`;
  const state = seatState(p.player_id);
  const n = presence.get(p.player_id)?.connections;
  const label = `${presenceLabel(state)}${n > 1 ? ` ×${n}` : ""}`;
  return `<tr data-player="${p.player_id}"><td class="seat-name">${escapeHtml(p.name)}</td><td><span class="presence" data-state="${state}">${label}</span></td><td>${action}</td></tr>`;
}

function renderRoster() {
  if (!m) return;
  const byTeam = m.teams.map((team) => ({ team, rows: seats.filter((p) => p.team_id === team.team_id) }));
  $("roster").innerHTML = byTeam
    .map(({ team, rows }) => `<table class="table seats" data-team="${team.team_id}"><caption>${escapeHtml(team.name)} <span class="muted">${team.score}</span></caption><tbody>${rows.length ? rows.map(seatRow).join("") : '<tr><td class="muted" colspan="3">no seats yet</td></tr>'}</tbody></table>`)
    .join("");
  const connected = seats.filter((p) => seatState(p.player_id) === "connected").length;
  $("roster-count").textContent = `${connected}/${seats.length} connected`;
}

$("roster").addEventListener("click", async (ev) => {
  const btn = ev.target.closest("button[data-reclaim]");
  if (!btn) return;
  const id = Number(btn.dataset.reclaim);
  const name = player(id);
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
setInterval(() => socket.ping(), 15000); // more samples for the clock offset (the countdown)

socket.connect();
