import { html, type SafeHtml } from './html.ts';

export const errorId = (key: string) => `err-${key.replace(/\W/g, '-')}`;

/**
 * The form errors (names as in job-form.ts) that `match` as one message under a field, and the
 * attributes that tie the field to it. A name that points at a line or an item is kept in the text.
 */
export function fieldError(
  errors: Record<string, string>,
  id: string,
  match: (key: string) => boolean,
): { aria: SafeHtml | ''; text: SafeHtml | '' } {
  const found = Object.entries(errors).filter(([k]) => match(k));
  if (found.length === 0) return { aria: '', text: '' };
  const text = found
    .map(([k, m]) => (found.length > 1 || /(line|name) \d/.test(k) ? `${k}: ${m}` : m))
    .join('; ');
  return {
    aria: html` aria-invalid="true" aria-describedby="${id}"`,
    text: html`<p class="error" id="${id}">${text}</p>`,
  };
}
