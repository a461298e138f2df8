/** Longest URL a job source may be (docs/api.md §3.1). */
const MAX_URL_LENGTH = 2048;

type InputUrl = { ok: true; url: string } | { ok: false; message: string };

/**
 * A URL as Firecrawl reads it: trimmed, `http://` added when it names no scheme, http or
 * https only. The text is kept as given otherwise, so documents report it as asked.
 */
export function readInputUrl(raw: string): InputUrl {
  const trimmed = raw.trim();
  if (trimmed === '') return { ok: false, message: 'must be a URL' };
  const url = /^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed) ? trimmed : `http://${trimmed}`;
  const parsed = URL.parse(url);
  if (parsed === null || parsed.hostname === '') return { ok: false, message: 'must be a valid URL' };
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    return { ok: false, message: 'must be an http or https URL' };
  if (/\s/.test(url)) return { ok: false, message: 'must not contain white space' };
  if (escapeGlob(url).length > MAX_URL_LENGTH)
    return { ok: false, message: `must have at most ${MAX_URL_LENGTH} characters` };
  return { ok: true, url };
}

/** A URL as a job `source`: the curl glob characters of docs/api.md §3.4 escaped, so it is fetched as is. */
export const escapeGlob = (url: string): string => url.replace(/[[\]{}]/g, '\\$&');

/** `text` as a literal inside a regular expression. */
export const escapeRegExp = (text: string): string => text.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');
