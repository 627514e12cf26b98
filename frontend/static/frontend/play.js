// The player tablet: join, then the `play` socket. Words appear as `words` events arrive; the
// buzz sends the index of the last word shown on this screen.
// The seat's token is this tablet's secret: kept in localStorage, it reconnects the socket
// and gets the seat back from /api/join; a name alone never does (another tablet needs a
// one-time reclaim code from the moderator).
import {
  ClockOffset, Countdown, LIVE_PHASES, MatchSocket, answerHtml, applyEvent, escapeHtml, modelFromSnapshot,
  pageData, renderHeader, renderScoreboard, renderWords, setConn, teamName, toast,
} from "./match.js";

const SEAT_KEY = "tossup.seat";
const TOKENS_KEY = "tossup.tokens"; // {"CODE:name": token} of seats this tablet has held
const $ = (id) => document.getElementById(id);
const page = pageData();

let seat = JSON.parse(localStorage.getItem(SEAT_KEY) || "null");
let socket = null;
let m = null;
let pendingBuzz = null; // ref of a buzz sent and not yet resolved
let answerSent = false;
let bonusSent = null; // "bonus_id:part" answered
const flagged = new Set();
const clock = new ClockOffset();
const answerClock = new Countdown($("countdown-bar"), $("countdown-text"));
const bonusClock = new Countdown($("bonus-countdown-bar"), $("bonus-countdown-text"));

// --- joining --------------------------------------------------------------------------
async function loadTeams() {
  const code = $("join-code").value.trim().toUpperCase();
  const select = $("join-team");
  $("join-error").textContent = "";
  if (code.length < 4) return;
  const res = await fetch(`/api/match/${encodeURIComponent(code)}`);
  const body = await res.json();
  if (!res.ok) {
    select.innerHTML = '<option value="">—</option>';
    $("join-error").textContent = body.message;
    return;
  }
  select.innerHTML = body.teams.map((t) => `<option>${escapeHtml(t.name)}</option>`).join("");
}

function knownTokens() {
  try {
    return JSON.parse(localStorage.getItem(TOKENS_KEY) || "{}") || {};
  } catch {
    return {};
  }
}

function rememberToken(code, name, token) {
  const tokens = knownTokens();
  if (token) tokens[`${code}:${name}`] = token;
  else delete tokens[`${code}:${name}`];
  localStorage.setItem(TOKENS_KEY, JSON.stringify(tokens));
}

async function join(ev) {
  ev.preventDefault();
  const payload = { code: $("join-code").value.trim().toUpperCase(), name: $("join-name").value.trim(), team: $("join-team").value };
  // The secret: a reclaim code typed from the moderator, else this tablet's own token for the seat.
  payload.secret = $("join-reclaim").value.trim() || knownTokens()[`${payload.code}:${payload.name}`] || "";
  let res;
  let body;
  try {
    res = await fetch("/api/join", {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-CSRFToken": page.csrf || "" },
      credentials: "same-origin",
      body: JSON.stringify(payload),
    });
    body = await res.json();
  } catch {
    $("join-error").textContent = "Cannot reach the server: check the network and try again.";
    return;
  }
  if (!res.ok) {
    $("join-error").textContent = body.message || body.code;
    if (body.code === "seat_taken") {
      $("reclaim").open = true;
      $("join-reclaim").focus();
    }
    return;
  }
  seat = { ...body, name: payload.name, team: payload.team };
  localStorage.setItem(SEAT_KEY, JSON.stringify(seat));
  rememberToken(seat.code, seat.name, seat.token);
  $("join-reclaim").value = "";
  startGame();
}

function leave() {
  if (socket) socket.close();
  localStorage.removeItem(SEAT_KEY); // the token stays in TOKENS_KEY: this tablet can rejoin the seat
  seat = null;
  location.href = "/play/";
}

// --- the game -------------------------------------------------------------------------
function startGame() {
  $("join").hidden = true;
  $("game").hidden = false;
  $("you").textContent = `${seat.name} · ${seat.team} · ${seat.code}`;
  socket = new MatchSocket({
    code: seat.code,
    role: "play",
    token: seat.token,
    onSnapshot(state) {
      m = modelFromSnapshot(state);
      pendingBuzz = null;
      answerSent = m.tossup && m.tossup.buzz && m.tossup.buzz.player_id === seat.player_id && m.phase === "ruling";
      render();
    },
    onEvent,
    onError(err) {
      if (err.ref !== null && err.ref === pendingBuzz) pendingBuzz = null;
      toast(err.message || err.code);
      render();
    },
    onStatus(s) {
      setConn(s);
      if (s === "forbidden") {
        localStorage.removeItem(SEAT_KEY);
        rememberToken(seat.code, seat.name, null); // the seat moved to another tablet
        $("game").hidden = true;
        $("join").hidden = false;
        $("join-error").textContent = "That seat is no longer valid: join again.";
      }
    },
    onPong: (p) => clock.add(p),
  });
  socket.connect();
}

function mine(d) {
  return d && d.player_id === seat.player_id;
}

function banner(text, kind = "") {
  $("banner").textContent = text;
  $("banner").className = `banner ${kind}`;
}

function onEvent(type, d) {
  if (applyEvent(m, type, d) === "resync") {
    socket.resync();
    return;
  }
  switch (type) {
    case "tossup_started":
      pendingBuzz = null;
      answerSent = false;
      banner("");
      break;
    case "buzz":
      pendingBuzz = null;
      answerSent = false;
      banner(mine(d) ? "You buzzed — answer now!" : `${d.player} (${d.team}) buzzed`, mine(d) ? "good" : "");
      break;
    case "buzz_lost":
      pendingBuzz = null;
      banner("Another buzz got there first.");
      break;
    case "prompt":
      if (mine(d)) answerSent = false;
      banner(mine(d) ? "Prompt — answer again" : "Prompt", "");
      break;
    case "buzz_ruled": {
      const who = mine(d) ? "You" : teamName(m, d.team_id);
      const pts = d.points > 0 ? `+${d.points}` : `${d.points}`;
      banner(`${who}: ${d.ruling.replace("_", " ")} (${pts})`, d.ruling === "correct" ? "good" : "bad");
      break;
    }
    case "tossup_ended":
      if (d.outcome !== "answered") banner(d.outcome === "dead" ? "Dead tossup" : "Skipped");
      break;
    case "bonus_prompt":
      bonusSent = null; // the team answers this part again
      $("bonus-result").textContent = d.directed_prompt || "Prompt: be more specific.";
      break;
    case "bonus_part_ruled":
      $("bonus-result").textContent = `Part ${d.part + 1}: ${d.ruling} (${d.points})`;
      break;
    case "paused":
      banner("Paused");
      break;
    case "resumed":
      banner("");
      break;
    case "match_ended":
      banner("Match over — thanks for playing!", "good");
      break;
    default:
      break;
  }
  render();
}

function myTeam() {
  return seat.team_id;
}

function canBuzz() {
  const t = m && m.tossup;
  return !!(t && m.status === "running" && !m.paused && LIVE_PHASES.includes(m.phase) && !t.locked_teams.includes(myTeam()) && pendingBuzz === null);
}

function render() {
  if (!m) return;
  const t = m.tossup;
  renderHeader(m);
  renderScoreboard($("scoreboard"), m, { mine: myTeam() });
  renderWords($("q-text"), t, { buzzIndex: t && t.buzz ? t.buzz.token_index : null });

  // The answer line only exists in the model once the tossup ended (player view).
  const revealed = t && t.outcome && t.answer_line;
  $("reveal").hidden = !revealed;
  if (revealed) $("reveal").innerHTML = `Answer: ${answerHtml(t.answer_line)}`;

  const buzzBtn = $("buzz");
  const locked = t && t.locked_teams.includes(myTeam()) && !(t.buzz && mine(t.buzz)) && !t.outcome;
  buzzBtn.disabled = !canBuzz();
  buzzBtn.classList.toggle("locked", !!locked);
  buzzBtn.textContent = locked ? "LOCKED OUT" : pendingBuzz !== null ? "…" : m.paused ? "PAUSED" : "BUZZ";

  const myBuzz = t && t.buzz && mine(t.buzz) && (m.phase === "answering" || m.phase === "ruling");
  const form = $("answer-form");
  const wasHidden = form.hidden;
  form.hidden = !myBuzz;
  if (myBuzz) {
    const prompt = t.buzz.directed_prompt || (t.buzz.prompts ? "Prompt: be more specific." : "");
    $("prompt-text").hidden = !prompt;
    $("prompt-text").textContent = prompt;
    $("answer-input").disabled = answerSent;
    form.querySelector("button").disabled = answerSent;
    if (answerSent) {
      answerClock.stop();
      $("countdown-text").textContent = "waiting for the ruling…";
    } else {
      answerClock.start(t.buzz.answer_deadline, clock.offset);
      if (wasHidden || !$("answer-input").value) $("answer-input").focus();
    }
  } else {
    answerClock.stop();
    $("answer-input").value = "";
  }

  renderBonus();
  const showFlags = !!(t && t.outcome && t.outcome !== "skipped");
  $("flags").hidden = !showFlags;
  for (const b of $("flags").querySelectorAll("button")) {
    const sent = flagged.has(`${t && t.question_id}:${b.dataset.problem}`);
    b.classList.toggle("sent", sent);
    b.disabled = sent;
  }
}

function renderBonus() {
  const b = m.bonus;
  $("bonus").hidden = !b;
  if (!b) return;
  const ours = b.team_id === myTeam();
  const cur = b.parts[b.part];
  $("bonus-leadin").textContent = `Bonus for ${teamName(m, b.team_id)}${b.leadin ? ` — ${b.leadin}` : ""}`;
  $("bonus-text").innerHTML = cur ? `<strong>[${cur.value}]</strong> ${escapeHtml(cur.text)}` : "";
  const key = cur ? `${b.bonus_id}:${b.part}` : null;
  const open = ours && cur && !cur.result && !b.ended && bonusSent !== key;
  const wasHidden = $("bonus-form").hidden;
  $("bonus-form").hidden = !open;
  if (open) {
    bonusClock.start(b.answer_deadline, clock.offset);
    if (wasHidden) {
      $("bonus-input").value = "";
      $("bonus-input").focus();
    }
  } else {
    bonusClock.stop();
  }
  if (b.ended) $("bonus-result").textContent = `Bonus: ${b.points} points`;
}

function buzz() {
  if (!canBuzz()) return;
  const t = m.tossup;
  pendingBuzz = socket.send({ type: "buzz", question_id: t.question_id, token_index: t.words.length - 1, client_time: Date.now() / 1000 });
  // If neither a buzz event nor an error comes back (lost frame), free the button again.
  const ref = pendingBuzz;
  setTimeout(() => { if (pendingBuzz === ref) { pendingBuzz = null; render(); } }, 3000);
  render();
}

$("join-code").addEventListener("input", () => { clearTimeout(loadTeams.t); loadTeams.t = setTimeout(loadTeams, 250); });
$("join-form").addEventListener("submit", join);
$("leave").addEventListener("click", leave);
$("buzz").addEventListener("pointerdown", (ev) => { ev.preventDefault(); buzz(); });
$("buzz").addEventListener("click", buzz);
document.addEventListener("keydown", (ev) => {
  if (ev.code === "Space" && !["INPUT", "TEXTAREA", "SELECT", "BUTTON"].includes(document.activeElement.tagName) && !$("game").hidden) {
    ev.preventDefault();
    buzz();
  }
});
$("answer-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const t = m.tossup;
  if (!t || answerSent) return;
  if (socket.send({ type: "answer", question_id: t.question_id, text: $("answer-input").value }) !== null) answerSent = true;
  render();
});
$("bonus-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const b = m.bonus;
  if (!b) return;
  if (socket.send({ type: "bonus_answer", bonus_id: b.bonus_id, part: b.part, text: $("bonus-input").value }) !== null) {
    bonusSent = `${b.bonus_id}:${b.part}`;
  }
  render();
});
$("flags").addEventListener("click", (ev) => {
  const btn = ev.target.closest("button[data-problem]");
  if (!btn || !m.tossup) return;
  if (socket.send({ type: "flag", question_id: m.tossup.question_id, problem: btn.dataset.problem, comment: "" }) !== null) {
    flagged.add(`${m.tossup.question_id}:${btn.dataset.problem}`);
    toast("Thanks — flag sent to the editors.", "info", 2000);
  }
  render();
});

if (seat && (!page.code || page.code === seat.code)) {
  startGame();
} else if (page.code) {
  loadTeams();
}
