// Draws the plotly figures of the notebook pages. docs/build.py turns each plotly output of an executed
// notebook into <script type="application/json" class="ddrl-figure">{data, layout, config}</script>;
// plotly.min.js (loaded just before this file) is plotly's own bundle, served from the site.
document.querySelectorAll("script.ddrl-figure").forEach((s) => {
  const fig = JSON.parse(s.textContent);
  const div = document.createElement("div");
  div.className = "ddrl-figure-plot";
  s.before(div);
  Plotly.newPlot(div, fig.data, fig.layout || {}, Object.assign({ responsive: true, displaylogo: false }, fig.config || {}));
});
