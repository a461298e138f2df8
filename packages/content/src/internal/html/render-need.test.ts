import { describe, expect, it } from '@jest/globals';
import { LITTLE_TEXT_CHARS, plainPageSignals } from './render-need.ts';

const article = (words: number) =>
  `<article><h1>A headline</h1><p>${Array.from({ length: words }, (_, i) => `word${i}`).join(' ')}</p></article>`;
const page = (body: string, head = '') =>
  `<!doctype html><html><head><title>Shop</title>${head}</head><body>${body}</body></html>`;
const bundle = '<script src="/app.js"></script>';
const chrome = `<header><nav>${'<a href="/x">Products and services</a>'.repeat(20)}</nav></header>`;

describe('plainPageSignals', () => {
  it('never renders a page without scripts, however empty', () => {
    expect(plainPageSignals(page('<div id="root"></div>')).signal).toBeNull();
    expect(plainPageSignals(page('')).signal).toBeNull();
  });

  it('does not render an article that runs scripts (analytics, widgets)', () => {
    const signals = plainPageSignals(page(`${chrome}${article(80)}${bundle}<script>track()</script>`));
    expect(signals).toMatchObject({ scripts: true, signal: null });
    expect(signals.mainTextChars).toBeGreaterThan(LITTLE_TEXT_CHARS);
  });

  it('renders an empty application root: app_root, whatever text is around it', () => {
    for (const id of ['root', 'app', '__next', '__nuxt']) {
      expect(
        plainPageSignals(page(`${article(80)}<div id="${id}"> <!-- mounted --> </div>${bundle}`)).signal,
      ).toBe('app_root');
    }
  });

  it('does not count an application root that was rendered on the server as empty', () => {
    expect(plainPageSignals(page(`<div id="root">${article(80)}</div>${bundle}`)).signal).toBeNull();
  });

  it('renders a page whose noscript asks for JavaScript and that has little text: noscript', () => {
    const html = page(
      `${chrome}<noscript><p>You need to enable JavaScript to run this app.</p></noscript><div class="shell"></div>${bundle}`,
    );
    expect(plainPageSignals(html)).toMatchObject({ signal: 'noscript', mainTextChars: 0 });
  });

  it('keeps an article whose noscript merely asks for JavaScript (a tracking pixel, a comment box)', () => {
    const html = page(
      `${article(80)}<noscript>Please enable JavaScript to view the comments.</noscript>${bundle}`,
    );
    expect(plainPageSignals(html).signal).toBeNull();
  });

  it('renders a page whose data is only in inline state: inline_state', () => {
    const data = JSON.stringify({
      products: Array.from({ length: 20 }, (_, i) => ({ name: `Item ${i}`, price: i })),
    });
    expect(
      plainPageSignals(page(`<main class="grid"></main><script>window.__STATE__ = ${data};</script>`)).signal,
    ).toBe('inline_state');
    expect(
      plainPageSignals(
        page(`<main></main><script id="__NEXT_DATA__" type="application/json">${data}</script>${bundle}`),
      ).signal,
    ).toBe('inline_state');
  });

  it('does not render a server-rendered page that also ships its state', () => {
    const data = JSON.stringify({ text: 'x'.repeat(500) });
    const html = page(
      `${article(80)}<script id="__NEXT_DATA__" type="application/json">${data}</script>${bundle}`,
    );
    expect(plainPageSignals(html).signal).toBeNull();
  });

  it('renders a script page with little text of its own (chrome not counted): little_text', () => {
    expect(plainPageSignals(page(`${chrome}<main><p>Loading…</p></main>${bundle}`)).signal).toBe(
      'little_text',
    );
  });

  it('does not take small inline settings or JSON-LD for page state', () => {
    const html = page(
      `<main><p>Loading…</p></main><script>window.__CONFIG__ = {"a":1}</script><script type="application/ld+json">${JSON.stringify({ name: 'x'.repeat(400) })}</script>${bundle}`,
    );
    expect(plainPageSignals(html).signal).toBe('little_text');
  });

  it('does not count JSON data scripts as scripts', () => {
    const html = page(`<div id="root"></div><script type="application/ld+json">{"@type":"Thing"}</script>`);
    expect(plainPageSignals(html)).toMatchObject({ scripts: false, signal: null });
  });
});
