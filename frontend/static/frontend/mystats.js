// The player's own statistics on the tablet, updated after each ruled tossup: powers, tens,
// negs, tossup points and the mean buzz position (0-based word index), the same figures the
// tournament standings show (competition/standings.py: more than 10 points is a power, 1–10 a
// ten, below 0 a neg). Kept apart from play.js, which only feeds it the snapshot and events.
import { escapeHtml } from "./match.js";

const POWER_ABOVE = 10;

export class MyStats {
  constructor(el) {
    this.el = el;
    this.byQuestion = new Map(); // question_id → {points, token_index} of my ruled buzz
  }

  /** Start again from a snapshot's ruling record (reconnects and resyncs). */
  fromSnapshot(state, playerId) {
    this.byQuestion.clear();
    for (const h of state.history || []) {
      if (h.kind === "tossup" && !h.undone && h.player_id === playerId) this.byQuestion.set(h.question_id, h);
    }
    this.render();
  }

  /** Feed every event; only this seat's rulings and their undoing count. */
  onEvent(type, d, playerId) {
    if (!d || d.player_id !== playerId) return;
    if (type === "buzz_ruled") this.byQuestion.set(d.question_id, d);
    else if (type === "ruling_undone") this.byQuestion.delete(d.question_id);
    else return;
    this.render();
  }

  figures() {
    const buzzes = [...this.byQuestion.values()];
    const n = (f) => buzzes.filter(f).length;
    const mean = buzzes.length ? buzzes.reduce((s, b) => s + b.token_index, 0) / buzzes.length : null;
    return {
      powers: n((b) => b.points > POWER_ABOVE),
      tens: n((b) => b.points > 0 && b.points <= POWER_ABOVE),
      negs: n((b) => b.points < 0),
      points: buzzes.reduce((s, b) => s + b.points, 0),
      buzzes: buzzes.length,
      mean,
    };
  }

  render() {
    if (!this.el) return;
    const f = this.figures();
    const cell = (label, value, id) => `<div class="stat"><span>${label}</span><strong id="${id}">${escapeHtml(String(value))}</strong></div>`;
    this.el.hidden = false;
    this.el.querySelector(".stats").innerHTML = [
      cell("Powers", f.powers, "my-powers"),
      cell("Tens", f.tens, "my-tens"),
      cell("Negs", f.negs, "my-negs"),
      cell("Tossup points", f.points, "my-points"),
      cell("Mean buzz word", f.mean === null ? "–" : f.mean.toFixed(1), "my-position"),
    ].join("");
  }
}
