// The spectator scoreboard: the `watch` socket sees only `all` events, so the answer line
// appears only with `tossup_ended`.
import {
  MatchSocket, answerHtml, applyEvent, escapeHtml, modelFromSnapshot, pageData, renderHeader, renderScoreboard,
  renderWords, setConn, teamName,
} from "./match.js";

const $ = (id) => document.getElementById(id);
const page = pageData();
let m = null;

function banner(text) {
  $("banner").textContent = text;
}

const socket = new MatchSocket({
  code: page.code,
  role: "watch",
  onSnapshot(state) {
    m = modelFromSnapshot(state);
    render();
  },
  onEvent(type, d) {
    if (applyEvent(m, type, d) === "resync") socket.resync();
    if (type === "buzz") banner(`${d.player} (${d.team}) buzzed!`);
    if (type === "buzz_ruled") banner(`${teamName(m, d.team_id)}: ${d.ruling.replace("_", " ")} (${d.points > 0 ? "+" : ""}${d.points})`);
    if (type === "tossup_started" || type === "resumed") banner("");
    if (type === "paused") banner("Paused");
    if (type === "match_ended") banner("Final score");
    render();
  },
  onStatus: setConn,
});

function render() {
  const t = m.tossup;
  renderHeader(m);
  renderScoreboard($("scoreboard"), m);
  renderWords($("q-text"), t, { buzzIndex: t && t.buzz ? t.buzz.token_index : null });
  const revealed = t && t.outcome && t.answer_line;
  $("reveal").hidden = !revealed;
  if (revealed) $("reveal").innerHTML = `Answer: ${answerHtml(t.answer_line)}`;
  const b = m.bonus;
  $("bonus").hidden = !b;
  if (b) {
    const cur = b.parts[b.part];
    $("bonus").innerHTML = `<p><strong>Bonus for ${escapeHtml(teamName(m, b.team_id))}</strong> ${escapeHtml(b.leadin)}</p>${cur ? `<p>[${cur.value}] ${escapeHtml(cur.text)}</p>` : ""}${b.ended ? `<p>${b.points} bonus points</p>` : ""}`;
  }
}

socket.connect();
