import { html, type SafeHtml } from './html.ts';

const pad = (n: number) => String(n).padStart(2, '0');

/** `2026-11-21 10:00 UTC` (for text that cannot hold markup, such as a tooltip). */
export const utc = (d: Date): string =>
  `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())} UTC`;

/** `2026-11-21 10:00 UTC` in a <time> element, or a dash. */
export function when(date: Date | string | null | undefined): SafeHtml {
  if (!date) return html`<span class="muted">—</span>`;
  const d = typeof date === 'string' ? new Date(date) : date;
  return html`<time datetime="${d.toISOString()}">${utc(d)}</time>`;
}

/** A status word as a coloured badge (the word itself carries the meaning, not the colour). */
export const badge = (status: string): SafeHtml =>
  html`<span class="badge badge-${status.replace(/[^a-z]/g, '')}">${status}</span>`;

export const duration = (ms: number | null): string =>
  ms === null ? '—' : ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;

export const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
