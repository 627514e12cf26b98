// Plots for the analyst page (plotly.js served locally): skills by subject kind, and the item
// information curves computed server-side.
const data = JSON.parse(document.getElementById("plot-data").textContent);
const layout = (title, x, y) => ({
  title: { text: title, font: { size: 14 } }, margin: { t: 40, r: 10, b: 50, l: 55 },
  xaxis: { title: { text: x } }, yaxis: { title: { text: y } }, legend: { orientation: "h" },
});

function draw() {
  const skillTraces = Object.entries(data.skills).map(([kind, g]) => ({
    type: "box", name: kind, y: g.skill, text: g.subject, boxpoints: "all", jitter: 0.4, pointpos: 0, hovertemplate: "%{text}: %{y:.2f}<extra></extra>",
  }));
  Plotly.newPlot("skills-plot", skillTraces, layout("Skill β by kind", "", "skill β (logits)"), { responsive: true, displaylogo: false });

  const curves = data.curves.map((c) => ({ type: "scatter", mode: "lines", name: c.label, x: data.grid, y: c.y, line: { width: 1.5 } }));
  Plotly.newPlot("iif-plot", curves, layout("Item information IIF_j(t)", "skill t (logits)", "information"), { responsive: true, displaylogo: false });
}

if (window.Plotly) draw();
else window.addEventListener("load", draw);
