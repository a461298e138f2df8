import { type ChildNode, Document, Element } from 'domhandler';
import { type Handler, Parser } from 'htmlparser2';
import { type CompiledCss, prefixesOf, type UpwardSelector } from './css.ts';
import type { ResolvedLimits } from './limits.ts';
import type { ValueSink } from './page.ts';
import { TextValue, textDataValue } from './values.ts';
import { maskOf, type SimplePath } from './xpath-simple.ts';

/**
 * A query this pass can evaluate: a css selector that looks only upwards (CompiledCss.upward),
 * an XPath within the fast path's subset (xpath-simple.ts), or a regex (read from the text
 * afterwards: nothing to collect here). The pass costs time linear in the page for every css and
 * XPath query it takes (each element is matched once, against masks of its parent's).
 */
export type StreamQuery =
  | { readonly kind: 'css'; readonly css: CompiledCss; readonly upward: readonly UpwardSelector[] }
  | { readonly kind: 'xpath'; readonly path: SimplePath }
  | { readonly kind: 'regex' };

/**
 * Each query's values in document order, exactly as its evaluation on the parsed tree gives them
 * (css.ts, xpath.ts), except that a text value is made with the largest cap a value can have on
 * the page (null past it): the caller checks each against the cap it has when it pushes the value.
 */
export type StreamedValues = (string | null)[][];

/**
 * Puts a query's streamed values into `sink` as its evaluation on the tree does: attribute values
 * as they are, text values checked against the sink's cap at that moment.
 */
export function pushStreamed(query: StreamQuery, values: readonly (string | null)[], sink: ValueSink): void {
  const output = query.kind === 'css' ? query.css.output : query.kind === 'xpath' ? query.path.output : null;
  const raw = output?.kind === 'attr';
  for (const value of values) {
    if (raw) sink.push(value!);
    else sink.push(value === null || value.length > sink.cap ? sink.overflow() : value);
  }
}

/** Text values being gathered at once, across queries, before the page is read the slow way. */
const MAX_OPEN_VALUES = 32;
const NO_CHILDREN: ChildNode[] = [];

class GiveUp extends Error {}

interface Open {
  readonly element: Element;
  /**
   * Per XPath query and per part of a css selector (a mask slot): the prefixes of its path or
   * compounds this element ends, and those its proper ancestors end.
   */
  readonly masks: number[];
  readonly aboves: number[];
}

interface Gathering {
  readonly query: number;
  readonly slot: number;
  readonly element: Element;
  /** `::text`: only the element's own text nodes. */
  readonly own: boolean;
  readonly text: TextValue;
  full: boolean;
}

/**
 * Reads a page once, in htmlparser2's events, and gives every query's values without building
 * the tree: what makes an element selected is known when it opens (its name, its attributes and
 * its ancestors'), and its text is complete when it closes. The events are those DomHandler
 * builds the tree from (dom.ts parses with the same options), so the values are those of the
 * tree: adjacent text events make one text node, as DomHandler merges them.
 *
 * Returns null when the page is better read the slow way, which then also gives the exact error:
 * a query gives more values than the page may have records, the values together go over the
 * page's total, or more than MAX_OPEN_VALUES text values are open at once (deeply nested matches).
 */
export function streamValues(
  queries: readonly StreamQuery[],
  html: string,
  limits: ResolvedLimits,
): StreamedValues | null {
  const reader = new StreamReader(queries, limits);
  try {
    new Parser(reader, { decodeEntities: true }).end(html);
  } catch (error) {
    if (error instanceof GiveUp) return null;
    throw error;
  }
  return reader.values;
}

class StreamReader implements Partial<Handler> {
  readonly values: StreamedValues;
  readonly #queries: readonly StreamQuery[];
  /** Per query, its first mask slot (a css query has one per part of its selector). */
  readonly #slots: number[];
  readonly #cap: number;
  readonly #maxValues: number;
  readonly #maxChars: number;
  readonly #stack: Open[];
  readonly #gathering: Gathering[] = [];
  /** XPath queries that select text nodes: the text node being read, merged from adjacent events. */
  readonly #textQueries: { query: number; last: number; child: boolean }[];
  #pendingText: string | null = null;
  #chars = 0;

  constructor(queries: readonly StreamQuery[], limits: ResolvedLimits) {
    this.#queries = queries;
    this.values = queries.map(() => []);
    let slots = 0;
    this.#slots = queries.map((query) => {
      const first = slots;
      slots += query.kind === 'css' ? query.upward.length : 1;
      return first;
    });
    this.#cap = Math.min(limits.maxValueBytes, limits.maxTotalBytes);
    this.#maxValues = limits.maxRecords + 1;
    this.#maxChars = limits.maxTotalBytes;
    const zeros = new Array<number>(slots).fill(0);
    this.#stack = [{ element: new Document([]) as unknown as Element, masks: zeros, aboves: zeros }];
    this.#textQueries = queries.flatMap((query, i) => {
      if (query.kind !== 'xpath' || query.path.output.kind !== 'text') return [];
      const last = 1 << (query.path.steps.length - 1);
      return [{ query: i, last, child: query.path.output.axis === 'child' }];
    });
  }

  onopentag(name: string, attribs: Record<string, string>): void {
    this.#endText();
    const parent = this.#stack[this.#stack.length - 1]!;
    const element = new Element(name, attribs, NO_CHILDREN);
    element.parent = parent.element;
    const masks: number[] = [];
    const aboves: number[] = [];
    for (let q = 0; q < this.#queries.length; q++) {
      const query = this.#queries[q]!;
      const slot = this.#slots[q]!;
      if (query.kind === 'css') {
        let matches = false;
        for (let i = 0, s = slot; i < query.upward.length; i++, s++) {
          const part = query.upward[i]!;
          const above = parent.aboves[s]! | parent.masks[s]!;
          const mask = prefixesOf(part, element, parent.masks[s]!, above);
          masks[s] = mask;
          aboves[s] = above;
          if (mask & (1 << (part.compounds.length - 1))) matches = true;
        }
        if (!matches) continue;
        const { output } = query.css;
        if (output.kind === 'attr') {
          if (Object.hasOwn(attribs, output.name)) this.#add(q, attribs[output.name] ?? '');
        } else this.#gather(q, element, output.kind === 'ownText');
      } else if (query.kind === 'xpath') {
        const { steps, output } = query.path;
        const above = parent.aboves[slot]! | parent.masks[slot]!;
        const mask = maskOf(steps, element, parent.masks[slot]!, above);
        masks[slot] = mask;
        aboves[slot] = above;
        const last = 1 << (steps.length - 1);
        if (output.kind === 'element') {
          if (mask & last) this.#gather(q, element, false);
        } else if (output.kind === 'attr') {
          const selected = output.axis === 'child' ? mask : mask | above;
          if (selected & last && Object.hasOwn(attribs, output.name))
            this.#add(q, attribs[output.name] ?? '');
        }
      }
    }
    this.#stack.push({ element, masks, aboves });
  }

  ontext(data: string): void {
    const top = this.#stack[this.#stack.length - 1]!.element;
    for (const gathering of this.#gathering) {
      if (gathering.full || (gathering.own && gathering.element !== top)) continue;
      if (!gathering.text.add(data)) gathering.full = true;
    }
    if (this.#textQueries.length > 0) this.#pendingText = (this.#pendingText ?? '') + data;
  }

  onclosetag(): void {
    this.#endText();
    // At the end a tag whose start was cut off is closed too: the tree then closes its parent.
    if (this.#stack.length === 1) return;
    const { element } = this.#stack.pop()!;
    const gathering = this.#gathering;
    while (gathering.length > 0 && gathering[gathering.length - 1]!.element === element) {
      const { query, slot, text, full } = gathering.pop()!;
      const value = full ? null : text.value();
      this.values[query]![slot] = value;
      this.#count(value);
    }
  }

  oncomment(): void {
    this.#endText();
  }

  onprocessinginstruction(): void {
    this.#endText();
  }

  onend(): void {
    this.#endText();
  }

  // Not made in HTML (a CDATA section is read as a comment), and a tree the fast XPath does not model.
  oncdatastart(): void {
    throw new GiveUp();
  }

  #gather(query: number, element: Element, own: boolean): void {
    if (this.#gathering.length >= MAX_OPEN_VALUES) throw new GiveUp();
    const slot = this.#slot(query);
    this.#gathering.push({ query, slot, element, own, text: new TextValue(this.#cap), full: false });
  }

  #add(query: number, value: string | null): void {
    this.values[query]![this.#slot(query)] = value;
    this.#count(value);
  }

  #slot(query: number): number {
    const values = this.values[query]!;
    if (values.length >= this.#maxValues) throw new GiveUp();
    values.push(null);
    return values.length - 1;
  }

  #count(value: string | null): void {
    this.#chars += value === null ? this.#cap : value.length;
    if (this.#chars > this.#maxChars) throw new GiveUp();
  }

  /** The text node read so far is complete: XPath text() queries take it if their path selects it. */
  #endText(): void {
    const data = this.#pendingText;
    if (data === null) return;
    this.#pendingText = null;
    const parent = this.#stack[this.#stack.length - 1]!;
    for (const { query, last, child } of this.#textQueries) {
      const slot = this.#slots[query]!;
      const selected = child ? parent.masks[slot]! : parent.aboves[slot]! | parent.masks[slot]!;
      if (selected & last) this.#add(query, textDataValue(data, this.#cap));
    }
  }
}
