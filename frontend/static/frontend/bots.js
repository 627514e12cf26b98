// The bot leaderboard's plots (frontend/bots.html): reliability diagram and accuracy by fraction revealed.
const bots = JSON.parse(document.getElementById("bot-plot-data").textContent);
const config = { responsive: true, displaylogo: false };
// One colour per bot on both plots (plotly's default cycle would count the diagonal).
const palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];
const color = (i) => ({ color: palette[i % palette.length] });
const layout = (title, x, y) => ({
  title: { text: title }, xaxis: { title: { text: x }, range: [0, 1] }, yaxis: { title: { text: y }, range: [0, 1.02] },
  margin: { t: 40, r: 10 }, legend: { orientation: "h" },
});

function draw() {
  const diagonal = { type: "scatter", mode: "lines", name: "perfect calibration", x: [0, 1], y: [0, 1], line: { dash: "dot", color: "#888" } };
  const reliability = bots.map((b, i) => {
    const bins = b.reliability.filter((bin) => bin.count > 0);
    return {
      type: "scatter", mode: "lines+markers", name: b.name, line: color(i), marker: color(i),
      x: bins.map((bin) => bin.confidence), y: bins.map((bin) => bin.accuracy),
      text: bins.map((bin) => `${bin.count} answers in [${bin.lo.toFixed(1)}, ${bin.hi.toFixed(1)})`),
      hovertemplate: "confidence %{x:.2f}, accuracy %{y:.2f}<br>%{text}<extra></extra>",
    };
  });
  Plotly.newPlot("reliability-plot", [diagonal, ...reliability], layout("Reliability", "mean confidence", "accuracy"), config);
  const fractions = bots.map((b, i) => ({
    type: "scatter", mode: "lines+markers", name: b.name, line: color(i), marker: color(i),
    x: b.accuracy_by_fraction.map((p) => p.fraction), y: b.accuracy_by_fraction.map((p) => p.accuracy),
  }));
  Plotly.newPlot("fraction-plot", fractions, layout("Accuracy by fraction revealed", "fraction of the tossup read", "accuracy"), config);
}

if (window.Plotly) draw();
else window.addEventListener("load", draw);
