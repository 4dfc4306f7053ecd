// Hand-written SVG bar charts for bench/run.mjs: a grouped bar chart is all the reports need, and
// a plotting library would be a heavier dependency than these ~100 lines. Every chart carries its
// baseline, machine, Node version and date in its footer, so a copied image still says what it is.

const COLORS = ["#2f6fb0", "#e07b39", "#5a9e4b", "#8e5ba8", "#c44e52"];
const WIDTH = 720;
const HEIGHT = 360;
const PLOT = { left: 70, right: 20, top: 56, bottom: 92 };

/** Escape text for SVG content and attributes. */
function esc(text) {
  return String(text).replace(
    /[&<>"]/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c],
  );
}

/** A "nice" axis maximum: 1, 2 or 5 × 10^n at or above `max`. */
function niceMax(max) {
  if (!(max > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(max));
  for (const m of [1, 2, 5, 10]) if (m * p >= max) return m * p;
  return 10 * p;
}

function formatNumber(v) {
  if (v >= 1000) return `${Math.round(v).toLocaleString("en-US")}`;
  if (v >= 10) return String(Math.round(v));
  return String(Math.round(v * 100) / 100);
}

/**
 * Grouped bars. `groups`: [{ label, values: number[] }] (one value per series, `undefined` for a
 * missing bar); `series`: names of the bars in each group. `footer`: { baseline, machine, node, date }.
 */
export function groupedBarChart({ title, yLabel, series, groups, footer }) {
  const plotW = WIDTH - PLOT.left - PLOT.right;
  const plotH = HEIGHT - PLOT.top - PLOT.bottom;
  const max = niceMax(Math.max(0, ...groups.flatMap((g) => g.values.filter((v) => typeof v === "number"))));
  const y = (v) => PLOT.top + plotH - (v / max) * plotH;
  const groupW = plotW / Math.max(1, groups.length);
  const barW = Math.min(48, (groupW * 0.8) / series.length);
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="system-ui, sans-serif" font-size="12">`,
    `<title>${esc(title)}</title>`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="#fff"/>`,
    `<text x="${WIDTH / 2}" y="22" text-anchor="middle" font-size="15" font-weight="600">${esc(title)}</text>`,
  ];
  // Legend.
  let lx = PLOT.left;
  series.forEach((name, i) => {
    parts.push(`<rect x="${lx}" y="34" width="10" height="10" fill="${COLORS[i % COLORS.length]}"/>`);
    parts.push(`<text x="${lx + 14}" y="43">${esc(name)}</text>`);
    lx += 24 + name.length * 7;
  });
  // Axis and grid.
  for (let i = 0; i <= 4; i++) {
    const v = (max * i) / 4;
    parts.push(
      `<line x1="${PLOT.left}" x2="${WIDTH - PLOT.right}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>`,
      `<text x="${PLOT.left - 6}" y="${y(v) + 4}" text-anchor="end">${formatNumber(v)}</text>`,
    );
  }
  parts.push(
    `<text transform="translate(16 ${PLOT.top + plotH / 2}) rotate(-90)" text-anchor="middle">${esc(yLabel)}</text>`,
  );
  groups.forEach((g, gi) => {
    const gx = PLOT.left + gi * groupW + (groupW - barW * series.length) / 2;
    g.values.forEach((v, si) => {
      if (typeof v !== "number") return;
      const x = gx + si * barW;
      parts.push(
        `<rect x="${x.toFixed(1)}" y="${y(v).toFixed(1)}" width="${(barW - 2).toFixed(1)}" height="${(PLOT.top + plotH - y(v)).toFixed(1)}" fill="${COLORS[si % COLORS.length]}"><title>${esc(`${g.label} ${series[si]}: ${formatNumber(v)}`)}</title></rect>`,
        `<text x="${(x + barW / 2 - 1).toFixed(1)}" y="${(y(v) - 3).toFixed(1)}" text-anchor="middle" font-size="10">${formatNumber(v)}</text>`,
      );
    });
    parts.push(
      `<text x="${(PLOT.left + gi * groupW + groupW / 2).toFixed(1)}" y="${PLOT.top + plotH + 16}" text-anchor="middle">${esc(g.label)}</text>`,
    );
  });
  parts.push(
    `<line x1="${PLOT.left}" x2="${WIDTH - PLOT.right}" y1="${PLOT.top + plotH}" y2="${PLOT.top + plotH}" stroke="#333"/>`,
  );
  const foot = [
    `Baseline: ${footer.baseline}`,
    `Machine: ${footer.machine} · Node ${footer.node} · ${footer.date}`,
  ];
  foot.forEach((line, i) => {
    parts.push(
      `<text x="${PLOT.left}" y="${HEIGHT - 38 + i * 16}" fill="#555" font-size="11">${esc(line)}</text>`,
    );
  });
  parts.push("</svg>");
  return `${parts.join("\n")}\n`;
}
