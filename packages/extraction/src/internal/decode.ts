import iconv from 'iconv-lite';

const PRESCAN_BYTES = 4096;
const CHARSET_PARAM = /;\s*charset\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s;]+))/i;
const META_TAG = /<meta\b[^>]*>/gi;
const META_CHARSET = /\bcharset\s*=\s*["']?\s*([^\s"'/>;]+)/i;
const XML_ENCODING = /^<\?xml[^>]*\bencoding\s*=\s*["']([^"']+)["']/;

/**
 * Decodes a fetched body: a byte order mark wins, then the Content-Type charset, then a
 * <meta charset> / http-equiv declaration (or XML declaration) in the first 4 KiB, else UTF-8.
 * Labels follow the WHATWG Encoding Standard (so `iso-8859-1` means windows-1252); labels it
 * does not know fall back to iconv-lite; unknown labels are skipped.
 */
export function decodeHtml(body: Uint8Array, contentType: string | undefined): string {
  const bom = sniffBom(body);
  if (bom) return decodeWith(bom, body)!;
  const fromHeader = contentType ? headerCharset(contentType) : null;
  if (fromHeader) {
    const text = decodeWith(fromHeader, body);
    if (text !== null) return text;
  }
  const fromDocument = prescan(body);
  if (fromDocument) {
    const text = decodeWith(fromDocument, body);
    if (text !== null) return text;
  }
  return new TextDecoder('utf-8').decode(body);
}

function sniffBom(body: Uint8Array): string | null {
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) return 'utf-8';
  if (body[0] === 0xfe && body[1] === 0xff) return 'utf-16be';
  if (body[0] === 0xff && body[1] === 0xfe) return 'utf-16le';
  return null;
}

function headerCharset(contentType: string): string | null {
  const match = CHARSET_PARAM.exec(contentType);
  return match ? (match[1] ?? match[2] ?? match[3] ?? '').trim() || null : null;
}

function prescan(body: Uint8Array): string | null {
  // latin1 maps bytes one to one, so ASCII markup is readable whatever the real encoding.
  const head = Buffer.from(body.buffer, body.byteOffset, Math.min(body.length, PRESCAN_BYTES)).toString(
    'latin1',
  );
  for (const tag of head.match(META_TAG) ?? []) {
    if (/\bcharset\s*=/i.test(tag) && !/\bcontent\s*=/i.test(tag)) return META_CHARSET.exec(tag)?.[1] ?? null;
    if (/http-equiv\s*=\s*["']?\s*content-type/i.test(tag)) {
      const content = /\bcontent\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/i.exec(tag);
      const value = content ? (content[1] ?? content[2] ?? content[3] ?? '') : '';
      const charset = META_CHARSET.exec(value)?.[1];
      if (charset) return charset;
    }
  }
  return XML_ENCODING.exec(head)?.[1] ?? null;
}

function decodeWith(label: string, body: Uint8Array): string | null {
  let decoder: TextDecoder | null = null;
  try {
    decoder = new TextDecoder(label);
  } catch {
    // not a WHATWG label; iconv-lite knows more (cp437, iso-8859-16 spellings, ...)
  }
  if (decoder) {
    // A page cannot really be UTF-16 without a BOM; WHATWG treats such declarations as UTF-8.
    if (decoder.encoding.startsWith('utf-16') && !sniffBom(body)) decoder = new TextDecoder('utf-8');
    return decoder.decode(body);
  }
  if (iconv.encodingExists(label)) return iconv.decode(Buffer.from(body), label);
  return null;
}
