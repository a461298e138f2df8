import { constants, gunzipSync } from 'node:zlib';
import { Parser } from 'htmlparser2';
import { SitemapError } from './errors.ts';
import { isHttpUrl } from './url.ts';

/** The URLs of a sitemap: pages (`urlset`) or further sitemaps (`index`), trimmed but not normalised. */
export interface Sitemap {
  kind: 'urlset' | 'index';
  urls: string[];
}

// The sitemaps.org limits: 50,000 URLs and 50 MiB uncompressed per file.
const MAX_BYTES = 50 * 1024 * 1024;
const MAX_URLS = 50_000;
// A loc this long can never be crawled; bounding it keeps one hostile loc from filling memory.
const MAX_LOC_CHARS = 8192;
const CHUNK_CHARS = 1024 * 1024;
// htmlparser2 keeps open elements in an array it unshifts: bounding the depth keeps hostile nesting
// linear. Real sitemaps nest four or five levels (urlset > url > image:image > image:loc).
const MAX_DEPTH = 32;
const ROOTS = new Map<string, { kind: Sitemap['kind']; entry: string }>([
  ['urlset', { kind: 'urlset', entry: 'url' }],
  ['sitemapindex', { kind: 'index', entry: 'sitemap' }],
]);

/**
 * Reads an XML sitemap or sitemap index (gzipped or not) or a text sitemap (one URL per line);
 * keeps at most 50,000 http(s) URLs. Throws SitemapError for anything else.
 */
export function readSitemap(body: Uint8Array): Sitemap {
  const text = decode(inflate(body));
  const start = text.search(/\S/);
  if (start < 0) throw new SitemapError('not a sitemap: empty');
  return text[start] === '<' ? readXml(text) : readText(text);
}

function inflate(body: Uint8Array): Uint8Array {
  if (body[0] !== 0x1f || body[1] !== 0x8b) {
    if (body.length > MAX_BYTES) throw new SitemapError('sitemap larger than 50 MiB');
    return body;
  }
  try {
    // Sync flush: a truncated download still gives the URLs before the cut.
    return gunzipSync(body, { maxOutputLength: MAX_BYTES, finishFlush: constants.Z_SYNC_FLUSH });
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE')
      throw new SitemapError('sitemap larger than 50 MiB uncompressed');
    throw new SitemapError('not a sitemap: invalid gzip data', { cause: error });
  }
}

function decode(bytes: Uint8Array): string {
  const encoding =
    bytes[0] === 0xff && bytes[1] === 0xfe
      ? 'utf-16le'
      : bytes[0] === 0xfe && bytes[1] === 0xff
        ? 'utf-16be'
        : 'utf-8';
  return new TextDecoder(encoding).decode(bytes);
}

function readText(text: string): Sitemap {
  const urls: string[] = [];
  for (const [line] of text.matchAll(/[^\r\n]+/g)) {
    const url = line.trim();
    if (url === '') continue;
    if (!isHttpUrl(url)) throw new SitemapError('not a sitemap: neither XML nor one http(s) URL per line');
    urls.push(url);
    if (urls.length >= MAX_URLS) break;
  }
  return { kind: 'urlset', urls };
}

function readXml(text: string): Sitemap {
  const urls: string[] = [];
  let root: string | null = null;
  let entry = '';
  // Depth counters instead of a stack of names: hostile nesting costs no memory here.
  let depth = 0;
  let entryDepth = -1;
  let loc: string | null = null;
  let stopped = false;
  let tooDeep = false;
  const stop = () => {
    stopped = true;
    parser.pause();
  };
  const parser = new Parser(
    {
      // The name alone: unlike onopentag, it makes htmlparser2 build no attribute object.
      onopentagname(name) {
        const local = localName(name);
        if (root === null) {
          root = local;
          const known = ROOTS.get(local);
          if (known === undefined) stop();
          else entry = known.entry;
        } else if (local === entry && entryDepth < 0) {
          entryDepth = depth;
        } else if (local === 'loc' && depth === entryDepth + 1) {
          loc = '';
        }
        depth++;
        if (depth > MAX_DEPTH) {
          tooDeep = true;
          stop();
        }
      },
      ontext(data) {
        if (loc !== null && loc.length <= MAX_LOC_CHARS) loc += data;
      },
      onclosetag(name, isImplied) {
        depth--;
        if (depth === entryDepth) entryDepth = -1;
        if (loc === null || depth !== entryDepth + 1 || localName(name) !== 'loc') return;
        // An implied close is a document cut inside the loc: its text may be a shortened URL.
        const url = loc.trim();
        loc = null;
        if (isImplied || url.length > MAX_LOC_CHARS || !isHttpUrl(url)) return;
        urls.push(url);
        if (urls.length >= MAX_URLS) stop();
      },
    },
    { xmlMode: true },
  );
  try {
    for (let at = 0; at < text.length && !stopped; at += CHUNK_CHARS)
      parser.write(text.slice(at, at + CHUNK_CHARS));
    if (!stopped) parser.end();
  } catch (error) {
    throw new SitemapError('not a sitemap: unreadable XML', { cause: error });
  }
  if (tooDeep) throw new SitemapError(`not a sitemap: elements nested deeper than ${MAX_DEPTH}`);
  const known = root === null ? undefined : ROOTS.get(root);
  if (known === undefined) throw new SitemapError(`not a sitemap: ${describeRoot(root)}`);
  return { kind: known.kind, urls };
}

function localName(name: string): string {
  return name.slice(name.lastIndexOf(':') + 1).toLowerCase();
}

function describeRoot(root: string | null): string {
  if (root === null) return 'no XML element';
  return `root element <${root.length > 40 ? `${root.slice(0, 40)}…` : root}>`;
}
