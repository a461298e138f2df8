import { pageAttributes, pageImages } from './picks.ts';

const PAGE = `<!doctype html><html><head><base href="https://shop.test/catalog/">
<meta property="og:image" content="/og.png"></head><body>
<img src="a.png" alt="A"><img src="https://cdn.test/b.jpg" srcset="b-1x.jpg 1x, b-2x.jpg 2x">
<picture><source srcset="c.webp"><img src="a.png"></picture><img src="javascript:alert(1)"><img src="data:image/png;base64,AA==">
<a class="ref" href="/x" data-id="1">x</a><a class="ref" data-id="2">y</a><p class="ref">z</p></body></html>`;

describe('pageImages', () => {
  it('lists og:image, img src and srcset, and source srcset resolved against the base, each once', () => {
    expect(pageImages(PAGE, 'https://shop.test/page')).toEqual([
      'https://shop.test/og.png',
      'https://shop.test/catalog/a.png',
      'https://cdn.test/b.jpg',
      'https://shop.test/catalog/b-1x.jpg',
      'https://shop.test/catalog/b-2x.jpg',
      'https://shop.test/catalog/c.webp',
    ]);
  });
});

describe('pageAttributes', () => {
  it("gives each selector's attribute values in document order, skipping elements without it", () => {
    expect(
      pageAttributes(PAGE, [
        { selector: 'a.ref', attribute: 'data-id' },
        { selector: '.ref', attribute: 'href' },
        { selector: 'table', attribute: 'id' },
      ]),
    ).toEqual([
      { selector: 'a.ref', attribute: 'data-id', values: ['1', '2'] },
      { selector: '.ref', attribute: 'href', values: ['/x'] },
      { selector: 'table', attribute: 'id', values: [] },
    ]);
  });
});
