// The writing workshop's editor (/workshop/draft/<id>/, buzzer/workshop_views.py): autosave, the
// answer line checked as it is typed, and every built-in bot's analysis within 2 s of a pause in
// typing; then, in a second request, the LLM endpoints enabled for writing (slower, and paid).
// Writer text is only ever put in the page as text (textContent), never as HTML.
(() => {
  "use strict";
  const root = document.getElementById("workshop");
  if (!root) return;
  const $ = (id) => document.getElementById(id);
  const csrf = root.querySelector("input[name=csrfmiddlewaretoken]").value;
  const text = $("ws-text"), answer = $("ws-answer"), category = $("ws-category"), title = $("ws-title");
  const backupKey = `tossup-workshop-draft-${root.dataset.draft}`;
  const ANALYSE_AFTER = 600, SAVE_AFTER = 800, LINE_AFTER = 250; // ms of pause
  let analyseTimer = 0, saveTimer = 0, lineTimer = 0, analyseSeq = 0, lastBots = [];
  let llmDone = { key: "", data: null }; // the LLMs' last analysis: asked again only when the question changed

  function el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (k === "class") node.className = v;
      else node.setAttribute(k, v);
    }
    for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    return node;
  }

  async function post(url, body) {
    const r = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrf },
      body: JSON.stringify(body),
      credentials: "same-origin",
    });
    let data = {};
    try { data = await r.json(); } catch (e) { data = { message: `HTTP ${r.status}` }; }
    return { status: r.status, data };
  }

  function fields() {
    return { title: title.value, answer_line: answer.value, category: category.value, text: text.value };
  }

  function words(s) { return s.split(/\s+/).filter((w) => w && !/^\([*+]\)$/.test(w)); }

  function updateCount() {
    const n = words(text.value).length;
    $("ws-wordcount").textContent = `${n.toLocaleString()} word${n === 1 ? "" : "s"}`;
    const max = Number(root.dataset.maxWords);
    $("ws-limit").textContent = n > max ? ` Over the ${max.toLocaleString()}-word limit: the bots wait until you shorten it (your text is kept).` : "";
  }

  // --- autosave (the server, and this browser's copy until the server has it) ---
  function scheduleSave() {
    localStorage.setItem(backupKey, JSON.stringify({ ...fields(), unsaved: true }));
    $("ws-save-state").textContent = "Unsaved changes…";
    clearTimeout(saveTimer);
    saveTimer = setTimeout(save, SAVE_AFTER);
  }

  async function save() {
    const { status, data } = await post(root.dataset.saveUrl, fields()).catch(() => ({ status: 0, data: {} }));
    if (status === 200) {
      localStorage.removeItem(backupKey);
      $("ws-save-state").textContent = "Saved";
    } else {
      $("ws-save-state").textContent = `Not saved: ${data.message || "no connection"} (kept in this browser)`;
    }
  }

  // --- the answer line ---
  async function checkLine() {
    const { data } = await post(root.dataset.lineUrl, { answer_line: answer.value }).catch(() => ({ data: {} }));
    const errors = data.errors || [];
    $("ws-answer-error").textContent = errors.length ? `Answer line: ${errors.join("; ")}` : "";
    answer.setAttribute("aria-invalid", errors.length ? "true" : "false");
    return errors.length === 0;
  }

  // --- the analysis ---
  function scheduleAnalysis() {
    clearTimeout(analyseTimer);
    analyseTimer = setTimeout(analyse, ANALYSE_AFTER);
  }

  async function analyse() {
    updateCount();
    if (!text.value.trim()) {
      $("ws-analysis-state").textContent = "Type a question to see the bots.";
      return;
    }
    const seq = ++analyseSeq;
    $("ws-analysis-state").textContent = "Asking the bots…";
    const { status, data } = await post(root.dataset.analyseUrl, fields()).catch(() => ({ status: 0, data: {} }));
    if (seq !== analyseSeq) return; // a newer request is on its way
    if (status === 202) {
      $("ws-analysis-state").textContent = "The bots are loading (the first time takes a minute)…";
      analyseTimer = setTimeout(analyse, 1500);
      return;
    }
    if (status !== 200) {
      $("ws-analysis-state").textContent = data.message ? `Not analysed: ${data.message}` : "Not analysed: no connection.";
      return;
    }
    render(data);
    askLlm(data, seq);
  }

  // --- the LLM endpoints enabled for writing: after the built-in bots, never holding them up ---
  function usd(v) { return `$${Number(v.toFixed(6))}`; }

  async function askLlm(local, seq) {
    const list = $("ws-llm-list");
    if (!local.llm.length) { list.replaceChildren(); return; }
    const key = JSON.stringify([text.value, answer.value, category.value]);
    if (llmDone.key === key) { showLlm(local, llmDone.data); return; }
    list.replaceChildren(...local.llm.map((e) => el("article", { class: "ws-bot", "data-bot": e.name },
      el("h3", {}, e.label, " ", el("span", { class: "muted small" }, `(LLM: up to ${e.max_prefixes} prefixes, declared ${usd(e.cost_per_prefix)} per prefix)`)),
      el("p", { class: "muted ws-llm-state" }, "Asking the LLM…"))));
    const { status, data } = await post(root.dataset.analyseUrl, { ...fields(), llm: true }).catch(() => ({ status: 0, data: {} }));
    if (seq !== analyseSeq) return; // the text changed meanwhile
    if (status !== 200) {
      for (const p of list.querySelectorAll(".ws-llm-state")) p.textContent = `Not asked: ${data.message || "no connection"}`;
      return;
    }
    llmDone = { key, data };
    showLlm(local, data);
  }

  function showLlm(local, data) {
    $("ws-llm-list").replaceChildren(...data.bots.map((b) => botCard(b, data)));
    lastBots = [...local.bots, ...data.bots];
    renderMarked({ ...local, bots: lastBots });
  }

  const VERDICT = { correct: "correct", prompt: "prompt", wrong: "wrong" };

  function verdictBadge(v) { return el("span", { class: `ws-verdict ws-${v}` }, VERDICT[v] || v); }

  function render(data) {
    lastBots = data.bots;
    const ms = Math.max(0, ...data.bots.map((b) => b.elapsed_ms || 0));
    $("ws-analysis-state").textContent = data.bots.length
      ? `${data.bots.length} bot${data.bots.length === 1 ? "" : "s"} asked on ${data.words.length} words (slowest ${Math.round(ms)} ms).`
      : "No bot is available on this server (see below).";
    const list = $("ws-bot-list");
    list.replaceChildren(...data.bots.map((b) => botCard(b, data)));
    $("ws-problems").replaceChildren(...(data.problems || []).map((p) => el("li", {}, p)));
    renderMarked(data);
    const t = data.target;
    $("ws-target").textContent = t.message;
    $("ws-target").dataset.state = t.state;
    const pick = $("ws-probe-bot");
    if (pick) pick.replaceChildren(...data.bots.map((b) => el("option", { value: b.name }, b.label)));
  }

  function botCard(b, data) {
    const card = el("article", { class: "ws-bot", "data-bot": b.name });
    const llm = b.llm;
    const cost = llm
      ? `(LLM: ${llm.requests} prefix${llm.requests === 1 ? "" : "es"}, ${usd(llm.cost)} this analysis, ${llm.prompt_tokens + llm.completion_tokens} tokens; declared ${usd(llm.cost_per_prefix)} per prefix; ${(b.elapsed_ms / 1000).toFixed(1)} s)`
      : `(${Math.round(b.elapsed_ms)} ms, free: runs on this server)`;
    card.append(el("h3", {}, b.label, " ", el("span", { class: "muted small ws-cost" }, cost)));
    if (llm && llm.error) card.append(el("p", { class: "error" }, `${llm.failures} of ${llm.requests} requests failed: ${llm.error}`));
    const guesses = el("ol", { class: "ws-guesses", "aria-label": `${b.label}: top guesses at the current text` });
    for (const g of b.guesses) {
      const conf = g.confidence !== undefined ? ` — confidence ${(g.confidence * 100).toFixed(0)} %` : ` — score ${g.score.toFixed(3)}`;
      guesses.append(el("li", {}, el("strong", {}, g.answer), conf, " ", verdictBadge(g.verdict)));
    }
    if (!b.guesses.length) guesses.append(el("li", { class: "muted" }, llm ? "no guess" : "no guess (no word it knows)"));
    card.append(guesses);
    const buzz = b.buzz
      ? el("p", { class: "ws-buzzline" }, `Buzzes at word ${b.buzz.index + 1} of ${data.words.length} with “`, el("strong", {}, b.buzz.answer), "” ", verdictBadge(b.buzz.verdict))
      : el("p", { class: "ws-buzzline" }, "Does not buzz on this text.");
    card.append(buzz);
    card.append(el("p", { class: "small" }, b.earliest_right === null
      ? "Its top guess is never right."
      : `Its top guess is first right at word ${b.earliest_right + 1}.`));
    if (llm) {
      card.append(el("p", { class: "small" }, `Asked after words ${llm.prefixes.map((i) => i + 1).join(", ")} (sentence ends and the whole text).`),
        el("p", { class: "small muted" }, "Leave-one-sentence-out and driver words: not available for an LLM (it scores no other answer and no word)."));
      return card;
    }
    if (b.sentences.length) {
      const gives = el("ul", { class: "small ws-sentences", "aria-label": `${b.label}: what each sentence gives away` });
      for (const s of b.sentences) {
        const start = data.words.slice(s.start, Math.min(s.end, s.start + 5)).join(" ");
        gives.append(el("li", { class: s.drop > 0.05 ? "ws-giveaway" : "" }, `Sentence “${start}…” (words ${s.start + 1}–${s.end}): without it the answer's score ${s.drop >= 0 ? "drops" : "rises"} by ${Math.abs(s.drop).toFixed(3)}`));
      }
      card.append(el("p", { class: "small" }, "Leave one sentence out:"), gives);
    } else {
      card.append(el("p", { class: "small muted" }, "Leave-one-sentence-out: needs two sentences and an answer the bot knows."));
    }
    if (b.drivers.length) {
      card.append(el("p", { class: "small" }, `Words driving “${b.guesses[0] ? b.guesses[0].answer : ""}” (${b.method}): `,
        ...b.drivers.map((d) => el("mark", { class: "ws-chip" }, d.word))));
    }
    return card;
  }

  function renderMarked(data) {
    const box = $("ws-marked");
    const buzzAfter = new Map(), drivers = new Map();
    for (const b of data.bots) {
      if (b.buzz) buzzAfter.set(b.buzz.index, [...(buzzAfter.get(b.buzz.index) || []), b]);
      for (const d of b.drivers) drivers.set(d.index, [...(drivers.get(d.index) || []), b.label]);
    }
    const nodes = [];
    data.words.forEach((w, i) => {
      const cls = [i < data.first_lines_end ? "ws-first" : "", drivers.has(i) ? "ws-driver" : ""].filter(Boolean).join(" ");
      const word = el(drivers.has(i) ? "mark" : "span", { class: cls, "data-index": String(i) }, w);
      if (drivers.has(i)) word.title = `drives the top guess of ${drivers.get(i).join(", ")}`;
      nodes.push(word, " ");
      for (const b of buzzAfter.get(i) || []) {
        nodes.push(el("span", { class: `ws-buzz ws-${b.buzz.verdict}`, "data-bot": b.name, "data-index": String(i) }, `▼ ${b.label} buzzes (${b.buzz.verdict})`), " ");
      }
    });
    box.replaceChildren(...nodes);
  }

  // --- versions ---
  function renderHistory(versions) {
    const names = Object.fromEntries(lastBots.map((b) => [b.name, b.label]));
    $("ws-history").replaceChildren(...versions.slice().reverse().map((v) => {
      const items = Object.entries(v.predictions).map(([bot, p]) => {
        const where = p.buzz_index === null ? "no buzz" : `word ${p.buzz_index + 1}, “${p.answer}” ${p.correct ? "correct" : "wrong"}`;
        const shift = v.shift[bot] ? ` — ${v.shift[bot]}` : "";
        return el("li", {}, `${names[bot] || bot}: ${where}${shift}`);
      });
      return el("li", {}, el("strong", {}, `Version ${v.number}`), ` · ${v.words} words · ${v.created_at.slice(0, 16).replace("T", " ")} UTC`, el("ul", {}, ...items));
    }));
  }

  async function loadHistory() {
    const r = await fetch(root.dataset.versionsUrl, { credentials: "same-origin" });
    if (r.ok) renderHistory((await r.json()).versions);
  }

  $("ws-save-version").addEventListener("click", async () => {
    clearTimeout(saveTimer);
    await save();
    const { status, data } = await post(root.dataset.versionsUrl, {});
    if (status === 201) {
      renderHistory(data.versions);
      $("ws-save-state").textContent = `Saved as version ${data.versions[data.versions.length - 1].number}`;
    } else {
      $("ws-save-state").textContent = `Version not saved: ${data.message || `HTTP ${status}`}`;
    }
  });

  // --- the distractor probe (POST /workshop/api/probe, another part of the workshop) ---
  const probeButton = $("ws-probe");
  const pick = el("select", { id: "ws-probe-bot", "aria-label": "Bot to probe" });
  probeButton.before(el("label", { class: "sr-only", for: "ws-probe-bot" }, "Bot to probe"), pick);
  probeButton.addEventListener("click", async () => {
    const out = $("ws-probe-result");
    out.replaceChildren(el("p", { class: "muted" }, "Probing…"));
    const { status, data } = await post(root.dataset.probeUrl, { text: text.value, answer_line: answer.value, category: category.value, bot: pick.value }).catch(() => ({ status: 0, data: {} }));
    if (status === 404 && !data.code) {
      out.replaceChildren(el("p", { class: "muted" }, "The distractor probe is not available on this server."));
      return;
    }
    if (status !== 200) {
      out.replaceChildren(el("p", { class: "error" }, `Not probed: ${data.message || `HTTP ${status}`}`));
      return;
    }
    const probes = data.probes || [];
    if (!probes.length) {
      out.replaceChildren(el("p", { class: "muted" }, "No distractor could be built for this question."));
      return;
    }
    const table = el("table", { class: "table small" }, el("caption", { class: "sr-only" }, "Distractor probe results"),
      el("thead", {}, el("tr", {}, ...["Where", "Distractor sentence", "Bot", "Buzz", "Answer", "Right?"].map((h) => el("th", { scope: "col" }, h)))));
    const body = el("tbody");
    for (const p of probes) {
      body.append(el("tr", {},
        el("td", {}, String(p.position || "").replaceAll("_", " ")), el("td", {}, p.sentence || ""), el("td", {}, p.bot || ""),
        el("td", {}, p.buzz_index === null || p.buzz_index === undefined ? "no buzz" : `word ${p.buzz_index + 1}`),
        el("td", {}, p.answer || ""), el("td", {}, p.correct ? "right" : "wrong")));
    }
    table.append(body);
    out.replaceChildren(table);
  });

  // --- wiring ---
  const backup = JSON.parse(localStorage.getItem(backupKey) || "null");
  if (backup && backup.unsaved) { // the server never got these: restore them
    title.value = backup.title; answer.value = backup.answer_line; category.value = backup.category; text.value = backup.text;
    $("ws-save-state").textContent = "Restored unsaved changes from this browser";
    scheduleSave();
  }
  text.addEventListener("input", () => { updateCount(); scheduleSave(); scheduleAnalysis(); });
  answer.addEventListener("input", () => {
    scheduleSave();
    clearTimeout(lineTimer);
    lineTimer = setTimeout(async () => { if (await checkLine()) scheduleAnalysis(); }, LINE_AFTER);
  });
  category.addEventListener("change", () => { scheduleSave(); scheduleAnalysis(); });
  title.addEventListener("input", scheduleSave);
  updateCount();
  loadHistory();
  if (answer.value) checkLine();
  if (text.value.trim()) analyse();
})();
