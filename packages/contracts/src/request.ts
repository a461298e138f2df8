import { z } from 'zod';

/** What a secret of a job's `request` reads as in every answer (docs/api.md §14); sent back on PUT, it keeps the stored value. */
export const SECRET_MASK = '********';

const MAX_HEADERS = 50;
/** RFC 9110 token: the characters a header (or cookie) name may have. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Headers the service sets itself, or that have a field of their own (`cookies`, `basic_auth`). */
const REFUSED = new Set([
  'host',
  'content-length',
  'connection',
  'transfer-encoding',
  'cookie',
  'authorization',
]);

const noLineBreak = (s: string) => !/[\r\n]/.test(s);
const LINE_BREAK = 'must not contain CR or LF';
/** What HTTP can carry in a field value (RFC 9110 field-vchar, obs-text, spaces and tabs). */
const fieldText = (s: string) => /^[\t\x20-\x7e\x80-\xff]*$/.test(s);
const FIELD_TEXT = 'must hold only printable ASCII or Latin-1 characters, spaces and tabs (RFC 9110)';

const headerValue = z.string().max(4096).refine(noLineBreak, LINE_BREAK).refine(fieldText, FIELD_TEXT);

// A record schema skips a `__proto__` key without a word: refused here, at its path, instead.
const headersSchema = z.preprocess(
  (headers, ctx) => {
    if (typeof headers === 'object' && headers !== null && Object.hasOwn(headers, '__proto__'))
      ctx.addIssue({ code: 'custom', path: ['__proto__'], message: 'is not accepted as a header name' });
    return headers;
  },
  z.record(z.string(), headerValue).superRefine((headers, ctx) => {
    const names = Object.keys(headers);
    if (names.length > MAX_HEADERS)
      ctx.addIssue({ code: 'custom', message: `must have at most ${MAX_HEADERS} headers` });
    const seen = new Set<string>();
    for (const name of names) {
      const lower = name.toLowerCase();
      let message: string | null = null;
      if (!TOKEN.test(name)) message = 'is not a valid header name (RFC 9110 token)';
      else if (REFUSED.has(lower) || lower.startsWith('proxy-'))
        message =
          lower === 'authorization'
            ? 'may not be set here: use basic_auth or authorization'
            : lower === 'cookie'
              ? 'may not be set here: use cookies'
              : 'may not be set: the service sets it';
      else if (seen.has(lower)) message = 'is given twice (names are case-insensitive)';
      seen.add(lower);
      if (message) ctx.addIssue({ code: 'custom', path: [name], message });
    }
  }),
);

const cookieSchema = z.strictObject({
  name: z.string().min(1).max(256).regex(TOKEN, 'must be a cookie name (RFC 6265 token)'),
  value: z
    .string()
    .max(4096)
    .refine((s) => !/[\r\n;]/.test(s), 'must not contain CR, LF or ;')
    .refine(fieldText, FIELD_TEXT),
  domain: z
    .string()
    .min(1)
    .max(253)
    .regex(/^\.?[A-Za-z0-9.-]+$/, 'must be a host name')
    .transform((d) => d.replace(/^\./, '').toLowerCase())
    .nullable()
    .default(null)
    .describe("default: the source's host"),
  path: z.string().max(1024).startsWith('/', 'must start with /').default('/'),
});

/** The `request` job field (docs/api.md §14): what every fetch and render of the job sends. */
export const requestSchema = z
  .strictObject({
    headers: headersSchema.default({}),
    cookies: z.array(cookieSchema).max(100).default([]),
    basic_auth: z
      .strictObject({
        username: z
          .string()
          .max(256)
          .refine((s) => !/[\r\n:]/.test(s), 'must not contain CR, LF or :'),
        password: z.string().max(1024).refine(noLineBreak, LINE_BREAK),
      })
      .nullable()
      .default(null),
    user_agent: z
      .string()
      .min(1)
      .max(512)
      .refine(noLineBreak, LINE_BREAK)
      .refine(fieldText, FIELD_TEXT)
      .nullable()
      .default(null),
    authorization: z
      .string()
      .min(1)
      .max(4096)
      .refine(noLineBreak, LINE_BREAK)
      .refine(fieldText, FIELD_TEXT)
      .nullable()
      .default(null)
      .describe(
        "the whole Authorization header value, any scheme (`Bearer …`), sent only to the source's origins; a secret",
      ),
    skip_tls_verification: z
      .boolean()
      .default(false)
      .describe(
        "accept an https site's certificate without checking it (expired, self-signed, another name's)",
      ),
  })
  .superRefine((request, ctx) => {
    if (request.basic_auth !== null && request.authorization !== null)
      ctx.addIssue({
        code: 'custom',
        path: ['authorization'],
        message: 'give either basic_auth or authorization: both are the Authorization header',
      });
  });

export type RequestSettings = z.output<typeof requestSchema>;
export type RequestCookie = RequestSettings['cookies'][number];

const selector = z.string().min(1).max(1000);

/** One step of `render_config.actions` (docs/api.md §14), run in order before extraction. */
const ACTION_TYPES = ['click', 'type', 'press', 'wait_for', 'wait', 'scroll', 'execute_javascript'];

/** The longest script an execute_javascript step runs. */
const MAX_SCRIPT_CHARS = 50_000;

export const renderActionSchema = z.discriminatedUnion(
  'type',
  [
    z.strictObject({
      type: z.literal('click'),
      selector,
      all: z.boolean().optional().describe('click every element the selector matches (default: the first)'),
    }),
    z.strictObject({ type: z.literal('type'), selector, text: z.string().max(10_000) }),
    z.strictObject({ type: z.literal('press'), key: z.string().min(1).max(50) }),
    z.strictObject({
      type: z.literal('wait_for'),
      selector,
      timeout_ms: z.int().min(0).max(30_000).default(10_000),
    }),
    z.strictObject({ type: z.literal('wait'), ms: z.int().min(0).max(10_000) }),
    z.strictObject({
      type: z.literal('scroll'),
      to: z.enum(['bottom', 'top']),
      times: z.int().min(1).max(50).default(1),
      selector: selector.optional().describe('scroll this element instead of the page'),
    }),
    z.strictObject({
      type: z.literal('execute_javascript'),
      script: z
        .string()
        .min(1)
        .max(MAX_SCRIPT_CHARS)
        .describe("run in the page; its value (JSON, at most 64 KiB) is kept with the page's document"),
    }),
  ],
  { error: `must be one of ${ACTION_TYPES.join(', ')}` },
);

export type RenderAction = z.output<typeof renderActionSchema>;
