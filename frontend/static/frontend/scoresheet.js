// The full scoresheet on the moderator dashboard (issue 33 items 3 and 4): a table of the tossups
// read × the teams, each cell the buzzes (seat, ruling, points) and the bonus parts the team
// earned. A button per buzz or part opens the correction form (ruling, seat credited, why): the
// dashboard sends `review_ruling` (competition/game/review.py), every screen follows. Thrown-out
// tossups show struck with their reason; "Replace from spares" sends `replace_question`
// (competition/game/spares.py). A team's empty cell of a tossup already played (none answered it)
// has "Add a buzz": the moderator missed one; the form (seat, word, ruling, why) sends `add_buzz`
// (competition/game/review.py). Everything is a button or a form field: keyboard reachable.
import { escapeHtml, teamName } from "./match.js";

const $ = (id) => document.getElementById(id);
const RULINGS = { correct: "correct", wrong: "wrong", no_penalty: "no penalty", timeout: "no answer", abstained: "abstained" };
const TOSSUP_RULINGS = ["correct", "wrong", "no_penalty"];
const PART_RULINGS = ["correct", "wrong"];

let ctx = null; // {model(), history(), replaced(), seats(), playerName(id), command(name, fields)}
let selected = null; // the history position being corrected
let adding = null; // {tossup, team} of the buzz being added

const signed = (n) => (n > 0 ? `+${n}` : n < 0 ? `−${-n}` : "0");

/** Wire the scoresheet dialog to the dashboard: `context` gives the live model and sends commands. */
export function initScoresheet(context) {
  ctx = context;
  $("scoresheet-open").addEventListener("click", () => {
    $("scoresheet").showModal();
    renderScoresheet();
  });
  $("scoresheet-close").addEventListener("click", () => $("scoresheet").close());
  $("scoresheet-table").addEventListener("click", (ev) => {
    const btn = ev.target.closest("button[data-review]");
    if (btn) select(Number(btn.dataset.review));
    const add = ev.target.closest("button[data-add-tossup]");
    if (add) selectAdd({ tossup: Number(add.dataset.addTossup), team: Number(add.dataset.addTeam) });
  });
  $("add-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    submitAdd();
  });
  $("add-cancel").addEventListener("click", () => selectAdd(null));
  $("review-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    submitReview();
  });
  $("review-cancel").addEventListener("click", () => select(null));
  $("replace-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const reason = $("replace-reason").value.trim();
    const kind = $("replace-kind").value;
    if (!reason) return status("Say why the question is thrown out first.");
    if (!confirm(`Throw out the current ${kind} and read a spare in its place? Its points are reversed.`)) return;
    ctx.command("replace_question", { kind, reason });
    $("replace-reason").value = "";
  });
}

/** A refusal from the server while the scoresheet is open (the toast sits under the dialog). */
export function scoresheetError(err) {
  if ($("scoresheet").open) status(`Not applied: ${err.message} (${err.code})`);
}

function status(text) {
  $("scoresheet-status").textContent = text;
}

/** The table, from the snapshot's `history` and `replaced` (both refreshed on every resync). */
export function renderScoresheet() {
  if (!ctx || !$("scoresheet").open) return;
  const m = ctx.model();
  if (!m) return;
  const history = ctx.history();
  const thrown = new Map(ctx.replaced().filter((r) => r.kind === "tossup").map((r) => [r.tossup_index, r]));
  const thrownBonuses = new Set(ctx.replaced().filter((r) => r.kind === "bonus").map((r) => r.bonus_id));
  const read = m.tossup ? m.tossup.index + 1 : 0;
  // played: read before the current one, or the current one once ended (or cut off by the end)
  const played = (i) => i < read - 1 || (i === read - 1 && (Boolean(m.tossup.outcome) || m.status === "ended"));
  const head = `<tr><th scope="col">Tossup</th>${m.teams.map((t) => `<th scope="col">${escapeHtml(t.name)} <span class="muted">${t.score}</span></th>`).join("")}</tr>`;
  const rows = [];
  for (let i = 0; i < read; i++) {
    const out = thrown.get(i);
    const answered = history.some((h) => h.kind === "tossup" && h.tossup_index === i && !h.undone && h.ruling === "correct");
    const cells = m.teams.map((team) => {
      const mine = history
        .map((h, position) => ({ h, position }))
        .filter(({ h }) => h.tossup_index === i && h.team_id === team.team_id);
      const items = mine.map(({ h, position }) => cell(h, position, out, thrownBonuses));
      const buzzed = mine.some(({ h }) => h.kind === "tossup" && !h.undone);
      const seated = ctx.seats().some((p) => p.team_id === team.team_id);
      if (!out && !answered && !buzzed && seated && played(i)) {
        items.push(`<button type="button" class="cell-item add-buzz small-btn" data-add-tossup="${i}" data-add-team="${team.team_id}" aria-label="Add a buzz by ${escapeHtml(team.name)} on tossup ${i + 1}">Add a buzz</button>`);
      }
      return `<td>${items.join(" ") || '<span class="muted">—</span>'}</td>`;
    });
    const label = out ? `${i + 1} <span class="thrown-label">thrown out: ${escapeHtml(out.reason)}</span>` : `${i + 1}`;
    rows.push(`<tr${out ? ' class="thrown-out"' : ""}><th scope="row">${label}</th>${cells.join("")}</tr>`);
  }
  const html = `<table class="scoresheet-table"><thead>${head}</thead><tbody>${rows.join("") || `<tr><td colspan="${m.teams.length + 1}" class="muted">No tossup read yet</td></tr>`}</tbody></table>`;
  if ($("scoresheet-table").innerHTML !== html) $("scoresheet-table").innerHTML = html;
  if (selected !== null && (!history[selected] || history[selected].undone)) select(null);
}

function cell(h, position, out, thrownBonuses) {
  const what = h.kind === "tossup"
    ? `${ctx.playerName(h.player_id)}: ${RULINGS[h.ruling] || h.ruling} ${signed(h.points)}`
    : `bonus ${h.part + 1}: ${RULINGS[h.ruling] || h.ruling} ${signed(h.points)}`;
  if (h.undone || out) {
    const why = out || thrownBonuses.has(h.bonus_id) ? "thrown out" : "undone";
    return `<s class="cell-item" title="${why}">${escapeHtml(what)}</s>`;
  }
  const cls = h.kind === "tossup" ? "cell-item buzz" : "cell-item part";
  return `<button type="button" class="${cls}" data-review="${position}" data-ruling="${h.ruling}" aria-label="Correct tossup ${h.tossup_index + 1}, ${escapeHtml(what)}">${escapeHtml(what)}</button>`;
}

function select(position) {
  selected = position;
  if (position !== null) selectAdd(null, true);
  const form = $("review-form");
  form.hidden = position === null;
  status("");
  if (position === null) return;
  const h = ctx.history()[position];
  const m = ctx.model();
  const tossup = h.kind === "tossup";
  $("review-what").textContent = tossup
    ? `Tossup ${h.tossup_index + 1}: ${ctx.playerName(h.player_id)} (${teamName(m, h.team_id)}), ${RULINGS[h.ruling] || h.ruling} ${signed(h.points)}`
    : `Tossup ${h.tossup_index + 1}, bonus part ${h.part + 1} (${teamName(m, h.team_id)}), ${RULINGS[h.ruling] || h.ruling} ${signed(h.points)}`;
  $("review-ruling").innerHTML = (tossup ? TOSSUP_RULINGS : PART_RULINGS)
    .map((r) => `<option value="${r}"${r === h.ruling ? " selected" : ""}>${RULINGS[r]}</option>`)
    .join("");
  $("review-player-label").hidden = !tossup;
  if (tossup) {
    $("review-player").innerHTML = ctx.seats()
      .map((p) => `<option value="${p.player_id}"${p.player_id === h.player_id ? " selected" : ""}>${escapeHtml(p.name)} (${escapeHtml(teamName(m, p.team_id))})</option>`)
      .join("");
  }
  $("review-ruling").focus();
}

function submitReview() {
  if (selected === null) return;
  const h = ctx.history()[selected];
  const reason = $("review-reason").value.trim();
  if (!reason) {
    status("Say why the ruling changes (it goes in the log, the recap and the exports).");
    $("review-reason").focus();
    return;
  }
  const fields = { history_index: selected, reason };
  const ruling = $("review-ruling").value;
  if (ruling !== h.ruling) fields.ruling = ruling;
  if (h.kind === "tossup") {
    const player = Number($("review-player").value);
    if (player !== h.player_id) fields.player_id = player;
  }
  if (!("ruling" in fields) && !("player_id" in fields)) return status("Nothing changes: choose another ruling or seat.");
  ctx.command("review_ruling", fields);
  $("review-reason").value = "";
  select(null);
  status("Correction sent.");
}

function selectAdd(target, keepStatus = false) {
  adding = target;
  $("add-form").hidden = target === null;
  if (!keepStatus) status("");
  if (target === null) return;
  select(null);
  const m = ctx.model();
  $("add-what").textContent = `Tossup ${target.tossup + 1}, ${teamName(m, target.team)}`;
  $("add-player").innerHTML = ctx.seats()
    .filter((p) => p.team_id === target.team)
    .map((p) => `<option value="${p.player_id}">${escapeHtml(p.name)}</option>`)
    .join("");
  $("add-ruling").innerHTML = TOSSUP_RULINGS.map((r) => `<option value="${r}">${RULINGS[r]}</option>`).join("");
  $("add-word").value = "";
  $("add-player").focus();
}

function submitAdd() {
  if (adding === null) return;
  const reason = $("add-reason").value.trim();
  if (!reason) {
    status("Say why the buzz is added (it goes in the log, the recap and the exports).");
    $("add-reason").focus();
    return;
  }
  const fields = { tossup_index: adding.tossup, player_id: Number($("add-player").value), ruling: $("add-ruling").value, reason };
  const word = $("add-word").value.trim();
  if (word !== "") fields.token_index = Number(word) - 1; // the form counts words from 1
  ctx.command("add_buzz", fields);
  $("add-reason").value = "";
  selectAdd(null);
  status("Buzz sent.");
}
