// The projector / scoreboard view: the `watch` socket sees only `all` events, so the answer line
// appears only with `tossup_ended`. Scores ranked with who leads, the question as read, the
// bonus's progress and, at the end, the result with ties and the standings.
import {
  MatchSocket, answerHtml, applyEvent, escapeHtml, modelFromSnapshot, pageData, renderHeader, renderWords, setConn,
  teamName,
} from "./match.js";

const $ = (id) => document.getElementById(id);
const page = pageData();
let m = null;
let bonusParts = 3; // parts of the bonus being read (bonus_started says; a snapshot lists only those read)

function banner(text, kind = "") {
  $("banner").textContent = text;
  $("banner").className = `banner proj-banner ${kind}`;
}

const socket = new MatchSocket({
  code: page.code,
  path: "watch",
  onSnapshot(state) {
    m = modelFromSnapshot(state);
    if (m.paused) banner("Paused");
    render();
  },
  onEvent(type, d) {
    if (applyEvent(m, type, d) === "resync") socket.resync();
    if (type === "bonus_started") bonusParts = d.parts;
    if (type === "buzz") banner(`${d.player} (${d.team}) buzzed`, "buzz");
    if (type === "buzz_ruled") {
      const ruling = { correct: "Correct", wrong: "Incorrect", no_penalty: "No penalty", timeout: "Time" }[d.ruling] || d.ruling;
      banner(`${teamName(m, d.team_id)}: ${ruling} (${d.points > 0 ? "+" : ""}${d.points})`, d.points > 0 ? "good" : "bad");
    }
    if (type === "ruling_undone") banner("Ruling reversed by the moderator", "bad");
    if (["tossup_started", "resumed", "bonus_started", "match_ended"].includes(type)) banner("");
    if (type === "paused") banner("Paused");
    render();
  },
  onStatus: setConn,
});

/** Teams best first; equal scores share a rank ("1", "1", "3"). */
function standings() {
  const sorted = [...m.teams].sort((a, b) => b.score - a.score);
  return sorted.map((team) => ({ team, rank: 1 + sorted.filter((x) => x.score > team.score).length }));
}

function renderScores() {
  const ranked = standings();
  const top = ranked.length ? ranked[0].team.score : 0;
  const leaders = ranked.filter((r) => r.team.score === top);
  const started = m.status !== "lobby";
  $("scoreboard").innerHTML = m.teams
    .map((x) => {
      const leads = started && leaders.length === 1 && leaders[0].team === x;
      return `<li class="${x.kind}${leads ? " leader" : ""}" data-team="${x.team_id}"><span class="name">${escapeHtml(x.name)}</span><span class="score">${x.score}</span>${leads ? '<span class="badge">leads</span>' : ""}</li>`;
    })
    .join("");
  let lead = "";
  if (started && m.status !== "ended" && ranked.length > 1) {
    if (leaders.length > 1) lead = `Tied at ${top}`;
    else lead = `${ranked[0].team.name} leads by ${top - ranked[1].team.score}`;
  }
  $("lead").textContent = lead;
}

function renderBonus() {
  const b = m.bonus;
  const show = !!b && m.status !== "ended";
  $("bonus").hidden = !show;
  if (!show) return;
  const total = Math.max(b.parts.length, bonusParts);
  const dots = Array.from({ length: total }, (_, k) => {
    const p = b.parts[k];
    const res = p && p.result;
    const cls = res ? (res.points > 0 ? "got" : "missed") : k === b.part && !b.ended ? "current" : "";
    const label = res ? `${res.points > 0 ? "+" : ""}${res.points}` : k === b.part && !b.ended ? "now" : "";
    return `<li class="${cls}"><span>Part ${k + 1}</span><strong>${label}</strong></li>`;
  }).join("");
  const cur = !b.ended && b.part >= 0 ? b.parts[b.part] : null;
  $("bonus").innerHTML = `<h2>Bonus for ${escapeHtml(teamName(m, b.team_id))} <span class="bonus-points">${b.points} points${b.ended ? " in all" : " so far"}</span></h2><ol class="bonus-parts">${dots}</ol>${cur && cur.text ? `<p class="bonus-text">[${cur.value}] ${escapeHtml(cur.text)}</p>` : b.part < 0 ? `<p class="bonus-text">${escapeHtml(b.leadin)}</p>` : ""}`;
}

function renderFinal() {
  const ended = m.status === "ended";
  $("final").hidden = !ended;
  document.body.classList.toggle("final", ended);
  if (!ended) return;
  const ranked = standings();
  const top = ranked.length ? ranked[0].team.score : 0;
  const winners = ranked.filter((r) => r.rank === 1).map((r) => r.team.name);
  const headline = winners.length > 1
    ? `Tie at ${top}: ${winners.slice(0, -1).join(", ")} and ${winners.at(-1)}`
    : ranked.length > 1 ? `${winners[0]} wins, ${top} to ${ranked[1].team.score}` : `${winners[0]}: ${top}`;
  const rows = ranked
    .map((r) => `<tr${r.rank === 1 ? ' class="winner"' : ""}><td>${r.rank}${ranked.filter((x) => x.rank === r.rank).length > 1 ? "=" : ""}</td><td>${escapeHtml(r.team.name)}</td><td class="num">${r.team.score}</td></tr>`)
    .join("");
  $("final").innerHTML = `<h2 id="final-result">Final result — ${escapeHtml(headline)}</h2><table class="standings"><thead><tr><th>Place</th><th>Team</th><th class="num">Points</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function render() {
  const t = m.tossup;
  const ended = m.status === "ended";
  renderHeader(m);
  if (ended) $("q-index").textContent = "Final";
  renderScores();
  renderWords($("q-text"), ended ? null : t, { buzzIndex: t && t.buzz ? t.buzz.token_index : null, autoplay: true });
  const revealed = !ended && t && t.outcome && t.answer_line;
  $("reveal").hidden = !revealed;
  if (revealed) $("reveal").innerHTML = `Answer: ${answerHtml(t.answer_line)}`;
  renderBonus();
  renderFinal();
}

socket.connect();
