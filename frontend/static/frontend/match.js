// Shared by the player, moderator and spectator pages: the reconnecting match socket, the
// local match model (snapshot + events, docs/PROTOCOL.md) and small rendering helpers.

export const LIVE_PHASES = ["reading", "dead_time"];

/** JSON embedded by Django's json_script. */
export function pageData(id = "page-data") {
  const el = document.getElementById(id);
  return el ? JSON.parse(el.textContent) : {};
}

export function escapeHtml(s) {
  return String(s ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

/** Answer lines carry <b><u>…</u></b> for the required part: keep only those inline tags. */
export function answerHtml(s) {
  return escapeHtml(s).replace(/&lt;(\/?)(b|u|i|em|strong)&gt;/gi, "<$1$2>");
}

let toastTimer = null;
/** Show a message briefly (errors in red, info in dark). */
export function toast(message, kind = "error", ms = 3500) {
  const el = document.getElementById("toast");
  if (!el) return;
  el.textContent = message;
  el.className = `toast ${kind}`;
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { el.hidden = true; }, ms);
}

/** Seconds without any frame from the server before the socket is presumed dead (heartbeats come every 5 s). */
export const SILENT_SERVER_MS = 15000;

/** JSON with object keys sorted, so equal commands serialise equally on every dashboard. */
function stableJson(value) {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(",")}]`;
  if (value && typeof value === "object") {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${stableJson(value[k])}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/**
 * A moderator command's idempotency key, from what the moderator saw: the command, its other
 * fields and the last applied seq. A double click, or two dashboards on the same state, send
 * the same id and the server applies it once (PROTOCOL.md "Command ids").
 */
export function commandId(frame, lastSeq) {
  const { type, name, ref, command_id, seen_seq, ...fields } = frame;
  return `${name}:${stableJson(fields)}@${lastSeq}`;
}

/**
 * One websocket to /ws/match/<code>/<path>/ (path: play | moderate | watch) that reconnects with backoff. Every (re)connect
 * starts with a snapshot from the server; `resync()` asks for a fresh one (e.g. after the
 * tablet wakes up). Events at or below the last applied seq are dropped (duplicates). The
 * server's heartbeats are answered at once; a heartbeat whose seq is past the last applied
 * one means an event was missed (→ resync); no frame for SILENT_SERVER_MS → reconnect. A
 * snapshot may arrive at any time (the server resyncs clients after an outage).
 */
export class MatchSocket {
  constructor({ code, path, token = "", params = {}, onSnapshot, onEvent, onError, onStatus, onPong, onPresence }) {
    // params: extra query parameters (the dashboard asks for presence frames with {presence: 1}).
    Object.assign(this, { code, path, token, params, onSnapshot, onEvent, onError, onStatus, onPong, onPresence });
    this.lastSeq = -1;
    this.backoff = 500;
    this.ref = 0;
    this.ws = null;
    this.stopped = false;
    this.pingTimer = null;
    this.watchdog = null;
    this.lastFrameAt = 0;
    document.addEventListener("visibilitychange", () => {
      if (document.visibilityState === "visible") this.resync();
    });
  }

  url() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const query = new URLSearchParams({ ...(this.token ? { token: this.token } : {}), ...this.params }).toString();
    const q = query ? `?${query}` : "";
    return `${scheme}://${location.host}/ws/match/${encodeURIComponent(this.code)}/${this.path}/${q}`;
  }

  connect() {
    this.stopped = false;
    this.status("connecting");
    const ws = (this.ws = new WebSocket(this.url()));
    this.lastFrameAt = Date.now();
    clearInterval(this.watchdog);
    this.watchdog = setInterval(() => this.checkAlive(ws), 1000);
    ws.onopen = () => {
      this.backoff = 500;
      this.status("open");
      this.ping();
      clearInterval(this.pingTimer);
      this.pingTimer = setInterval(() => this.ping(), 5000);
    };
    ws.onmessage = (msg) => {
      if (ws !== this.ws) return;
      this.lastFrameAt = Date.now();
      let frame;
      try {
        frame = JSON.parse(msg.data);
      } catch {
        return;
      }
      this.handle(frame);
    };
    ws.onclose = (ev) => {
      if (ws !== this.ws) return;
      clearInterval(this.pingTimer);
      clearInterval(this.watchdog);
      if (ev.code === 4403) {
        this.stopped = true;
        this.status("forbidden");
        return;
      }
      this.status("closed");
      this.reconnectLater();
    };
  }

  /** Reconnect after the current backoff (doubling to 5 s); 1011 (server unavailable) and 4408 (too slow) land here too. */
  reconnectLater() {
    if (this.stopped) return;
    setTimeout(() => this.connect(), this.backoff);
    this.backoff = Math.min(this.backoff * 2, 5000);
  }

  /** A server that has sent nothing (not even a heartbeat) for SILENT_SERVER_MS is gone: drop the socket and reconnect. */
  checkAlive(ws) {
    if (ws !== this.ws || Date.now() - this.lastFrameAt < SILENT_SERVER_MS) return;
    clearInterval(this.pingTimer);
    clearInterval(this.watchdog);
    this.ws = null; // its late onclose is ignored
    try { ws.close(); } catch { /* already closing */ }
    this.status("closed");
    this.reconnectLater();
  }

  close() {
    this.stopped = true;
    clearInterval(this.pingTimer);
    clearInterval(this.watchdog);
    if (this.ws) this.ws.close();
  }

  status(s) { if (this.onStatus) this.onStatus(s); }

  handle(frame) {
    switch (frame.type) {
      case "snapshot":
        this.lastSeq = frame.seq;
        this.onSnapshot(frame.state, frame.seq);
        break;
      case "event":
        if (frame.seq <= this.lastSeq) return;
        this.lastSeq = frame.seq;
        this.onEvent(frame.event, frame.data, frame.seq);
        break;
      case "heartbeat":
        this.raw({ type: "heartbeat_ack", server_time: frame.server_time });
        if (frame.seq > this.lastSeq) this.resync(); // an event sent to us never arrived
        break;
      case "error":
        if (this.onError) this.onError(frame);
        break;
      case "pong":
        if (this.onPong) this.onPong(frame);
        break;
      case "presence":
        if (this.onPresence) this.onPresence(frame);
        break;
      default:
        break; // acks: the events themselves update the page
    }
  }

  raw(frame) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(frame));
  }

  /**
   * Send a frame if connected; returns its ref (or null when offline). Commands get a command_id
   * and the seq of the view they were made on (`seen_seq`): the server refuses one made on a view
   * the match has moved on from (`stale_view`, PROTOCOL.md "Stale views").
   */
  send(frame) {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) {
      toast("Not connected — retrying…");
      return null;
    }
    const ref = ++this.ref;
    let out = frame;
    if (frame.type === "command") {
      out = { ...frame, command_id: frame.command_id || commandId(frame, this.lastSeq) };
      if (this.lastSeq >= 0 && out.seen_seq === undefined) out.seen_seq = this.lastSeq;
    }
    this.ws.send(JSON.stringify({ ...out, ref }));
    return ref;
  }

  ping() {
    this.raw({ type: "ping", client_time: Date.now() / 1000 });
  }

  resync() {
    this.raw({ type: "resync", after_seq: this.lastSeq });
  }
}

const BONUS_PHASES = ["bonus", "bonus_ruling"];

/** A buzz as the model keeps it: the guess, verdict and reason are the moderator's (null for others). */
function buzzModel(b) {
  return {
    player_id: b.player_id,
    team_id: b.team_id,
    kind: b.kind,
    token_index: b.token_index,
    answer_deadline: b.answer_deadline ?? null,
    prompts: b.prompts || 0,
    answerer_id: b.answerer_id ?? null,
    directed_prompt: b.directed_prompt ?? null,
    guess: b.guess ?? null,
    verdict: b.verdict ?? null,
    reason: b.reason ?? null,
  };
}

/**
 * The page's copy of the match, built from a snapshot `state` (PROTOCOL.md "Views"). applyEvent keeps
 * it equal to the model of a fresh snapshot (tests/contract/match_reducer.test.mjs).
 */
export function modelFromSnapshot(state) {
  const t = state.tossup;
  const b = state.bonus;
  return {
    status: state.status,
    phase: state.phase,
    wpm: state.wpm,
    paused: !!state.paused,
    // The pace between questions in seconds (null: the moderator advances) and, between
    // questions, when the next tossup starts (server clock, epoch seconds; null: on Next).
    betweenQuestions: state.between_questions ?? null,
    nextTossupAt: state.next_tossup_at ?? null,
    teams: (state.teams || []).map((x) => ({ ...x })),
    players: (state.players || []).map((p) => ({ ...p })),
    tossupCount: state.tossup_count || 0,
    bonusDecisions: !!state.bonus_decisions,
    match: state.match || {},
    you: state.you ? { ...state.you } : null,
    // Who plays (active seat ids per team; the rest of a team's seats are on its bench) and the
    // preset's halves, overtime and timeouts (competition/game/lineups.py, periods.py).
    playersPerTeam: state.players_per_team ?? null,
    lineups: Object.fromEntries(Object.entries(state.lineups || {}).map(([k, v]) => [k, [...v]])),
    periods: periodsModel(state.periods),
    // The moderator's view (the only one with protests) sees the pending guess and the judge's verdict.
    moderator: Array.isArray(state.protests),
    tossup: t
      ? {
          index: t.index,
          question_id: t.question_id,
          token_count: t.token_count,
          words: [...(t.words_revealed || [])],
          category: t.category || "",
          locked_teams: [...(t.locked_teams || [])],
          buzz: t.buzz ? buzzModel(t.buzz) : null,
          answer_line: t.answer_line ?? null,
          outcome: t.outcome ?? null,
          proposals: (t.proposals || []).map((p) => ({ ...p })),
        }
      : null,
    bonus: b
      ? {
          bonus_id: b.bonus_id,
          team_id: b.team_id,
          leadin: b.leadin || "",
          leadin_tokens: b.leadin_tokens ?? null,
          part: b.part,
          parts: (b.parts || []).map((p) => ({ ...p, result: p.result ? { ...p.result } : null })),
          answer_deadline: b.answer_deadline ?? null,
          pending: b.pending ? { ...b.pending } : null,
          points: b.points || 0,
          // A snapshot keeps the last bonus until the next tossup: it is over unless a part is open or ruled.
          ended: !BONUS_PHASES.includes(state.phase),
          decision: b.decision || "",
          consulted: b.consulted ?? null,
          suggestions: (b.suggestions || []).map((x) => ({ ...x })),
        }
      : null,
  };
}

function periodsModel(p) {
  const d = p || {};
  return {
    half: d.half ?? 1,
    overtime: !!d.overtime,
    tossupsPerHalf: d.tossups_per_half ?? null,
    timeouts: d.timeouts ?? 0,
    timeoutsPer: d.timeouts_per || "game",
    timeoutsLeft: { ...(d.timeouts_left || {}) },
    timeout: d.timeout ? { ...d.timeout } : null,
    timeoutSeconds: d.timeout_seconds ?? null,
  };
}

function setScores(m, scores) {
  if (!scores) return;
  for (const team of m.teams) {
    if (scores[String(team.team_id)] !== undefined) team.score = scores[String(team.team_id)];
  }
}

/** After a ruling the tossup goes on: read on, or wait out the dead time if fully read. */
function readingPhase(t) {
  return t.words.length >= t.token_count ? "dead_time" : "reading";
}

/**
 * Apply one event to the model in place (the mirror of competition.game.apply_event). Returns
 * "resync" when the event changes state in ways only the server can recompute (an undone or
 * corrected ruling unlocks teams, reverts parts, changes the history the recaps show).
 */
export function applyEvent(m, type, d) {
  setScores(m, d.scores);
  const t = m.tossup;
  const b = m.bonus;
  switch (type) {
    case "team_added":
      if (!m.teams.some((x) => x.team_id === d.team_id)) {
        m.teams.push({ team_id: d.team_id, name: d.name, kind: d.kind, score: 0 });
        m.lineups[String(d.team_id)] = [];
        m.periods.timeoutsLeft[String(d.team_id)] = m.periods.timeouts;
      }
      break;
    case "player_joined":
      if (!m.players.some((p) => p.player_id === d.player_id)) {
        m.players.push({ player_id: d.player_id, team_id: d.team_id, name: d.name, kind: d.kind, weight_class: d.weight_class, buzz_mode: d.buzz_mode, min_token: d.min_token });
        const active = (m.lineups[String(d.team_id)] ||= []);
        // A seat beyond the preset's limit joins the bench.
        if (m.playersPerTeam == null || active.length < m.playersPerTeam) active.push(d.player_id);
      }
      break;
    case "lineup_changed":
      m.lineups[String(d.team_id)] = [...d.players];
      break;
    case "timeout_called":
      m.periods.timeoutsLeft[String(d.team_id)] = d.left;
      m.periods.timeout = { team_id: d.team_id, length: d.length, ends_at: d.ends_at, remaining: null };
      m.nextTossupAt = d.next_tossup_at ?? null;
      break;
    case "timeout_undone": // taken back: the team has it again, the next tossup is due as before it
      m.periods.timeoutsLeft[String(d.team_id)] = d.left;
      m.periods.timeout = d.timeout ? { ...d.timeout } : null;
      m.nextTossupAt = d.next_tossup_at ?? null;
      break;
    case "halftime":
      m.periods.half = d.half;
      m.periods.timeoutsLeft = { ...d.timeouts_left };
      m.periods.timeout = null;
      break;
    case "overtime_started":
      m.periods.overtime = true;
      m.periods.timeout = null;
      break;
    case "renamed": {
      const [key, rows] = d.team_id != null ? ["team_id", m.teams] : ["player_id", m.players];
      for (const row of rows) if (row[key] === d[key]) row.name = d.name;
      if (m.you && d.player_id != null && m.you.player_id === d.player_id) m.you.name = d.name;
      break;
    }
    case "match_started":
      m.status = "running";
      break;
    case "tossup_started":
      m.phase = "reading";
      m.bonus = null;
      m.nextTossupAt = null;
      m.periods.timeout = null;
      m.tossup = {
        index: d.index, question_id: d.question_id, token_count: d.token_count, words: [],
        category: d.category || "", locked_teams: [], buzz: null, answer_line: null, outcome: null, proposals: [],
      };
      break;
    case "tossup_answer":
      if (t && t.question_id === d.question_id) t.answer_line = d.answer_line;
      break;
    case "words":
      if (t && t.question_id === d.question_id) {
        d.words.forEach((w, k) => { t.words[d.start + k] = w; });
        if (t.words.length >= t.token_count) m.phase = "dead_time";
      }
      break;
    case "buzz":
      if (t) {
        t.buzz = buzzModel(d);
        if (!t.locked_teams.includes(d.team_id)) t.locked_teams.push(d.team_id);
      }
      m.phase = "answering";
      break;
    case "buzz_proposed": // a teammate bot's buzz waits for confirmation (this team and the moderator)
      if (t && t.question_id === d.question_id) {
        t.proposals = [...t.proposals.filter((p) => p.player_id !== d.player_id), { player_id: d.player_id, team_id: d.team_id, token_index: d.token_index, deadline: d.deadline }];
      }
      break;
    case "proposal_closed":
      if (t) t.proposals = t.proposals.filter((p) => p.player_id !== d.player_id);
      break;
    case "answer_delegated":
      if (t && t.buzz) Object.assign(t.buzz, { answerer_id: d.answerer_id === d.player_id ? null : d.answerer_id, answer_deadline: d.answer_deadline, prompts: 0, directed_prompt: null });
      break;
    case "answer_given": // to the moderator; awaiting_ruling (to all) stops the clock
      if (t && t.buzz) Object.assign(t.buzz, { guess: d.guess, verdict: d.verdict, reason: d.reason, directed_prompt: d.directed_prompt });
      break;
    case "prompt":
      if (t && t.buzz) Object.assign(t.buzz, { directed_prompt: d.directed_prompt, answer_deadline: d.answer_deadline, prompts: t.buzz.prompts + 1, guess: null, verdict: null, reason: null });
      m.phase = "answering";
      break;
    case "buzz_ruled":
      if (t) {
        t.buzz = null;
        m.phase = readingPhase(t);
      }
      break;
    case "reading_resumed":
      if (t) m.phase = readingPhase(t);
      break;
    case "awaiting_ruling":
      // The clock stops for the moderator's ruling (guess and verdict go to the moderator only).
      if (d.bonus_id != null) {
        if (b) b.answer_deadline = null;
        m.phase = "bonus_ruling";
      } else {
        if (t && t.buzz) {
          t.buzz.answer_deadline = null;
          if (!m.moderator) t.buzz.directed_prompt = null; // others see a prompt only while it is answered
        }
        m.phase = "ruling";
      }
      break;
    case "tossup_ended":
      if (t) Object.assign(t, { answer_line: d.answer_line, outcome: d.outcome, buzz: null });
      m.phase = "between";
      break;
    case "bonus_started":
      m.phase = "bonus";
      m.nextTossupAt = null;
      // part -1 until its first bonus_part, which the same command sends.
      m.bonus = { bonus_id: d.bonus_id, team_id: d.team_id, leadin: d.leadin || "", leadin_tokens: d.leadin_tokens ?? null, part: -1, parts: [], answer_deadline: null, pending: null, points: 0, ended: false, decision: "", consulted: null, suggestions: [] };
      break;
    case "bonus_answer_lines":
      if (b) b.parts = d.parts.map((p) => ({ ...p, result: null }));
      break;
    case "bonus_part":
      if (b) {
        b.part = d.part;
        b.parts[d.part] = { ...(b.parts[d.part] || {}), part: d.part, text: d.text, tokens: d.tokens ?? null, value: d.value, result: null };
        Object.assign(b, { answer_deadline: d.answer_deadline, pending: null, decision: "", consulted: null, suggestions: [] });
      }
      m.phase = "bonus";
      break;
    case "bonus_suggestion": // the team's AI on the open part (this team and the moderator)
      if (b) {
        const s = { player_id: d.player_id, part: d.part, guess: d.guess, confidence: d.confidence, explanation: d.explanation };
        b.suggestions = [...b.suggestions.filter((x) => x.player_id !== d.player_id), s];
      }
      break;
    case "bonus_decision":
      if (b) Object.assign(b, { decision: d.decision, consulted: d.consulted });
      break;
    case "bonus_answer_given": // to the moderator; awaiting_ruling (to all) stops the clock
      if (b) b.pending = { part: d.part, player_id: d.player_id, guess: d.guess, verdict: d.verdict, reason: d.reason, directed_prompt: d.directed_prompt };
      break;
    case "bonus_prompt":
      if (b) Object.assign(b, { pending: null, answer_deadline: d.answer_deadline });
      m.phase = "bonus";
      break;
    case "bonus_part_ruled":
      if (b && b.parts[d.part]) {
        const result = { part: d.part, player_id: d.player_id, guess: d.guess, ruling: d.ruling, points: d.points, decision: d.decision || "" };
        Object.assign(b.parts[d.part], { result, answer_line: d.answer_line });
        Object.assign(b, { points: b.points + d.points, pending: null, answer_deadline: null });
      }
      break;
    case "bonus_ended":
      if (b) Object.assign(b, { ended: true, points: d.points, pending: null, answer_deadline: null });
      m.phase = "between";
      break;
    case "paused": // a running timeout's countdown stops with what it had left
      m.paused = true;
      if (m.periods.timeout && d.at != null) m.periods.timeout.remaining = Math.max(0, m.periods.timeout.ends_at - d.at);
      break;
    case "resumed": // every pending deadline moved by the pause
      m.paused = false;
      if (m.periods.timeout) {
        m.periods.timeout.ends_at += d.shift;
        m.periods.timeout.remaining = null;
      }
      if (t && t.buzz && t.buzz.answer_deadline !== null) t.buzz.answer_deadline += d.shift;
      if (t) for (const p of t.proposals) p.deadline += d.shift;
      if (b && b.answer_deadline !== null) b.answer_deadline += d.shift;
      if (m.nextTossupAt !== null) m.nextTossupAt += d.shift;
      break;
    case "speed_changed":
      m.wpm = d.wpm;
      break;
    case "pace_changed":
      m.betweenQuestions = d.between_questions;
      m.nextTossupAt = d.next_tossup_at;
      break;
    case "between_questions":
      m.phase = "between";
      m.nextTossupAt = d.next_tossup_at;
      break;
    case "bonus_withdrawn":
      if (b && b.bonus_id === d.bonus_id) m.bonus = null;
      break;
    case "match_ended":
      m.status = "ended";
      m.phase = "ended";
      m.paused = false;
      m.nextTossupAt = null;
      if (b) b.ended = true;
      if (t && t.buzz) { // a buzz cut off by the end: nothing is pending
        Object.assign(t.buzz, { guess: null, verdict: null, reason: null });
        if (!m.moderator) t.buzz.directed_prompt = null;
      }
      break;
    case "ruling_undone":
    case "ruling_corrected":
    case "question_replaced": // a spare read in a thrown-out question's place
    case "ruling_reviewed": // the scoresheet corrected after the fact
    case "buzz_added": // a missed buzz added to the scoresheet
      return "resync";
    default:
      break;
  }
  return null;
}

export function teamName(m, id) {
  const team = m.teams.find((x) => x.team_id === id);
  return team ? team.name : `team ${id}`;
}

export function renderScoreboard(el, m, { mine = null } = {}) {
  // Dim the teams locked out of the live tossup (not the one answering now).
  const t = m.tossup;
  const locked = t && !t.outcome ? t.locked_teams.filter((id) => !(t.buzz && t.buzz.team_id === id)) : [];
  el.innerHTML = m.teams
    .map((x) => {
      const cls = [x.kind, x.team_id === mine ? "mine" : "", locked.includes(x.team_id) ? "locked" : ""].join(" ");
      return `<li class="${cls}" data-team="${x.team_id}"><span class="name">${escapeHtml(x.name)}</span><span class="score">${x.score}</span></li>`;
    })
    .join("");
}

/**
 * One token of a tossup as an element (class `w`): a word as its text; an image as an img with
 * its alt text, an audio clip as an audio player labelled by its alt text, a delay as a visible
 * pause mark (tokens: competition/game/tokens.py). `autoplay`: start an audio clip at once (the
 * projector, which the room hears).
 */
export function tokenNode(w, { autoplay = false } = {}) {
  const span = document.createElement("span");
  span.className = "w";
  if (w == null || typeof w === "string") {
    span.textContent = w ?? "…";
    return span;
  }
  span.classList.add("token-media", `token-${w.kind}`);
  span.dataset.kind = w.kind;
  if (w.kind === "image") {
    const img = document.createElement("img");
    img.src = w.url;
    img.alt = w.alt || "image clue";
    img.decoding = "async";
    span.append(img);
  } else if (w.kind === "audio") {
    const audio = document.createElement("audio");
    audio.controls = true;
    audio.preload = "auto";
    audio.autoplay = autoplay;
    audio.src = w.url;
    audio.setAttribute("aria-label", w.alt || "audio clue");
    span.append(audio);
    if (w.alt) span.append(Object.assign(document.createElement("span"), { className: "alt", textContent: w.alt }));
  } else {
    span.textContent = "⏸";
    span.title = `pause, ${w.duration} s`;
    span.setAttribute("role", "img");
    span.setAttribute("aria-label", `pause, ${w.duration} seconds`);
  }
  return span;
}

/** The inner HTML of a token's span (for pages that build the question as a string). */
export function tokenHtml(w) {
  return typeof w === "string" ? escapeHtml(w) : tokenNode(w).innerHTML;
}

/**
 * A bonus lead-in's or part's text as HTML (pages build the bonus as a string): its display tokens
 * (`leadin_tokens`, a part's `tokens`: words, and images, audio and delays as a tossup shows them,
 * tokenHtml), or its plain `text` when no tokens came.
 */
export function bonusTextHtml(tokens, text = "") {
  if (!Array.isArray(tokens)) return escapeHtml(text);
  return tokens
    .map((w) => (typeof w === "string" ? escapeHtml(w) : `<span class="token-media token-${escapeHtml(w.kind)}">${tokenHtml(w)}</span>`))
    .join(" ");
}

const shownHtml = new WeakMap();

/** Set `el`'s inner HTML only when it changed, so an image in it is not rebuilt on every render. */
export function setHtml(el, html) {
  if (shownHtml.get(el) === html && el.innerHTML !== "") return;
  shownHtml.set(el, html);
  el.innerHTML = html;
}

/** Seconds of a reveal lockout the tokens of one `words` event start (0: none). */
export function lockoutOf(words) {
  return Math.max(0, ...words.map((w) => (w && typeof w === "object" && w.lockout) || 0));
}

/**
 * The question as revealed so far, one span per token (tokenNode); new tokens are appended (so only
 * they fade in) unless the question or the buzz mark changed.
 */
export function renderWords(el, t, { buzzIndex = null, autoplay = false } = {}) {
  if (!t) {
    el.textContent = "";
    el.dataset.key = "";
    return;
  }
  const key = `${t.question_id}:${buzzIndex}`;
  let n = Number(el.dataset.n || 0);
  if (el.dataset.key !== key || n > t.words.length) {
    el.textContent = "";
    el.dataset.key = key;
    n = 0;
  }
  const frag = document.createDocumentFragment();
  for (let i = n; i < t.words.length; i++) {
    const span = tokenNode(t.words[i], { autoplay });
    span.dataset.i = i;
    frag.append(span, " ");
    if (i === buzzIndex) {
      const mark = document.createElement("span");
      mark.className = "buzzmark";
      mark.textContent = "(#)";
      frag.append(mark, " ");
    }
  }
  el.append(frag);
  el.dataset.n = t.words.length;
}

export function renderHeader(m) {
  const idx = document.getElementById("q-index");
  const cat = document.getElementById("q-category");
  if (idx) idx.textContent = m.tossup ? `Tossup ${m.tossup.index + 1} of ${m.tossupCount}` : m.status === "ended" ? "Match over" : "Waiting for the moderator to start…";
  if (cat) cat.textContent = m.tossup && m.tossup.category ? `· ${m.tossup.category}` : "";
}

/** Server clock − client clock, estimated from pongs (the minimum-RTT sample wins). */
export class ClockOffset {
  constructor() {
    this.best = null;
    this.offset = 0;
  }

  add(pong) {
    const now = Date.now() / 1000;
    const rtt = now - pong.client_time;
    if (this.best === null || rtt <= this.best) {
      this.best = rtt;
      this.offset = pong.server_time - (pong.client_time + rtt / 2);
    }
  }
}

export function setConn(state) {
  const el = document.getElementById("conn");
  if (!el) return;
  el.hidden = false;
  el.dataset.state = state;
  el.textContent = { open: "live", connecting: "connecting…", closed: "reconnecting…", forbidden: "not allowed" }[state] || state;
}

/** Teams best first; equal scores share a rank ("1", "1", "3"): [{team, rank, tied}]. */
export function rankTeams(teams) {
  const sorted = [...teams].sort((a, b) => b.score - a.score);
  return sorted.map((team) => ({
    team,
    rank: 1 + sorted.filter((x) => x.score > team.score).length,
    tied: sorted.filter((x) => x.score === team.score).length > 1,
  }));
}

/** The result in words, from rankTeams: "Team A wins, 65 to 60"; a tie for first is said as one
 * ("Tie at 60: Team A and Team B"). */
export function resultText(ranked) {
  if (!ranked.length) return "";
  const top = ranked[0].team.score;
  const winners = ranked.filter((r) => r.rank === 1).map((r) => r.team.name);
  if (winners.length > 1) return `Tie at ${top}: ${winners.slice(0, -1).join(", ")} and ${winners.at(-1)}`;
  return ranked.length > 1 ? `${winners[0]} wins, ${top} to ${ranked[1].team.score}` : `${winners[0]}: ${top}`;
}
