// Fit progress on the analysis page: while a fit runs (or after "Refit now" queued one) poll
// /api/fits/progress every 2 s, redraw the progress bars, and open the new fit when the
// dataset's latest finished fit changes.
const box = document.getElementById("fit-progress");
const POLL_MS = 2000;
const GIVE_UP_MS = 120000; // a queued refit no worker starts within this: say so and stop

function bar(fit) {
  const li = document.createElement("li");
  li.dataset.fit = fit.id;
  const progress = document.createElement("progress");
  progress.max = 1;
  progress.value = fit.progress;
  li.append(`fit #${fit.id} · ${fit.dataset} `, progress, ` ${Math.round(fit.progress * 100)} %`);
  if (fit.stale) li.append(" (stalled: the next fit task takes it over)");
  return li;
}

function note(text) {
  let p = box.querySelector("#refit-queued");
  if (!p) {
    p = document.createElement("p");
    p.id = "refit-queued";
    p.className = "muted";
    box.prepend(p);
  }
  p.textContent = text;
}

if (box) {
  const dataset = box.dataset.dataset;
  const list = box.querySelector("ul.running");
  const started = Date.now();
  let waiting = box.dataset.queued === "1";
  let sawRunning = list.children.length > 0;
  const poll = async () => {
    let body;
    try {
      const response = await fetch(`${box.dataset.url}?dataset=${encodeURIComponent(dataset)}`);
      body = await response.json();
    } catch {
      setTimeout(poll, POLL_MS * 2); // the server restarts: try again later
      return;
    }
    list.replaceChildren(...body.running.map(bar));
    if (body.running.length) sawRunning = true;
    if (body.latest !== null && String(body.latest) !== box.dataset.latest) {
      location.assign(box.dataset.fitUrl.replace("/0/", `/${body.latest}/`));
      return;
    }
    if (body.running.length) {
      setTimeout(poll, POLL_MS);
    } else if (sawRunning && waiting) {
      note("The refit finished without a new fit: the inputs equal an existing fit's, or it failed (see All fits).");
    } else if (waiting && Date.now() - started > GIVE_UP_MS) {
      note("No worker has started the refit yet: is the Celery worker running?");
    } else if (waiting) {
      setTimeout(poll, POLL_MS);
    } else if (sawRunning) {
      location.reload(); // another dataset's fit finished: show the fresh list
    }
  };
  if (waiting || sawRunning) setTimeout(poll, POLL_MS);
}
