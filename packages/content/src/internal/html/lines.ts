/**
 * Lines a reader view leaves out by what they say, whatever they are named: bylines, datelines and
 * "Updated …" lines, reading times, counts standing alone, and the labels of controls and ad
 * slots ("Close", "Back to gallery", "Next", "1 / 12", "Advertisement"). Each rule looks at one element's whole text, and
 * only short texts are looked at.
 */

/** Texts longer than this (white space runs counted once) are never such a line. */
export const MAX_LINE_CHARS = 160;

/** A byline: "By Jane Doe", "Words by …", "Von …", "Par …", "Por …" followed by a capitalised name. */
const BYLINE =
  /^(?:(?:words|text|story|reporting|written|photos?|photography|interview)\s+)?(?:by|von|par|por|di|door|av|af|przez|od)\s+(?:\p{Lu}|\p{Lt})/iu;
const BYLINE_WORD = /^(?:by|von|par|por|di|door|av|af|przez|od)$/i;
const BYLINE_MAX_CHARS = 120;

/** A dateline: "Updated 3:45 PM EST, March 5, 2024", "Publié le …", "Aktualisiert am …". */
const DATELINE_LEAD =
  /^(?:last\s+)?(?:updated|published|posted|modified|created|aktualisiert|veröffentlicht|erschienen|stand|mis à jour|publié|modifié|actualizado|publicado|atualizado|aggiornato|pubblicato|opublikowano|обновлено|опубликовано)\b/iu;
/** A date or a time of day, in the forms pages write them (a year alone is not one). */
const DATE = new RegExp(
  [
    String.raw`\d{1,4}[./-]\d{1,2}[./-]\d{1,4}`,
    String.raw`\b\d{1,2}[:h]\d{2}(?!\d)`,
    String.raw`\d{4}\s*年`,
    String.raw`\d{1,2}\s*月\s*\d{1,2}\s*日`,
    String.raw`\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2},?\s+\d{4}`,
    String.raw`\b\d{1,2}\.?\s+\p{L}{3,}\.?\s+\d{4}\b`,
  ].join('|'),
  'iu',
);
/** A line that is a date with at most this many words beside it ("Redacción · 14/05/2024 - 11:20"). */
const DATE_LINE_MAX_WORDS = 6;
const DATE_LINE_MAX_CHARS = 80;
const WORD = /[\p{L}]+/gu;

/** A reading time: "9 min read", "Lesezeit: 4 Min.", "5 minutes de lecture". */
const READING_TIME =
  /^(?:(?:reading time|lesezeit|temps de lecture|tiempo de lectura)\s*:?\s*)?\d{1,3}\s*(?:min|mins|minutes?|minuten|minutos|minuti)\.?(?:\s*(?:read|reading|de lecture|de lectura|lesen|lettura))?$/iu;

/** A count standing alone (of comments, shares, likes): "412", "1.2K". */
const COUNT = /^\d[\d.,]{0,6}\s*[km]?$/i;

/** A counter of slides or pages: "1 / 12", "3 of 10", "2 von 8". */
const COUNTER = /^\d{1,4}\s*(?:\/|of|von|de|sur|di|из|z)\s*\d{1,4}$/iu;

/** The whole text of controls, ad slots and share bars, lowercased, in the languages pages are often in. */
const CONTROL_LABELS = new Set([
  'advertisement',
  'advertising',
  'ad',
  'sponsored',
  'anzeige',
  'werbung',
  'publicité',
  'publicidad',
  'publicidade',
  'pubblicità',
  'reklama',
  'реклама',
  '広告',
  '广告',
  'close',
  'close gallery',
  'back to gallery',
  'back to the gallery',
  'back to article',
  'back to the article',
  'view gallery',
  'open gallery',
  'fullscreen',
  'enlarge',
  'expand',
  'zoom',
  'next',
  'previous',
  'prev',
  'next slide',
  'previous slide',
  'next image',
  'previous image',
  'schließen',
  'fermer',
  'cerrar',
  'chiudi',
  'fechar',
  'закрыть',
  'share',
  'share this',
  'share this article',
  'share this story',
  'share on facebook',
  'share on twitter',
  'tweet',
  'copy link',
  'print',
  'email',
  'e-mail',
  'skip to content',
  'skip to main content',
  'skip advertisement',
  'back to top',
  'scroll to top',
  'teilen',
  'artikel teilen',
  'partager',
  'compartir',
  'condividi',
  'поделиться',
]);

/**
 * Whether `text` (white space collapsed, trimmed), the whole text of an element, is a byline, a
 * dateline, a reading time, a count or a control's label. Counts, counters and dates alone are
 * judged only for a block (`block`): within a sentence a number or a date in an inline element
 * (`<strong>5.2</strong> percent`, `on <time>April 18</time>`) is part of the text.
 */
export function isChromeLine(text: string, block = true): boolean {
  if (text.length === 0 || text.length > MAX_LINE_CHARS) return false;
  const label = text.replace(/[\s:|·•›»«‹→←×✕*]+$/u, '').replace(/^[\s|·•‹«←×✕]+/u, '');
  if (CONTROL_LABELS.has(label.toLowerCase())) return true;
  if (text.length <= BYLINE_MAX_CHARS && BYLINE.test(label)) return isNameLike(label);
  if (DATELINE_LEAD.test(label)) return /\d/.test(label);
  if (!block) return false;
  if (COUNTER.test(label) || COUNT.test(label) || READING_TIME.test(label)) return true;
  // A sentence that mentions a date ends with its stop; a dateline does not.
  return (
    label.length <= DATE_LINE_MAX_CHARS &&
    !/[.!?。]$/u.test(label) &&
    DATE.test(label) &&
    wordCount(label) <= DATE_LINE_MAX_WORDS
  );
}

function wordCount(text: string): number {
  let n = 0;
  for (const _ of text.matchAll(WORD)) n++;
  return n;
}

/**
 * Whether a text that starts like a byline reads like one rather than like a sentence ("By the end of
 * the decade…"): after the lead word come capitalised names, and no full stop ends a clause.
 */
function isNameLike(text: string): boolean {
  const words = text.split(/\s+/);
  const at = words.findIndex((word) => BYLINE_WORD.test(word));
  const name = words.slice(at + 1, at + 3);
  return name.every(
    (word) => /^[\p{Lu}\p{Lt}]/u.test(word) || /^(?:and|und|et|y|e|&|de|van|von|der|la|le)$/i.test(word),
  );
}
