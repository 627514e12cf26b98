// review: a tournament game's desk on the moderator dashboard (frontend/templates/frontend/desk_panel.html).
// "Call the director" raises the room's help flag on the control page, pressed again it clears it
// (POST /api/match/<code>/desk/help). Once the match has ended the result is submitted from here (POST
// …/desk/submit), each warning of the match record ticked first; a result the director sends back shows
// the reason and can be submitted again. Polled every 5 s (GET …/desk): when the room's next game is
// its current one, a paired device (/room/) shows a link to it, and goes there by itself once this
// result is submitted.
import { escapeHtml, pageData, toast } from "./match.js";

const page = pageData();
const base = `/api/match/${encodeURIComponent(page.code)}/desk`;
const POLL_MS = 5000;
const $ = (id) => document.getElementById(id);
let desk = null;

async function call(url, body = undefined) {
  const res = await fetch(url, {
    method: body === undefined ? "GET" : "POST",
    headers: { "X-Moderator-Token": page.token, "X-CSRFToken": page.csrf || "", "Content-Type": "application/json" },
    credentials: "same-origin",
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await res.json().catch(() => ({ code: "http", message: `HTTP ${res.status}` }));
  if (!res.ok) throw new Error(data.message || data.code);
  return data;
}

const REVIEW_LABELS = {
  open: "not submitted",
  submitted: "submitted: the director reviews it",
  official: "official",
  sent_back: "sent back: correct it and submit again",
};

function render(d) {
  const warningsChanged = JSON.stringify(d.warnings) !== JSON.stringify(desk && desk.warnings);
  desk = d;
  $("help-btn").disabled = false; // enabled once the flag's state is known
  $("help-btn").textContent = d.help ? "Cancel the help call" : "Call the director";
  $("help-btn").setAttribute("aria-pressed", String(d.help));
  $("help-state").textContent = d.help ? "The control desk sees that this room needs help." : "";
  $("result-box").hidden = !d.ended;
  $("review-state").textContent = REVIEW_LABELS[d.review] || d.review;
  $("sent-back").hidden = !d.reason;
  $("sent-back").textContent = d.reason ? `Sent back: ${d.reason}` : "";
  const open = d.review === "open" || d.review === "sent_back";
  $("submit-result").hidden = !open;
  $("warnings").hidden = !open || d.warnings.length === 0;
  if (warningsChanged) {
    $("warning-list").innerHTML = d.warnings
      .map((w) => `<li><label><input type="checkbox" value="${escapeHtml(w.key)}"> ${escapeHtml(w.text)}</label></li>`)
      .join("");
  }
  $("next-game").hidden = !d.next;
  if (d.next) {
    $("next-link").textContent = d.next.label;
    $("next-link").href = d.next.url;
    if (!open) window.location.assign(d.next.url); // the result is in: on to the room's next game
  }
}

let actions = 0; // a poll answered after an action began is older than the action's answer: dropped

async function poll() {
  const before = actions;
  try {
    const d = await call(base);
    if (before === actions) render(d);
  } catch (err) {
    toast(err.message);
  }
}

async function act(path, body) {
  actions += 1;
  try {
    render(await call(`${base}/${path}`, body));
  } catch (err) {
    toast(err.message);
  }
}

$("help-btn").addEventListener("click", () => act("help", { raised: !(desk && desk.help) }));
$("submit-result").addEventListener("click", () => {
  const acknowledged = [...$("warning-list").querySelectorAll("input:checked")].map((i) => i.value);
  act("submit", { acknowledged });
});

poll();
setInterval(poll, POLL_MS);
