// The match's format on screen (competition/game/periods.py, lineups.py via match.js's model):
// the half or OVERTIME, each team's timeouts left, and a running timeout with its countdown.
// Shared by the moderator dashboard (dashlineups.js) and the projector (watch.js).
import { escapeHtml, teamName } from "./match.js";

/** "1st half", "2nd half" or "OVERTIME" (null: the preset has no halves and no overtime). */
export function periodLabel(m) {
  const p = m.periods;
  if (p.overtime) return "OVERTIME";
  if (p.tossupsPerHalf == null) return null;
  return p.half >= 2 ? "2nd half" : "1st half";
}

/** Seconds left in the running timeout (server clock via `offset`), or null; while the match is
 * paused, what it had left when the clock stopped (`remaining`: the countdown stands still). */
export function timeoutLeft(m, offset = 0) {
  const t = m.periods.timeout;
  if (!t || m.status !== "running") return null;
  if (m.paused && t.remaining != null) return Math.max(0, Math.ceil(t.remaining));
  return Math.max(0, Math.ceil(t.ends_at - (Date.now() / 1000 + offset)));
}

/** The period line's HTML: the half or OVERTIME, the timeout running, each team's timeouts left. */
export function periodsHtml(m, offset = 0) {
  const p = m.periods;
  const parts = [];
  const label = periodLabel(m);
  if (label) parts.push(`<span class="period${p.overtime ? " overtime" : ""}" data-period="${p.overtime ? "overtime" : p.half}">${label}</span>`);
  const left = timeoutLeft(m, offset);
  if (left !== null) {
    parts.push(`<span class="timeout-running" role="status">Timeout: ${escapeHtml(teamName(m, p.timeout.team_id))} · ${left} s${m.paused ? " (paused)" : ""}</span>`);
  }
  if (p.timeouts > 0) {
    const per = p.timeoutsPer === "half" ? " this half" : "";
    const each = m.teams
      .map((x) => `<span class="timeouts-left" data-team="${x.team_id}">${escapeHtml(x.name)} ${p.timeoutsLeft[String(x.team_id)] ?? 0}</span>`)
      .join(" · ");
    parts.push(`<span class="timeouts">Timeouts left${per}: ${each}</span>`);
  }
  return parts.join(" ");
}
