// The dashboard's "Bots the server runs" card: each bot seat with the guessers this server knows
// (GET /api/match/<code>/bots), "Run" puts one on the seat and "Stop" ends it (POST …/launch, …/stop;
// the server's bot supervisor starts, restarts and stops the process). Polled every 2 s for the
// process state; the seat's connection state is in the Seats card (presence). "Add a bot seat" seats a
// new bot on a team, in the lobby or while the match runs (POST …/bots/add), and runs the guesser on it.
import { escapeHtml, pageData, toast } from "./match.js";

const page = pageData();
const list = document.getElementById("server-bots");
const problems = document.getElementById("server-bots-problems");
const addForm = document.getElementById("server-bots-add");
let addChoices = ""; // the team and guesser lists the add form was filled with
let guessers = []; // this server's guessers, as last listed
const base = `/api/match/${encodeURIComponent(page.code)}/bots`;
const POLL_MS = 2000;

async function call(url, method = "GET", body = undefined) {
  const res = await fetch(url, {
    method,
    headers: { "X-Moderator-Token": page.token, "X-CSRFToken": page.csrf || "", "Content-Type": "application/json" },
    credentials: "same-origin",
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await res.json().catch(() => ({ code: "http", message: `HTTP ${res.status}` }));
  if (!res.ok) throw new Error(data.message || data.code);
  return data;
}

function guesserLabel(g) {
  const cost = g.cost ? `, $${g.cost} per prefix` : "";
  return `${g.label} (${g.weight_class}${cost})`;
}

function seatHtml(seat, guessers, ended) {
  const l = seat.launch;
  const state = !l ? "none" : l.wanted ? l.state : "stopped";
  const running = l && l.wanted && !["stopped", "failed"].includes(l.state); // a failed bot is Run again
  const status = !l
    ? '<span class="muted">no bot from the server</span>'
    : `<span class="bot-state" data-state="${escapeHtml(state)}">${escapeHtml(l.guesser)}: ${escapeHtml(state)}</span>`
      + (l.restarts ? ` <span class="muted">(${l.restarts} restart${l.restarts === 1 ? "" : "s"})</span>` : "")
      + (l.detail ? ` <span class="muted">${escapeHtml(l.detail)}</span>` : "");
  const options = guessers.map((g) => `<option value="${escapeHtml(g.key)}"${l && l.guesser === g.key ? " selected" : ""}`
    + ` title="${escapeHtml(g.note)}">${escapeHtml(guesserLabel(g))}</option>`).join("");
  const controls = ended || !guessers.length ? "" : `
    <select data-guesser="${seat.player_id}" aria-label="Guesser for ${escapeHtml(seat.name)}">${options}</select>
    <button type="button" class="small-btn" data-launch="${seat.player_id}">${running ? "Restart with" : "Run"}</button>
    ${running ? `<button type="button" class="small-btn" data-stop="${seat.player_id}">Stop</button>` : ""}`;
  return `<li data-seat="${seat.player_id}"><strong>${escapeHtml(seat.name)}</strong>`
    + ` <span class="muted">(${escapeHtml(seat.weight_class || "—")})</span> ${status}${controls}</li>`;
}

function render(data) {
  const ended = data.status === "ended";
  list.innerHTML = data.seats.length
    ? data.seats.map((s) => seatHtml(s, data.guessers, ended)).join("")
    : '<li class="muted">This match has no bot seats.</li>';
  if (!data.guessers.length) list.insertAdjacentHTML("beforeend", '<li class="muted">This server knows no guessers (see below).</li>');
  problems.innerHTML = data.problems.map((p) => `<li>${escapeHtml(p)}</li>`).join("");
  renderAddForm(data, ended);
}

const optionHtml = (value, label) => `<option value="${escapeHtml(String(value))}">${escapeHtml(label)}</option>`;

function renderAddForm(data, ended) {
  addForm.hidden = ended || !data.guessers.length;
  const choices = JSON.stringify([data.teams, data.guessers, data.weight_classes]);
  if (addForm.hidden || choices === addChoices) return; // keep what the organiser is choosing
  addChoices = choices;
  const f = addForm.elements;
  f.team_id.innerHTML = optionHtml("", "a team of its own")
    + data.teams.map((t) => optionHtml(t.team_id, `${t.name} (${t.kind})`)).join("");
  f.guesser.innerHTML = data.guessers.map((g) => optionHtml(g.key, guesserLabel(g))).join("");
  f.weight_class.innerHTML = data.weight_classes.map((w) => optionHtml(w, w)).join("");
  guessers = data.guessers;
  guesserDefaults();
}

// A guesser declares its weight class and cost: the form starts from them.
function guesserDefaults() {
  const g = guessers.find((x) => x.key === addForm.elements.guesser.value);
  if (!g) return;
  addForm.elements.weight_class.value = g.weight_class;
  addForm.elements.cost.value = String(g.cost);
}

addForm.elements.guesser.addEventListener("change", guesserDefaults);

addForm.addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const f = addForm.elements;
  const body = {
    name: f.name.value.trim(),
    team_id: f.team_id.value === "" ? null : Number(f.team_id.value),
    guesser: f.guesser.value,
    weight_class: f.weight_class.value,
    cost: f.cost.value === "" ? undefined : Number(f.cost.value),
  };
  try {
    render(await call(`${base}/add`, "POST", body));
    f.name.value = "";
    toast(`${body.name} seated`, "info");
  } catch (err) {
    toast(`bots: ${err.message}`);
  }
});

async function refresh() {
  const active = document.activeElement;
  if (active.tagName === "SELECT" && (list.contains(active) || addForm.contains(active))) return; // mid-choice
  try {
    render(await call(base));
  } catch (err) {
    toast(`bots: ${err.message}`);
  }
}

list.addEventListener("click", async (ev) => {
  const launch = ev.target.closest("button[data-launch]");
  const stop = ev.target.closest("button[data-stop]");
  try {
    if (launch) {
      const id = launch.dataset.launch;
      const guesser = list.querySelector(`select[data-guesser="${id}"]`).value;
      render(await call(`${base}/${id}/launch`, "POST", { guesser }));
    } else if (stop) {
      render(await call(`${base}/${stop.dataset.stop}/stop`, "POST"));
    }
  } catch (err) {
    toast(`bots: ${err.message}`);
  }
});

refresh();
setInterval(() => { if (!document.hidden) refresh(); }, POLL_MS);
