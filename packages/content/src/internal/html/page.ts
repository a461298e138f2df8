import type { Document, Element } from 'domhandler';
import { parseHtml } from './parse.ts';

/** A parsed page with the elements later steps look up, gathered while it was parsed. */
export interface ParsedPage {
  root: Document;
  /** The first `<body>`; null when the page has none (its content is then under `root`). */
  body: Element | null;
  /** The first `<html>`. */
  htmlElement: Element | null;
  /** The href of the first `<base href>`. */
  baseHref: string | undefined;
  /** `<a href>` and `<area href>`, in document order. */
  anchors: Element[];
  metas: Element[];
  /** `<link>` elements. */
  linkElements: Element[];
  /** The first `<title>` outside SVG and MathML. */
  title: Element | null;
  /** `<script type="application/ld+json">`. */
  jsonLd: Element[];
  h1s: Element[];
  /** `<main>` and `[role=main]`. */
  mains: Element[];
  /** Elements with `itemprop` datePublished or dateModified (microdata). */
  dated: Element[];
}

/** Parses a page (see parseHtml) and gathers its ParsedPage lists on the way. */
export function parsePage(html: string): ParsedPage {
  const page: Omit<ParsedPage, 'root'> = {
    body: null,
    htmlElement: null,
    baseHref: undefined,
    anchors: [],
    metas: [],
    linkElements: [],
    title: null,
    jsonLd: [],
    h1s: [],
    mains: [],
    dated: [],
  };
  const root = parseHtml(html, (element, foreign) => {
    const { attribs } = element;
    switch (element.name) {
      case 'a':
      case 'area':
        if (attribs.href !== undefined) page.anchors.push(element);
        break;
      case 'meta':
        page.metas.push(element);
        break;
      case 'link':
        page.linkElements.push(element);
        break;
      case 'title':
        if (!foreign && page.title === null) page.title = element;
        break;
      case 'script':
        if (attribs.type?.trim().toLowerCase() === 'application/ld+json') page.jsonLd.push(element);
        break;
      case 'base':
        if (page.baseHref === undefined && attribs.href !== undefined) page.baseHref = attribs.href;
        break;
      case 'body':
        page.body ??= element;
        break;
      case 'html':
        page.htmlElement ??= element;
        break;
      case 'h1':
        page.h1s.push(element);
        break;
      case 'main':
        page.mains.push(element);
        break;
    }
    if (
      attribs.role !== undefined &&
      element.name !== 'main' &&
      attribs.role.trim().toLowerCase() === 'main'
    ) {
      page.mains.push(element);
    }
    const itemprop = attribs.itemprop;
    if (itemprop === 'datePublished' || itemprop === 'dateModified') page.dated.push(element);
  });
  return { root, ...page };
}
