// review: the tournament director's control page. Accept, Send back (with its reason) and Clear help
// POST to the desk's API and reload the page; the page reloads itself every page.refresh seconds to
// follow the rooms, unless a reason is being typed.
import { pageData, toast } from "./match.js";

const page = pageData();

async function post(url, body = {}) {
  const res = await fetch(url, {
    method: "POST",
    headers: { "X-CSRFToken": page.csrf || "", "Content-Type": "application/json" },
    credentials: "same-origin",
    body: JSON.stringify(body),
  });
  const data = await res.json().catch(() => ({ code: "http", message: `HTTP ${res.status}` }));
  if (!res.ok) throw new Error(data.message || data.code);
  return data;
}

async function act(url, body) {
  try {
    await post(url, body);
    window.location.reload();
  } catch (err) {
    toast(err.message);
  }
}

for (const b of document.querySelectorAll("button.accept, button.clear-help")) {
  b.addEventListener("click", () => act(b.dataset.url));
}
for (const f of document.querySelectorAll("form.send-back")) {
  f.addEventListener("submit", (e) => {
    e.preventDefault();
    act(f.dataset.url, { reason: f.elements.reason.value });
  });
}

setInterval(() => {
  const typing = [...document.querySelectorAll("form.send-back input")].some((i) => i.value.trim());
  if (!typing) window.location.reload();
}, page.refresh * 1000);
