// The dashboard's "Lineups and timeouts" card: each team's players in play and on the bench, a
// substitution (who comes in, who goes out) and the team's timeout button, with the half, OVERTIME
// and a running timeout above, and "Undo timeout" (a mis-click) until the next tossup starts.
// Commands go through the dashboard's socket (`substitute`, `timeout`, `undo_timeout`;
// the engine refuses what the preset does not allow, e.g. a substitution mid-tossup, and the
// dashboard shows the refusal). The model is match.js's (lineups, periods, playersPerTeam).
import { escapeHtml, teamName } from "./match.js";
import { periodsHtml } from "./periods.js";

let root = null;
let current = null; // the model last rendered
let offset = () => 0; // server − this machine (the dashboard's ClockOffset)

/** Wire the card once: `send(name, fields)` sends a moderator command; `clockOffset()` in seconds. */
export function initLineups(el, send, clockOffset) {
  root = el;
  offset = clockOffset;
  root.addEventListener("click", (ev) => {
    const btn = ev.target.closest("button[data-timeout], button[data-substitute], button[data-undo-timeout]");
    if (!btn || !current) return;
    btn.blur();
    if (btn.dataset.undoTimeout) {
      send("undo_timeout", {});
      return;
    }
    if (btn.dataset.timeout) {
      send("timeout", { team_id: Number(btn.dataset.timeout) });
      return;
    }
    const team = btn.closest("[data-lineup-team]");
    const fields = { team_id: Number(btn.dataset.substitute) };
    const into = team.querySelector("select[name=player_in]").value;
    const out = team.querySelector("select[name=player_out]").value;
    if (into) fields.player_in = Number(into);
    if (out) fields.player_out = Number(out);
    send("substitute", fields);
  });
  setInterval(() => { if (current && current.periods.timeout) renderPeriods(); }, 500);
}

function renderPeriods() {
  const line = root.querySelector("#lineup-periods");
  line.innerHTML = periodsHtml(current, offset()) || '<span class="muted">no halves or timeouts in this preset</span>';
}

function options(players, none) {
  return `<option value="">${none}</option>${players.map((p) => `<option value="${p.player_id}">${escapeHtml(p.name)}</option>`).join("")}`;
}

/** Draw the card for model `m` (called on every render of the dashboard). */
export function renderLineups(m) {
  if (!root) return;
  current = m;
  const open = m.status === "lobby" || (m.status === "running" && m.phase === "between");
  const between = m.status === "running" && m.phase === "between" && !m.paused;
  const limit = m.playersPerTeam != null ? ` · ${m.playersPerTeam} play at once` : "";
  root.querySelector("#lineup-limit").textContent = limit;
  renderPeriods();
  // Keep what the moderator is choosing: redraw a team's selects only when its lineup changed.
  const body = root.querySelector("#lineup-teams");
  const key = JSON.stringify([m.teams.map((t) => [t.team_id, t.name]), m.players.map((p) => [p.player_id, p.name]), m.lineups, open]);
  if (body.dataset.key !== key) {
    body.dataset.key = key;
    body.innerHTML = m.teams.map((team) => {
      const active = m.lineups[String(team.team_id)] || [];
      const seats = m.players.filter((p) => p.team_id === team.team_id);
      const playing = seats.filter((p) => active.includes(p.player_id));
      const bench = seats.filter((p) => !active.includes(p.player_id));
      const names = (list) => list.map((p) => `<li data-player="${p.player_id}">${escapeHtml(p.name)}</li>`).join("") || '<li class="muted">nobody</li>';
      return `<div class="lineup-team" data-lineup-team="${team.team_id}">
        <h3>${escapeHtml(team.name)} <button type="button" class="small-btn" data-timeout="${team.team_id}">Timeout</button></h3>
        <div class="lineup-cols"><div><p class="small muted">Playing</p><ul class="lineup-active">${names(playing)}</ul></div>
        <div><p class="small muted">Bench</p><ul class="lineup-bench">${names(bench)}</ul></div></div>
        <p class="lineup-sub"${open ? "" : " hidden"}><label>In <select name="player_in">${options(bench, "nobody")}</select></label>
        <label>Out <select name="player_out">${options(playing, "nobody")}</select></label>
        <button type="button" class="small-btn" data-substitute="${team.team_id}">Substitute</button></p>
      </div>`;
    }).join("");
  }
  for (const btn of root.querySelectorAll("button[data-timeout]")) {
    const left = m.periods.timeoutsLeft[btn.dataset.timeout] ?? 0;
    btn.hidden = m.periods.timeouts === 0;
    btn.disabled = !between || left <= 0;
    btn.textContent = `Timeout (${left} left)`;
  }
  // The newest timeout of this break can be taken back until the next tossup starts (paused too).
  const undo = root.querySelector("#undo-timeout");
  const running = m.status === "running" && m.phase === "between" && m.periods.timeout;
  undo.hidden = !running;
  if (running) undo.textContent = `Undo timeout (${teamName(m, m.periods.timeout.team_id)})`;
  root.querySelector("#lineup-help").hidden = open;
}
