// The projector / scoreboard view: the `watch` socket sees only `all` events, so the answer line
// appears only with `tossup_ended`. Scores ranked with who leads, the question as read, the
// bonus's progress and, at the end, the result with ties and the standings (no "live", no leader).
// A projector cannot scroll: fit() shrinks what is below the scores until it fits the screen.
import {
  MatchSocket, answerHtml, applyEvent, bonusTextHtml, escapeHtml, modelFromSnapshot, pageData, rankTeams, renderHeader,
  renderWords, resultText, setConn, setHtml, teamName,
} from "./match.js";
import { periodLabel, periodsHtml } from "./periods.js";

const $ = (id) => document.getElementById(id);
const page = pageData();
let m = null;
let bonusParts = 3; // parts of the bonus being read (bonus_started says; a snapshot lists only those read)
let connState = "connecting";

function banner(text, kind = "") {
  $("banner").textContent = text;
  $("banner").className = `banner proj-banner ${kind}`;
}

/** The connection badge: "live" while the match runs, "final" once it is over. */
function showConn(state = connState) {
  connState = state;
  setConn(state);
  if (state === "open" && m && m.status === "ended") {
    $("conn").dataset.state = "final";
    $("conn").textContent = "final";
  }
}

const socket = new MatchSocket({
  code: page.code,
  path: "watch",
  onSnapshot(state) {
    m = modelFromSnapshot(state);
    banner(m.paused && m.status !== "ended" ? "Paused" : "", "paused");
    render();
  },
  onEvent(type, d) {
    if (applyEvent(m, type, d) === "resync") socket.resync();
    if (type === "bonus_started") bonusParts = d.parts;
    if (type === "buzz") banner(`${d.player} (${d.team}) buzzed`, "buzzed");
    if (type === "buzz_ruled") {
      const ruling = { correct: "Correct", wrong: "Incorrect", no_penalty: "No penalty", timeout: "Time" }[d.ruling] || d.ruling;
      banner(`${teamName(m, d.team_id)}: ${ruling} (${d.points > 0 ? "+" : ""}${d.points})`, d.points > 0 ? "good" : "bad");
    }
    if (type === "ruling_undone") banner("Ruling reversed by the moderator", "bad");
    if (["tossup_started", "resumed", "bonus_started", "match_ended"].includes(type)) banner("");
    if (type === "paused") banner("Paused", "paused");
    render();
  },
  onStatus: showConn,
});

function renderScores() {
  const ranked = rankTeams(m.teams);
  const top = ranked.length ? ranked[0].team.score : 0;
  const leaders = ranked.filter((r) => r.rank === 1);
  // no leader before the start, and a winner (not a leader) at the end; none while the
  // tournament keeps live scores private (they arrive null: competition/spectators.py)
  const hidden = m.teams.some((x) => x.score == null);
  const live = m.status === "running" && !hidden;
  $("scoreboard").innerHTML = m.teams
    .map((x) => {
      const leads = live && leaders.length === 1 && leaders[0].team === x;
      return `<li class="${x.kind}${leads ? " leader" : ""}" data-team="${x.team_id}"><span class="name">${escapeHtml(x.name)}</span><span class="score">${x.score ?? "—"}</span>${leads ? '<span class="badge">leads</span>' : ""}</li>`;
    })
    .join("");
  let lead = "";
  if (live && ranked.length > 1) {
    if (leaders.length > 1) lead = `Tied at ${top}`;
    else lead = `${ranked[0].team.name} leads by ${top - ranked[1].team.score}`;
  }
  $("lead").textContent = lead;
}

function renderBonus() {
  const b = m.bonus;
  const show = !!b && m.status !== "ended";
  $("bonus").hidden = !show;
  document.body.classList.toggle("bonus-on", show);
  if (!show) return;
  const total = Math.max(b.parts.length, bonusParts);
  const dots = Array.from({ length: total }, (_, k) => {
    const p = b.parts[k];
    const res = p && p.result;
    const cls = res ? (res.points == null ? "ruled" : res.points > 0 ? "got" : "missed") : k === b.part && !b.ended ? "current" : "";
    const label = res ? (res.points == null ? "" : `${res.points > 0 ? "+" : ""}${res.points}`) : k === b.part && !b.ended ? "now" : "";
    return `<li class="${cls}"><span>Part ${k + 1}</span><strong>${label}</strong></li>`;
  }).join("");
  const cur = !b.ended && b.part >= 0 ? b.parts[b.part] : null;
  const text = cur && cur.text ? `<p class="bonus-text">[${cur.value}] ${bonusTextHtml(cur.tokens, cur.text)}</p>` : b.part < 0 ? `<p class="bonus-text">${bonusTextHtml(b.leadin_tokens, b.leadin)}</p>` : "";
  setHtml($("bonus"), `<h2>Bonus for ${escapeHtml(teamName(m, b.team_id))} ${b.points == null ? "" : `<span class="bonus-points">${b.points} points${b.ended ? " in all" : " so far"}</span>`}</h2><ol class="bonus-parts">${dots}</ol>${text}`);
}

function renderFinal() {
  const ended = m.status === "ended";
  $("final").hidden = !ended;
  document.body.classList.toggle("final", ended);
  if (!ended) return;
  const ranked = rankTeams(m.teams);
  const rows = ranked
    .map((r) => `<tr${r.rank === 1 ? ' class="winner"' : ""}><td>${r.rank}${r.tied ? "=" : ""}</td><td>${escapeHtml(r.team.name)}</td><td class="num">${r.team.score}</td></tr>`)
    .join("");
  $("final").innerHTML = `<h2 id="final-result">Final result — ${escapeHtml(resultText(ranked))}</h2><table class="standings"><thead><tr><th>Place</th><th>Team</th><th class="num">Points</th></tr></thead><tbody>${rows}</tbody></table>`;
}

// --- one screen, no scrolling ------------------------------------------------------------
const MIN_FIT = 0.4; // below ≈ 18 px question text on 1920 × 1080 the room could not read it anyway
let fitKey = null;

/**
 * Fit what is below the scores into the screen: first the scores row goes compact, then the type
 * of the question, banner, answer line and bonus shrinks (a binary search on --fit). Starts again
 * from full size only when what is shown changes (a new tossup or bonus part, the end, a resize),
 * so the text does not jump as the words come in.
 */
function fit() {
  const area = document.querySelector(".proj-body");
  const t = m.tossup;
  const b = m.bonus;
  const key = [m.status, t && t.question_id, b && !b.ended ? `${b.bonus_id}:${b.part}` : "", innerWidth, innerHeight].join("|");
  const setFit = (v) => area.style.setProperty("--fit", String(v));
  const over = () => area.scrollHeight > area.clientHeight + 1;
  if (key !== fitKey) {
    fitKey = key;
    document.body.classList.remove("dense");
    setFit(1);
  }
  if (!over()) return;
  if (!document.body.classList.contains("dense")) {
    document.body.classList.add("dense");
    if (!over()) return;
  }
  let lo = MIN_FIT;
  let hi = Number(area.style.getPropertyValue("--fit")) || 1;
  for (let i = 0; i < 8; i++) {
    const mid = (lo + hi) / 2;
    setFit(mid);
    if (over()) hi = mid;
    else lo = mid;
  }
  setFit(lo);
}

function render() {
  const t = m.tossup;
  const ended = m.status === "ended";
  renderHeader(m);
  if (ended) $("q-index").textContent = "Final";
  showConn();
  renderScores();
  renderWords($("q-text"), ended ? null : t, { buzzIndex: t && t.buzz ? t.buzz.token_index : null, autoplay: true });
  const revealed = !ended && t && t.outcome && t.answer_line;
  $("reveal").hidden = !revealed;
  if (revealed) $("reveal").innerHTML = `Answer: ${answerHtml(t.answer_line)}`;
  renderBonus();
  renderFinal();
  renderPeriods();
  fit();
}

/** The half or OVERTIME, a running timeout's countdown and each team's timeouts left; nothing
 * (no room taken from the question) in a match without halves until a timeout is called. */
function renderPeriods() {
  const p = m.periods;
  const used = m.teams.some((x) => (p.timeoutsLeft[String(x.team_id)] ?? p.timeouts) < p.timeouts);
  const show = m.status === "running" && (periodLabel(m) || p.timeout || used);
  $("periods").innerHTML = show ? periodsHtml(m) : "";
}
setInterval(() => { if (m && m.periods.timeout) renderPeriods(); }, 500);

window.addEventListener("resize", () => { if (m) render(); });
// An image clue changes the height once it has loaded.
document.addEventListener("load", (ev) => { if (m && ev.target.tagName === "IMG") { fitKey = null; fit(); } }, true);

socket.connect();
