// The daily section's Mermaid chart as inline SVG: the page draws it with no script and nothing fetched.
import { escapeAttr, escapeHtml } from "./inline.ts";

/** The Mermaid xychart the daily section writes, drawn as an SVG bar chart with the same numbers. */
export function chartSvg(mermaid: readonly string[]): string {
  const labels = [...(mermaid.find((l) => l.trim().startsWith("x-axis")) ?? "").matchAll(/"([^"]*)"/g)].map(
    (m) => m[1]!,
  );
  const barLine = mermaid.find((l) => l.trim().startsWith("bar")) ?? "";
  const values = (/\[(.*)\]/.exec(barLine)?.[1] ?? "")
    .split(",")
    .map((v) => v.trim())
    .filter((v) => v !== "")
    .map(Number);
  const title = /title "([^"]*)"/.exec(mermaid.join("\n"))?.[1] ?? "";
  const max = Math.max(1, ...values);
  const [w, h, left, bottom, top] = [760, 260, 44, 40, 24];
  const slot = (w - left - 8) / Math.max(1, values.length);
  const scale = (h - top - bottom) / max;
  const parts = [
    `<svg class="chart" viewBox="0 0 ${w} ${h}" role="img" aria-label="${escapeAttr(title)}">`,
    `<text x="${w / 2}" y="14" text-anchor="middle">${escapeHtml(title)}</text>`,
    `<line x1="${left}" y1="${h - bottom}" x2="${w - 8}" y2="${h - bottom}" stroke="#999"></line>`,
    `<text x="${left - 4}" y="${top + 4}" text-anchor="end">${max}</text>`,
    `<text x="${left - 4}" y="${h - bottom}" text-anchor="end">0</text>`,
  ];
  values.forEach((v, k) => {
    const x = left + k * slot;
    const bh = v * scale;
    const cx = (x + slot / 2).toFixed(1);
    parts.push(
      `<rect x="${(x + slot * 0.15).toFixed(1)}" y="${(h - bottom - bh).toFixed(1)}" width="${(slot * 0.7).toFixed(1)}" height="${bh.toFixed(1)}"><title>${escapeHtml(labels[k] ?? "")}: ${v}</title></rect>`,
      `<text x="${cx}" y="${h - bottom + 12}" text-anchor="end" transform="rotate(-45 ${cx} ${h - bottom + 12})">${escapeHtml(labels[k] ?? "")}</text>`,
    );
  });
  parts.push("</svg>");
  return parts.join("\n");
}
