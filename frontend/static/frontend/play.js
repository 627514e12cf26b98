// The player tablet: join, then the `play` socket. Words appear as `words` events arrive; the
// buzz sends the index of the last word shown on this screen.
// The seat's token is this tablet's secret: kept in localStorage, it reconnects the socket
// and gets the seat back from /api/join; a name alone never does (another tablet needs a
// one-time reclaim code from the moderator). The handle's secret (tossup.identity) is kept the
// same way: it makes this tablet's player the same subject in every match it joins.
import {
  ClockOffset, LIVE_PHASES, MatchSocket, answerHtml, applyEvent, bonusTextHtml, escapeHtml, lockoutOf, modelFromSnapshot,
  pageData, rankTeams, renderHeader, renderScoreboard, renderWords, resultText, setConn, setHtml, teamName, toast,
  tokenHtml,
} from "./match.js";
import { MyStats } from "./mystats.js";

const SEAT_KEY = "tossup.seat";
const TOKENS_KEY = "tossup.tokens"; // {"CODE:name": token} of seats this tablet has held
const IDENTITY_KEY = "tossup.identity"; // {handle, secret} of the identity this tablet holds
const $ = (id) => document.getElementById(id);
const page = pageData();

let seat = JSON.parse(localStorage.getItem(SEAT_KEY) || "null");
let socket = null;
let m = null;
let pendingBuzz = null; // ref of a buzz sent and not yet resolved
let lockoutUntil = 0; // Date.now() ms until which an image/audio clue's reveal lockout runs
let answerSent = false;
let bonusSent = null; // "bonus_id:part" answered
let aiShown = null; // "bonus_id:part" whose AI suggestion this player asked to see
let decisionSent = null; // "bonus_id:part" the captain decided on
const flagged = new Set();
const clock = new ClockOffset();
const myStats = new MyStats(document.getElementById("my-stats"));

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

function knownIdentity() {
  try {
    return JSON.parse(localStorage.getItem(IDENTITY_KEY) || "null");
  } catch {
    return null;
  }
}

async function join(ev) {
  ev.preventDefault();
  const payload = { code: $("join-code").value.trim().toUpperCase(), name: $("join-name").value.trim(), team: $("join-team").value };
  // The secret: a reclaim code typed from the moderator, else this tablet's own token for the seat.
  payload.secret = $("join-reclaim").value.trim() || knownTokens()[`${payload.code}:${payload.name}`] || "";
  // The identity: the handle typed (or remembered) with its secret, typed or kept by this tablet.
  const held = knownIdentity();
  payload.handle = $("join-handle").value.trim();
  const sameHandle = held && held.handle.toLowerCase() === payload.handle.toLowerCase();
  payload.identity_secret = $("join-identity-secret").value.trim() || (sameHandle ? held.secret : "");
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
      $(body.extra && body.extra.field === "handle" ? "join-handle" : "join-reclaim").focus();
    }
    return;
  }
  seat = { ...body, name: payload.name, team: payload.team };
  localStorage.setItem(SEAT_KEY, JSON.stringify(seat));
  rememberToken(seat.code, seat.name, seat.token);
  if (body.identity && body.identity.secret) {
    localStorage.setItem(IDENTITY_KEY, JSON.stringify(body.identity));
  } else if (payload.identity_secret && body.identity && body.identity.handle.toLowerCase() === payload.handle.toLowerCase()) {
    localStorage.setItem(IDENTITY_KEY, JSON.stringify({ handle: body.identity.handle, secret: payload.identity_secret }));
  }
  $("join-reclaim").value = "";
  $("join-identity-secret").value = "";
  startGame();
}

function leave() {
  if (socket) socket.close();
  localStorage.removeItem(SEAT_KEY); // the token stays in TOKENS_KEY: this tablet can rejoin the seat
  seat = null;
  location.href = "/play/";
}

// --- this tablet's preferences (localStorage) -----------------------------------------
const FONT_KEY = "tossup.fontStep";
const FEEDBACK_KEY = "tossup.buzzFeedback";
const FONT_STEPS = [0.85, 1, 1.15, 1.3, 1.5, 1.75]; // × the page's 17 px root size
let fontStep = Number(localStorage.getItem(FONT_KEY) ?? 1);
if (!Number.isInteger(fontStep) || !FONT_STEPS[fontStep]) fontStep = 1;

function applyFont() {
  document.documentElement.style.fontSize = `${17 * FONT_STEPS[fontStep]}px`;
  $("font-smaller").disabled = fontStep === 0;
  $("font-larger").disabled = fontStep === FONT_STEPS.length - 1;
  localStorage.setItem(FONT_KEY, String(fontStep));
}

let audio = null;
/** A short beep (WebAudio, no sound file) and a vibration, when the player turned them on. */
function buzzFeedback() {
  if (!$("buzz-feedback").checked) return;
  if (navigator.vibrate) navigator.vibrate(60);
  try {
    audio = audio || new AudioContext();
    const osc = audio.createOscillator();
    const gain = audio.createGain();
    osc.frequency.value = 880;
    gain.gain.setValueAtTime(0.25, audio.currentTime);
    gain.gain.exponentialRampToValueAtTime(0.001, audio.currentTime + 0.18);
    osc.connect(gain).connect(audio.destination);
    osc.start();
    osc.stop(audio.currentTime + 0.2);
  } catch {
    // no audio output: the vibration (if any) is the feedback
  }
}

// --- the visible viewport -------------------------------------------------------------
// The page is as tall as the visual viewport, so an on-screen keyboard (which shrinks it)
// shrinks the page instead of covering it; with the keyboard open the BUZZ bar gets small.
const TEXT_INPUT = "input:not([type=checkbox]), textarea";
const touchScreen = () => navigator.maxTouchPoints > 0 || matchMedia("(pointer: coarse)").matches;

function fitViewport() {
  const vv = window.visualViewport;
  const height = vv ? vv.height : window.innerHeight;
  document.documentElement.style.setProperty("--vvh", `${Math.round(height)}px`);
  const typing = document.activeElement && document.activeElement.matches(TEXT_INPUT) && !$("game").hidden;
  document.body.classList.toggle("keyboard", !!typing && touchScreen());
  if (typing) document.activeElement.scrollIntoView({ block: "nearest" });
}

// --- the answer timer -----------------------------------------------------------------
const WARNING_S = 5; // the timer turns amber, and says so, at 5 s left …
const URGENT_S = 2; // … and red at 2 s
/**
 * A large countdown to an answer deadline (server clock) that changes colour (data-level
 * calm → warning → urgent) and tells screen readers only at the start, at each level and at
 * the end, through its own assertive live region.
 */
class AnswerTimer {
  constructor(root) {
    this.root = root;
    this.num = root.querySelector(".timer-num");
    this.bar = root.querySelector(".timer-bar");
    this.say = $("timer-say"); // outside the timer: a live region must exist before its text changes
    this.deadline = null;
    this.timer = null;
  }

  start(deadline, offset = 0) {
    if (deadline && deadline === this.deadline && this.timer) return; // already counting to it
    this.root.classList.remove("paused");
    this.stop();
    if (!deadline) return;
    this.deadline = deadline;
    this.root.hidden = false;
    const total = Math.max(0.1, deadline - (Date.now() / 1000 + offset));
    let level = null;
    const tick = () => {
      const left = Math.max(0, deadline - (Date.now() / 1000 + offset));
      const now = left <= URGENT_S ? "urgent" : left <= WARNING_S ? "warning" : "calm";
      this.num.textContent = `${Math.ceil(left)} s`;
      this.bar.style.width = `${(100 * left) / total}%`;
      if (now !== level) {
        this.root.dataset.level = now;
        this.say.textContent = level === null ? `${Math.ceil(left)} seconds to answer` : `${Math.ceil(left)} seconds left`;
        level = now;
      }
      if (left <= 0) {
        this.say.textContent = "Time is up";
        clearInterval(this.timer);
        this.timer = null;
      }
    };
    tick();
    this.timer = setInterval(tick, 100);
  }

  /** The match is paused: the countdown stands still at what it shows (the server moves the
   * deadline by the pause on resume, and `start` counts again to the moved one). */
  hold(deadline, offset = 0) {
    if (deadline && deadline === this.deadline && this.root.classList.contains("paused")) return;
    this.start(deadline, offset);
    clearInterval(this.timer);
    this.timer = null;
    if (this.deadline === null) return;
    this.root.classList.add("paused");
    this.num.textContent += " · paused";
    this.say.textContent = "Paused: the time to answer stands still";
  }

  stop() {
    if (this.deadline !== null) this.say.textContent = "";
    clearInterval(this.timer);
    this.timer = null;
    this.deadline = null;
    this.root.hidden = true;
    this.root.dataset.level = "calm";
  }
}

const answerClock = new AnswerTimer($("answer-timer"));
const bonusClock = new AnswerTimer($("bonus-timer"));

// --- the game -------------------------------------------------------------------------
// What the tablet keeps beside the shared model: the buzzes of the current tossup (for the
// recap after it ends), its whole text once ended, and this seat's last press (for "you lost
// the race to X by N ms").
let recap = null; // {question_id, words: [..] | null, power_index, buzzes: [{player_id, team_id, token_index, guess, ruling, points}]}
let myPress = null; // {question_id, token_index}: this seat's last press
let lostRace = null; // {question_id, token_index, margin (s, as the server counted the race)} of a buzz outraced
let bonusPrompt = "";
const WAITING = "Answer sent — waiting for the ruling…"; // the status line while a ruling is awaited

/** The status line says a ruling is awaited only until it comes (or the part, bonus or match ends). */
function clearWaiting() {
  if ($("banner").textContent === WAITING) banner("");
}

function recapFor(questionId) {
  if (!recap || recap.question_id !== questionId) recap = { question_id: questionId, words: null, power_index: null, buzzes: [] };
  return recap;
}

function recapFromSnapshot(state) {
  const t = state.tossup;
  recap = null;
  if (!t) return;
  const r = recapFor(t.question_id);
  r.words = t.words || null;
  r.power_index = t.power_index ?? null;
  r.buzzes = (state.history || []).filter((h) => h.kind === "tossup" && h.question_id === t.question_id && !h.undone);
}

function startGame() {
  $("join").hidden = true;
  $("game").hidden = false;
  $("you").textContent = `${seat.name} · ${seat.team} · ${seat.code}`;
  applyFont();
  fitViewport();
  socket = new MatchSocket({
    code: seat.code,
    path: "play",
    token: seat.token,
    onSnapshot(state) {
      m = modelFromSnapshot(state);
      myStats.fromSnapshot(state, seat.player_id);
      recapFromSnapshot(state);
      pendingBuzz = null;
      lostRace = null;
      bonusPrompt = "";
      answerSent = m.tossup && m.tossup.buzz && m.tossup.buzz.player_id === seat.player_id && m.phase === "ruling";
      banner(m.status === "ended" ? "Match over — thanks for playing!" : m.paused ? "Paused" : answerSent ? WAITING : "", m.status === "ended" ? "good" : "");
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

function playerName(id) {
  const p = m.players.find((x) => x.player_id === id);
  return p ? p.name : `player ${id}`;
}

function points(n) {
  return n > 0 ? `+${n}` : n < 0 ? `−${-n}` : "0";
}

/** "You lost the race to X by N ms": the server's margin between the two presses as it ranked
 * them, not this tablet's own clock estimate (which can differ from the server's by a few ms). */
function lostRaceText(won) {
  const who = `${won.player} (${won.team})`;
  const margin = lostRace.margin;
  if (margin == null) {
    return won.token_index < lostRace.token_index ? `You lost the race to ${who}: they buzzed on an earlier word.` : `You lost the race to ${who}.`;
  }
  const ms = Math.round(margin * 1000);
  if (ms >= 1) return `You lost the race to ${who} by ${ms} ms.`;
  return margin > 0 ? `You lost the race to ${who} by less than 1 ms.` : `You lost the race to ${who} on a tie.`;
}

function onEvent(type, d) {
  myStats.onEvent(type, d, seat.player_id);
  if (applyEvent(m, type, d) === "resync") {
    socket.resync();
    return;
  }
  switch (type) {
    case "words": {
      const seconds = lockoutOf(d.words);
      if (seconds > 0) {
        // Counted from the words' reveal on the server clock, so a late frame locks for less.
        const left = d.revealed_at + seconds - (Date.now() / 1000 + clock.offset);
        lockoutUntil = Math.max(lockoutUntil, Date.now() + Math.min(left, seconds) * 1000);
        clearTimeout(onEvent.unlock);
        onEvent.unlock = setTimeout(render, lockoutUntil - Date.now() + 20);
      }
      break;
    }
    case "tossup_started":
      lockoutUntil = 0;
      pendingBuzz = null;
      answerSent = false;
      lostRace = null;
      recapFor(d.question_id);
      banner("");
      $("bonus-result").textContent = "";
      break;
    case "buzz":
      pendingBuzz = null;
      answerSent = false;
      if (mine(d)) banner("You buzzed — answer now!", "good");
      else if (lostRace && lostRace.question_id === d.question_id) banner(lostRaceText(d), "bad");
      else banner(`${d.player} (${d.team}) buzzed`);
      lostRace = null;
      break;
    case "buzz_lost":
      pendingBuzz = null;
      if (d.reason === "outraced" && myPress && myPress.question_id === d.question_id) {
        lostRace = { question_id: d.question_id, token_index: myPress.token_index, margin: d.margin ?? null };
        banner("Another buzz got there first.", "bad");
      } else {
        banner("The tossup ended before your buzz counted.");
      }
      break;
    case "awaiting_ruling":
      // A tossup answer names its buzzer; a bonus part's does not: the seat that sent it knows.
      if (d.bonus_id == null ? mine(d) || (m.tossup && m.tossup.buzz && mine(m.tossup.buzz)) : bonusSent === `${d.bonus_id}:${d.part}`) {
        banner(WAITING);
      }
      break;
    case "prompt":
      if (mine(d)) answerSent = false;
      banner(mine(d) ? "Prompt — answer again" : "Prompt", "");
      break;
    case "buzz_ruled": {
      const who = mine(d) ? "You" : `${playerName(d.player_id)} (${teamName(m, d.team_id)})`;
      const said = d.guess ? ` “${d.guess}”` : "";
      banner(`${who}${said}: ${d.ruling.replace("_", " ")} (${points(d.points)})`, d.ruling === "correct" ? "good" : "bad");
      recapFor(d.question_id).buzzes.push(d);
      break;
    }
    case "tossup_ended": {
      const r = recapFor(d.question_id);
      r.words = d.words || null;
      r.power_index = d.power_index;
      if (d.outcome !== "answered") banner(d.outcome === "dead" ? "Dead tossup" : "Skipped");
      break;
    }
    case "bonus_started":
    case "bonus_part":
      bonusPrompt = "";
      bonusSent = null;
      decisionSent = null;
      clearWaiting();
      break;
    case "bonus_decision":
      if (m.bonus && m.bonus.team_id === myTeam() && d.decision !== "own") bonusSent = `${d.bonus_id}:${d.part}`;
      break;
    case "proposal_closed":
      if (d.outcome === "timeout" && d.team_id === myTeam()) banner(`${playerName(d.player_id)}'s buzz was not confirmed in time.`);
      break;
    case "answer_delegated":
      banner(d.answerer_id === d.player_id ? `${playerName(d.player_id)} answers again` : `The moderator gave the answer to ${playerName(d.answerer_id)}`);
      break;
    case "bonus_prompt":
      bonusSent = null; // the team answers this part again
      bonusPrompt = d.directed_prompt || "Prompt: be more specific.";
      clearWaiting();
      break;
    case "bonus_part_ruled":
    case "bonus_ended":
      bonusPrompt = "";
      clearWaiting();
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
  return !!(t && m.status === "running" && !m.paused && LIVE_PHASES.includes(m.phase) && !t.locked_teams.includes(myTeam()) && pendingBuzz === null && !mediaLocked());
}

/** An image or audio clue's reveal lockout is running (the server refuses buzzes: media_lockout). */
function mediaLocked() {
  return lockoutUntil > Date.now();
}

function render() {
  if (!m) return;
  const t = m.tossup;
  const ended = m.status === "ended";
  renderHeader(m);
  if (ended) {
    // The last tossup's line would read as if it were still on.
    $("q-index").textContent = "Match over";
    $("q-category").textContent = "";
  }
  renderNextTossup();
  renderScoreboard($("scoreboard"), m, { mine: myTeam() });
  renderWords($("q-text"), t, { buzzIndex: t && t.buzz ? t.buzz.token_index : null });

  // The answer line (and the whole question) only exist in the model once the tossup ended.
  const revealed = t && t.outcome && t.answer_line && !ended;
  $("reveal").hidden = !revealed;
  if (revealed) $("reveal").innerHTML = `Answer: ${answerHtml(t.answer_line)}`;
  renderRecap(t);

  const buzzBtn = $("buzz");
  const locked = t && t.locked_teams.includes(myTeam()) && !(t.buzz && mine(t.buzz)) && !t.outcome;
  buzzBtn.hidden = ended; // nothing left to buzz on
  buzzBtn.disabled = !canBuzz();
  buzzBtn.classList.toggle("locked", !!locked);
  buzzBtn.textContent = locked ? "LOCKED OUT" : pendingBuzz !== null ? "…" : m.paused ? "PAUSED" : mediaLocked() ? "WAIT" : "BUZZ";

  renderAnswerForm(t, ended);
  renderConfirm();
  renderBonus();
  const showFlags = !!(t && t.outcome && t.outcome !== "skipped") && !ended;
  $("flags").hidden = !showFlags;
  for (const b of $("flags").querySelectorAll("button")) {
    const sent = flagged.has(`${t && t.question_id}:${b.dataset.problem}`);
    b.classList.toggle("sent", sent);
    b.disabled = sent;
    b.setAttribute("aria-pressed", String(sent));
  }
  renderFinal(ended);
  fitViewport();
}

/**
 * The form is shown whole when it opens: its field, its Submit and its timer scrolled into view
 * (above the BUZZ bar, below the sticky tossup line). A prompt, or the answer passed back by the
 * moderator, is a new question to answer: the field is emptied and focused again.
 */
function showForm(form, input) {
  input.focus({ preventScroll: true });
  form.scrollIntoView({ block: "nearest" });
}

function renderAnswerForm(t, ended) {
  const myBuzz = !ended && t && t.buzz && mine(t.buzz) && (m.phase === "answering" || m.phase === "ruling");
  const form = $("answer-form");
  const input = $("answer-input");
  const wasHidden = form.hidden;
  form.hidden = !myBuzz;
  if (!myBuzz) {
    answerClock.stop();
    input.value = "";
    form.dataset.key = "";
    return;
  }
  const key = `${t.question_id}:${t.buzz.player_id}:${t.buzz.prompts || 0}:${t.buzz.answerer_id ?? ""}`;
  const fresh = form.dataset.key !== key;
  form.dataset.key = key;
  if (fresh) input.value = "";
  const prompt = t.buzz.directed_prompt || (t.buzz.prompts ? "Prompt: be more specific." : "");
  $("prompt-text").hidden = !prompt;
  $("prompt-text").textContent = prompt;
  input.disabled = answerSent;
  form.querySelector("button").disabled = answerSent;
  if (answerSent || m.phase === "ruling") {
    answerClock.stop();
  } else {
    answerClock[m.paused ? "hold" : "start"](t.buzz.answer_deadline, clock.offset);
    if (wasHidden || fresh) showForm(form, input);
    else if (!input.value && document.activeElement !== input) input.focus();
  }
}

/** "Next tossup in N s" while the match waits between questions at its own pace (server clock,
 * `m.nextTossupAt` epoch s); nothing when the moderator advances by hand or the match is paused. */
function renderNextTossup() {
  const el = $("next-tossup");
  const at = m.status !== "ended" && m.phase === "between" && !m.paused && m.betweenQuestions !== null ? m.nextTossupAt : null;
  el.hidden = at === null;
  if (at === null) return;
  const left = Math.ceil(at - (Date.now() / 1000 + clock.offset));
  el.textContent = left > 0 ? `Next tossup in ${left} s` : "Next tossup starting…";
}

/** The end of the match: every team ranked with its points, the winner (or the tie) and this
 * player's team marked, then the link to the match recap; the last question gives way to it. */
function renderFinal(ended) {
  const wasHidden = $("final").hidden;
  $("final").hidden = !ended;
  if (!ended) return;
  for (const id of ["q-text", "recap", "confirm"]) $(id).hidden = true;
  const ranked = rankTeams(m.teams);
  $("final-result").textContent = resultText(ranked);
  $("final-standings").innerHTML = ranked
    .map((r) => {
      const cls = [r.rank === 1 ? "winner" : "", r.team.team_id === myTeam() ? "mine" : ""].join(" ").trim();
      const yours = r.team.team_id === myTeam() ? ' <span class="yours">(your team)</span>' : "";
      return `<tr${cls ? ` class="${cls}"` : ""} data-team="${r.team.team_id}"><td>${r.rank}${r.tied ? "=" : ""}</td><td>${escapeHtml(r.team.name)}${yours}</td><td class="num">${r.team.score}</td></tr>`;
    })
    .join("");
  $("recap-link").href = `/match/${encodeURIComponent(seat.code)}/recap/`;
  if (wasHidden) $("game-scroll").scrollTop = 0;
}

/** After the tossup: the whole question, a mark after the word of each buzz, and who said what. */
function renderRecap(t) {
  const r = t && t.outcome && recap && recap.question_id === t.question_id && recap.words ? recap : null;
  $("recap").hidden = !r;
  $("q-text").hidden = !!r;
  if (!r) return;
  const read = t.words.length;
  const marks = new Map();
  for (const b of r.buzzes) marks.set(b.token_index, [...(marks.get(b.token_index) || []), b]);
  const html = [];
  r.words.forEach((w, i) => {
    html.push(`<span class="w${i >= read ? " unread" : ""}">${tokenHtml(w)}</span>`);
    if (r.power_index != null && i === r.power_index - 1) html.push('<span class="buzzmark power">(*)</span>');
    for (const b of marks.get(i) || []) {
      const ok = b.ruling === "correct";
      html.push(`<span class="buzzmark${ok ? " correct" : ""}" data-player="${b.player_id}">${ok ? "✓" : "✗"} ${escapeHtml(playerName(b.player_id))} ${points(b.points)}</span>`);
    }
  });
  $("recap-text").innerHTML = html.join(" ");
  $("recap-buzzes").innerHTML = r.buzzes.length
    ? r.buzzes
        .map((b) => {
          const said = b.guess ? `“${escapeHtml(b.guess)}”` : "no answer";
          return `<li>${escapeHtml(playerName(b.player_id))} (${escapeHtml(teamName(m, b.team_id))}) at word ${b.token_index + 1}: ${said} — ${escapeHtml(b.ruling.replace("_", " "))}, ${points(b.points)}</li>`;
        })
        .join("")
    : "<li>Nobody buzzed.</li>";
}

/** A teammate bot's pending buzz: this (human) seat confirms or declines it before its deadline. */
function renderConfirm() {
  const t = m.tossup;
  const human = !m.you || m.you.kind !== "bot";
  const pending = t && human && !t.outcome ? (t.proposals || []).filter((p) => p.team_id === myTeam()) : [];
  $("confirm").hidden = !pending.length;
  // Rebuilt only when the pending buzzes change, so a tap never lands on a replaced button.
  const html = pending.map((p) => `<li><span>${escapeHtml(playerName(p.player_id))} would buzz at word ${p.token_index + 1} (<span class="left" data-deadline="${p.deadline}"></span> s)</span>`
    + `<button type="button" class="primary" data-confirm="${p.player_id}">Confirm buzz</button>`
    + `<button type="button" data-decline="${p.player_id}">Decline</button></li>`).join("");
  if ($("confirm-list").dataset.html !== html) {
    $("confirm-list").innerHTML = html;
    $("confirm-list").dataset.html = html;
  }
  for (const el of $("confirm-list").querySelectorAll(".left")) {
    el.textContent = String(Math.max(0, Math.ceil(Number(el.dataset.deadline) - (Date.now() / 1000 + clock.offset))));
  }
}

/** The team's captain: its first human seat (the engine's rule). */
function captainOf(teamId) {
  const p = m.players.find((x) => x.team_id === teamId && x.kind === "human");
  return p ? p.player_id : null;
}

const DECISION_TEXT = { own: "own answer", consult: "consult the AI", abstain: "abstain" };

/** On each part of our bonus (presets with bonus decisions): the AI's suggestion on request,
 * and the captain's own answer / consult the AI / abstain. */
function renderConsult(b, cur) {
  const key = cur ? `${b.bonus_id}:${b.part}` : null;
  const show = m.bonusDecisions && b.team_id === myTeam() && cur && !cur.result && !b.ended && m.phase === "bonus";
  $("consult").hidden = !show;
  if (!show) return;
  const ai = (b.suggestions || []).filter((x) => x.part === b.part);
  const shown = aiShown === key;
  $("consult-show").hidden = shown;
  $("consult-suggestion").hidden = !shown;
  if (shown) {
    $("consult-suggestion").innerHTML = ai.length
      ? ai.map((x) => `<p><strong>${escapeHtml(playerName(x.player_id))}:</strong> <span class="ai-guess">${escapeHtml(x.guess)}</span>`
          + ` <span class="ai-confidence">(${Math.round(x.confidence * 100)}% confident)</span></p>`
          + (x.explanation ? `<p class="ai-explanation">${escapeHtml(x.explanation)}</p>` : "")).join("")
      : "<p>The AI has not suggested an answer yet.</p>";
  }
  const captain = captainOf(b.team_id);
  const isCaptain = captain === seat.player_id;
  const decided = b.decision || (decisionSent === key ? "…" : "");
  $("consult-who").textContent = decided
    ? `Decision: ${DECISION_TEXT[b.decision] || "sent"}`
    : isCaptain ? "You are the captain: choose." : `${playerName(captain)} (captain) chooses.`;
  $("consult-choices").hidden = !isCaptain || !!decided;
  for (const btn of $("consult-choices").querySelectorAll("button")) {
    btn.disabled = btn.dataset.decision === "consult" && !ai.length;
  }
}

function bonusResultText(b) {
  if (b.ended || m.phase === "between") return `Bonus: ${b.points} points`;
  if (bonusPrompt && b.team_id !== myTeam()) return bonusPrompt; // the team sees it above its field
  const last = b.parts.filter((p) => p && p.result).pop();
  if (!last) return "";
  const how = last.result.decision && last.result.decision !== "own" ? ` — ${DECISION_TEXT[last.result.decision]}` : "";
  return `Part ${last.part + 1}: ${last.result.ruling.replace("_", " ")} (${points(last.result.points)})${how}`;
}

function renderBonus() {
  const b = m.bonus;
  const show = !!b && m.status !== "ended"; // a bonus the match's end interrupted is over
  $("bonus").hidden = !show;
  if (!show) {
    bonusClock.stop();
    return;
  }
  const ours = b.team_id === myTeam();
  const cur = Number.isInteger(b.part) && b.part >= 0 ? b.parts[b.part] : null;
  // Lead-in and parts as tokens: an image in them shows as an image (bonusTextHtml).
  const leadin = bonusTextHtml(b.leadin_tokens, b.leadin);
  setHtml($("bonus-leadin"), `Bonus for ${escapeHtml(teamName(m, b.team_id))}${leadin ? ` — ${leadin}` : ""}`);
  setHtml($("bonus-text"), cur ? `<strong>Part ${b.part + 1} [${cur.value}]</strong> ${bonusTextHtml(cur.tokens, cur.text)}` : "");
  const key = cur ? `${b.bonus_id}:${b.part}` : null;
  const open = ours && cur && !cur.result && !b.ended && m.phase === "bonus" && bonusSent !== key;
  const form = $("bonus-form");
  const wasHidden = form.hidden;
  form.hidden = !open;
  $("bonus-prompt").hidden = !bonusPrompt;
  $("bonus-prompt").textContent = bonusPrompt;
  if (open) {
    bonusClock[m.paused ? "hold" : "start"](b.answer_deadline, clock.offset);
    // A new part, or a prompt on this one: an empty field, focused, the whole form in view.
    const formKey = `${key}:${bonusPrompt}`;
    if (wasHidden || form.dataset.key !== formKey) {
      form.dataset.key = formKey;
      $("bonus-input").value = "";
      showForm(form, $("bonus-input"));
    }
  } else {
    bonusClock.stop();
  }
  renderConsult(b, cur);
  $("bonus-result").textContent = bonusResultText(b);
}

function buzz() {
  if (!canBuzz()) return;
  const t = m.tossup;
  const now = Date.now() / 1000;
  const tokenIndex = t.words.length - 1;
  pendingBuzz = socket.send({ type: "buzz", question_id: t.question_id, token_index: tokenIndex, client_time: now });
  myPress = { question_id: t.question_id, token_index: tokenIndex };
  if (pendingBuzz !== null) buzzFeedback();
  // If neither a buzz event nor an error comes back (lost frame), free the button again.
  const ref = pendingBuzz;
  setTimeout(() => { if (pendingBuzz === ref) { pendingBuzz = null; render(); } }, 3000);
  render();
}

$("join-code").addEventListener("input", () => { clearTimeout(loadTeams.t); loadTeams.t = setTimeout(loadTeams, 250); });
$("join-form").addEventListener("submit", join);
if (knownIdentity()) $("join-handle").value = knownIdentity().handle;
$("leave").addEventListener("click", () => $("leave-dialog").showModal());
$("leave-dialog").addEventListener("close", () => { if ($("leave-dialog").returnValue === "leave") leave(); });
$("font-smaller").addEventListener("click", () => { fontStep = Math.max(0, fontStep - 1); applyFont(); });
$("font-larger").addEventListener("click", () => { fontStep = Math.min(FONT_STEPS.length - 1, fontStep + 1); applyFont(); });
$("buzz-feedback").checked = localStorage.getItem(FEEDBACK_KEY) === "on";
$("buzz-feedback").addEventListener("change", () => localStorage.setItem(FEEDBACK_KEY, $("buzz-feedback").checked ? "on" : "off"));
if (window.visualViewport) window.visualViewport.addEventListener("resize", fitViewport);
window.addEventListener("resize", fitViewport);
document.addEventListener("focusin", fitViewport);
document.addEventListener("focusout", () => setTimeout(fitViewport, 0));
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
  if (socket.send({ type: "answer", question_id: t.question_id, text: $("answer-input").value }) !== null) {
    answerSent = true;
    banner(WAITING);
  }
  render();
});
$("bonus-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const b = m.bonus;
  if (!b) return;
  if (socket.send({ type: "bonus_answer", bonus_id: b.bonus_id, part: b.part, text: $("bonus-input").value }) !== null) {
    bonusSent = `${b.bonus_id}:${b.part}`;
    bonusPrompt = "";
  }
  render();
});
$("confirm-list").addEventListener("click", (ev) => {
  const btn = ev.target.closest("button[data-confirm], button[data-decline]");
  if (!btn) return;
  const confirm = btn.dataset.confirm !== undefined;
  socket.send({ type: confirm ? "confirm_buzz" : "decline_buzz", bot_id: Number(confirm ? btn.dataset.confirm : btn.dataset.decline) });
  btn.disabled = true;
});
$("consult-show").addEventListener("click", () => {
  const b = m.bonus;
  if (b) aiShown = `${b.bonus_id}:${b.part}`;
  render();
});
$("consult-choices").addEventListener("click", (ev) => {
  const btn = ev.target.closest("button[data-decision]");
  const b = m.bonus;
  if (!btn || !b) return;
  if (socket.send({ type: "bonus_decision", bonus_id: b.bonus_id, part: b.part, decision: btn.dataset.decision }) !== null) {
    decisionSent = `${b.bonus_id}:${b.part}`;
  }
  render();
});
// The confirmation prompt and the wait for the next tossup count down on their own (no event
// arrives while they wait).
setInterval(() => { if (m && m.tossup && (m.tossup.proposals || []).length) renderConfirm(); }, 500);
setInterval(() => { if (m) renderNextTossup(); }, 250);
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
