import { z } from 'zod';
import { issuesToDetails, MAX_DETAILS } from './issues.ts';
import { createJobSchema } from './jobs.ts';
import { createWebhookSchema } from './webhooks.ts';

const job = { name: 'n', source: 'https://example.com/', queries: [{ name: 'q', type: 'css', query: 'h1' }] };
const detailsOf = (schema: typeof createJobSchema | typeof createWebhookSchema, body: unknown) => {
  const parsed = schema.safeParse(body);
  if (parsed.success) throw new Error('expected a violation');
  // Through JSON, as a client sees them.
  return JSON.parse(JSON.stringify(issuesToDetails(parsed.error.issues))) as Record<string, string>;
};

describe('issuesToDetails', () => {
  it.each(['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'])(
    'reports a field named %s as an ordinary unknown field, at the top and nested',
    (name) => {
      // JSON.parse, as the body parser does: `__proto__` becomes an own key, not the prototype.
      const top = JSON.parse(JSON.stringify(job).replace('{', `{"${name}":1,`));
      expect(detailsOf(createJobSchema, top)).toEqual({ [name]: 'unknown field' });
      const nested = JSON.parse(
        JSON.stringify({ ...job, render_config: {} }).replace(
          '"render_config":{',
          `"render_config":{"${name}":1`,
        ),
      );
      expect(detailsOf(createJobSchema, nested)).toEqual({ [`render_config.${name}`]: 'unknown field' });
      expect(detailsOf(createWebhookSchema, JSON.parse(`{"${name}":1}`))).toEqual({
        [name]: 'unknown field',
        url: 'is required',
        events: 'is required',
        secret: 'is required',
      });
    },
  );
});

describe('the size of details', () => {
  it('names at most MAX_DETAILS paths however many fields are wrong', () => {
    const parsed = z.array(z.string()).safeParse(Array(5_000).fill(0));
    const details = issuesToDetails(parsed.error!.issues);
    expect(Object.keys(details)).toHaveLength(MAX_DETAILS);
    expect(details['[0]']).toBe('must be a string');
  });

  it('counts unknown keys against the same bound', () => {
    const wide = Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`k${i}`, 1]));
    const parsed = z.strictObject({}).safeParse(wide);
    expect(Object.keys(issuesToDetails(parsed.error!.issues))).toHaveLength(MAX_DETAILS);
  });
});
