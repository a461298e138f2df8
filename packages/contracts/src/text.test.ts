import { MAX_DETAILS } from './issues.ts';
import { unstorableText } from './text.ts';

describe('unstorableText', () => {
  it('finds nothing in storable values, emoji (paired surrogates) included', () => {
    expect(unstorableText({ a: ['x', 1, null, true, { b: 'emoji 😀 ünï' }] })).toEqual({});
    expect(unstorableText(undefined)).toEqual({});
    expect(unstorableText('plain')).toEqual({});
  });

  it('reports every NUL and lone surrogate at its field path, in document order', () => {
    const body = {
      name: 'a\0b',
      queries: [
        { name: 'ok', query: 'fine' },
        { name: 'x', query: '\ud800' },
      ],
      render_config: { deep: [['\udc00tail']] },
    };
    expect(Object.entries(unstorableText(body))).toEqual([
      ['name', 'must not contain NUL characters'],
      ['queries[1].query', 'must not contain unpaired surrogates'],
      ['render_config.deep[0][0]', 'must not contain unpaired surrogates'],
    ]);
  });

  it('reports a field name that cannot be stored at its own path', () => {
    const body = JSON.parse('{"a":{"b\\u0000c":"fine"},"__proto__":"x\\u0000"}');
    expect(Object.entries(unstorableText(body))).toEqual([
      ['a.b\0c', 'field name must not contain NUL characters'],
      ['__proto__', 'must not contain NUL characters'],
    ]);
  });

  it('reports a body that is itself an unstorable string at body', () => {
    expect(unstorableText('\0')).toEqual({ body: 'must not contain NUL characters' });
  });

  it('walks a deeply nested body without using the call stack', () => {
    const deep = JSON.parse(`${'['.repeat(200_000)}"\\u0000"${']'.repeat(200_000)}`);
    expect(Object.values(unstorableText(deep))).toEqual(['must not contain NUL characters']);
  });
});

describe('unstorableText on a hostile body', () => {
  it('stops at MAX_DETAILS paths, however deep and many the bad strings', () => {
    let body: unknown = [];
    for (let i = 0; i < 20_000; i++) body = ['\u0000', body];
    const details = unstorableText(body);
    expect(Object.keys(details)).toHaveLength(MAX_DETAILS);
    expect(details['[0]']).toBe('must not contain NUL characters');
  });
});
