import type { RunHealth } from '@scrapejobs/contracts';
import type { Run } from '@scrapejobs/domain';
import { badge, plural, utc, when } from './format.ts';
import { html, type SafeHtml } from './html.ts';

/** How many ended runs the job page's chart shows at most. */
export const HISTORY_RUNS = 30;

// The chart's drawing box: one slot per run, bars up from the baseline.
const SLOT = 10;
const BAR = 8;
const TOP = 12;
const HEIGHT = 72;

const reasonsText = (health: RunHealth) =>
  health.reasons.map((r) => `${r.code}${r.query ? ` (${r.query})` : ''}: ${r.message}`).join('; ');

const reasonList = (health: RunHealth): SafeHtml =>
  html`<ul class="plain reasons">${health.reasons.map(
    (r) =>
      html`<li><code>${r.code}</code>${r.query ? html` <span class="mono">${r.query}</span>` : ''} ${r.message}</li>`,
  )}</ul>`;

const degraded = (r: Run) => r.health?.status === 'degraded';

/** One bar of the chart, with its run, record count and health as a tooltip. */
function bar(r: Run, i: number, max: number): SafeHtml {
  const h = max === 0 ? 0 : ((HEIGHT - TOP) * r.resultsCount) / max;
  const height = Math.max(1.5, Math.round(h * 10) / 10);
  const state = !r.health ? 'unchecked' : r.health.status;
  const tip = `${utc(r.finishedAt ?? r.startedAt)}: ${plural(r.resultsCount, 'record')}, ${r.status}; ${
    !r.health
      ? 'health not checked'
      : r.health.status === 'ok'
        ? 'healthy'
        : `degraded: ${reasonsText(r.health)}`
  }`;
  return html`<rect class="bar bar-${state}" x="${i * SLOT + (SLOT - BAR) / 2}" y="${HEIGHT - height}" width="${BAR}" height="${height}"><title>${tip}</title></rect>`;
}

/**
 * The job page's health history: records per ended run (oldest first) as a small inline SVG bar
 * chart, degraded runs marked, and the same in words (a summary and the degraded runs' reasons).
 */
export function healthHistory(jobId: string, ended: Run[]): SafeHtml {
  if (ended.length === 0)
    return html`<section aria-labelledby="health-title" class="panel">
<h2 id="health-title">Health history</h2>
<p class="empty">No ended run yet.</p>
</section>`;
  const counts = ended.map((r) => r.resultsCount);
  const max = Math.max(...counts);
  const bad = ended.filter(degraded).reverse();
  const summary = `${plural(ended.length, 'ended run')}, oldest first: from ${Math.min(...counts)} to ${plural(max, 'record')} per run; ${bad.length} degraded.`;
  const width = HISTORY_RUNS * SLOT;
  return html`<section aria-labelledby="health-title" class="panel">
<h2 id="health-title">Health history</h2>
<figure class="health">
<svg class="health-chart" viewBox="0 0 ${width} ${HEIGHT}" width="${width}" height="${HEIGHT}" role="img" aria-labelledby="health-chart-title health-chart-desc">
<title id="health-chart-title">Records per run of the last ${plural(ended.length, 'ended run')}</title>
<desc id="health-chart-desc">${summary}</desc>
<text class="axis-label" x="${width - 2}" y="9" text-anchor="end">max ${max}</text>
<line class="axis" x1="0" y1="${HEIGHT - 0.5}" x2="${width}" y2="${HEIGHT - 0.5}"/>
${ended.map((r, i) => bar(r, i, max))}
</svg>
<figcaption class="muted small">${summary} <span class="swatch swatch-degraded" aria-hidden="true"></span> marks a degraded run; hover a bar for its details.</figcaption>
</figure>
${
  bad.length > 0 &&
  html`<h3>Degraded runs</h3>
<ul class="plain degraded-runs">${bad.map(
    (r) =>
      html`<li><a href="/console/jobs/${jobId}/runs/${r.id}">${when(r.finishedAt ?? r.startedAt)}</a>, ${plural(r.resultsCount, 'record')}: ${reasonList(r.health!)}</li>`,
  )}</ul>`
}
</section>`;
}

/** A run's extraction health for its facts list. */
export const healthFact = (health: RunHealth | null): SafeHtml =>
  html`<div><dt>Health</dt><dd>${health ? badge(health.status) : html`<span class="muted">not checked</span>`}</dd></div>`;

/** Why a run is degraded, in words; nothing for a healthy or unchecked run. */
export const healthReasons = (health: RunHealth | null): SafeHtml | false =>
  health?.status === 'degraded' &&
  html`<div class="flash flash-warn" role="note"><p>The extraction looks degraded:</p>${reasonList(health)}</div>`;
