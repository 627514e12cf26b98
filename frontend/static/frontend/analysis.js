// Plots for the analyst page (plotly.js served locally): skills by subject kind, the ADVSCORE
// paper's Figure 2 (skill densities of skilled humans vs models with β*_H0, β*_M0 marked; mean
// response probability per group across items) and the item information curves, all computed
// server-side (frontend/analysis.py).
const data = JSON.parse(document.getElementById("plot-data").textContent);
const layout = (title, x, y) => ({
  title: { text: title, font: { size: 14 } }, margin: { t: 40, r: 10, b: 90, l: 55 },
  xaxis: { title: { text: x } }, yaxis: { title: { text: y } }, legend: { orientation: "h", y: -0.3 },
});

function draw() {
  const skillTraces = Object.entries(data.skills).map(([kind, g]) => ({
    type: "box", name: kind, y: g.skill, text: g.subject, boxpoints: "all", jitter: 0.4, pointpos: 0, hovertemplate: "%{text}: %{y:.2f}<extra></extra>",
  }));
  Plotly.newPlot("skills-plot", skillTraces, layout("Skill β by kind", "", "skill β (logits)"), { responsive: true, displaylogo: false });

  const curves = data.curves.map((c) => ({ type: "scatter", mode: "lines", name: c.label, x: data.grid, y: c.y, line: { width: 1.5 } }));
  // A plot with nothing to draw is not drawn: its place on the page says why (analysis.html).
  if (curves.length) Plotly.newPlot("iif-plot", curves, layout("Item information IIF_j(t)", "skill t (logits)", "information"), { responsive: true, displaylogo: false });

  const f2 = data.figure2;
  if (!f2) return;
  const colors = { human: "#1f77b4", bot: "#d62728" };
  const names = { human: "skilled humans H(0)", bot: "skilled models M(0)" };
  const densities = [];
  for (const g of ["human", "bot"]) {
    if (f2[g].density) densities.push({ type: "scatter", mode: "lines", fill: "tozeroy", name: names[g], x: f2.grid, y: f2[g].density, line: { color: colors[g] } });
    densities.push({ type: "scatter", mode: "markers", name: `${g} skills`, showlegend: false, x: f2[g].skills, y: f2[g].skills.map(() => 0), marker: { symbol: "line-ns-open", size: 12, color: colors[g] } });
  }
  const mark = (x, color, text) => ({ type: "line", xref: "x", yref: "paper", x0: x, x1: x, y0: 0, y1: 1, line: { color, dash: "dash" }, label: { text, textposition: "end" } });
  const densityLayout = layout("Skill densities", "skill β (logits)", "density");
  densityLayout.shapes = [mark(f2.skill_h0, colors.human, "β*H0"), mark(f2.skill_m0, colors.bot, "β*M0")];
  if (f2.human.density || f2.bot.density) Plotly.newPlot("density-plot", densities, densityLayout, { responsive: true, displaylogo: false });

  const x = f2.difficulty;
  const curvesByGroup = ["human", "bot"].map((g) => ({
    type: "scatter", mode: "lines+markers", name: names[g], x, y: f2[`${g}_curve`], text: f2.items,
    marker: { size: 4, color: colors[g] }, line: { color: colors[g] }, hovertemplate: "%{text}: %{y:.2f}<extra></extra>",
  }));
  Plotly.newPlot("response-plot", curvesByGroup, layout("Mean response probability per item", "item difficulty θ (logits)", "mean P(correct)"), { responsive: true, displaylogo: false });
}

if (window.Plotly) draw();
else window.addEventListener("load", draw);
