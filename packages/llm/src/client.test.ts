import { afterEach, describe, expect, it } from '@jest/globals';
import {
  type ChatHandler,
  carefulModel,
  readPage,
  startChatServer,
} from '../../../test/support/chat-server.ts';
import {
  ChatModel,
  compileExtractSchema,
  cutToTokens,
  MAX_SUMMARY_CHARS,
  type ModelSettings,
  modelSettings,
  parseObject,
} from './index.ts';

const PAGE = 'Title: Blue kettle\nPrice: 25\nA kettle that boils water. It is blue.';
const SCHEMA = {
  type: 'object',
  properties: { title: { type: 'string' }, price: { type: 'number' } },
  required: ['title', 'price'],
};
const schema = compileExtractSchema(SCHEMA);
const check = async (value: Record<string, unknown>) => schema.check(value);

const servers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function modelWith(handler: ChatHandler, settings: Partial<ModelSettings> = {}) {
  const server = await startChatServer(handler);
  servers.push(server);
  const base = modelSettings({
    OPENAI_BASE_URL: server.baseUrl,
    OPENAI_API_KEY: undefined,
    MODEL_NAME: 'stand-in',
    LLM_TIMEOUT_MS: 10_000,
    LLM_MAX_INPUT_TOKENS: 1000,
    LLM_MAX_OUTPUT_TOKENS: 500,
    LLM_TOKENS_PER_DAY: 0,
    LLM_CONCURRENCY_PER_USER: 2,
  })!;
  return { server, model: new ChatModel({ ...base, ...settings }) };
}

const extract = (model: ChatModel) => model.extract({ markdown: PAGE, schema: SCHEMA, prompt: null, check });

describe('ChatModel.extract', () => {
  it('asks with the schema as response format, gives the model no tools, and returns the parsed object', async () => {
    const { server, model } = await modelWith(carefulModel);
    const result = await extract(model);
    expect(result).toEqual({
      ok: true,
      value: { title: 'Blue kettle', price: 25 },
      usage: { calls: 1, tokens: 100 },
    });
    expect(server.requests).toHaveLength(1);
    const [request] = server.requests;
    expect(request!.mode).toBe('json_schema');
    expect(request!.body.tools).toBeUndefined();
    expect(request!.body.model).toBe('stand-in');
    expect(request!.page).toBe(PAGE);
  });

  it('repairs an answer that is not JSON once, asking again with what was wrong', async () => {
    const { server, model } = await modelWith((request, nth) =>
      nth === 0
        ? { content: 'Sure! The kettle is blue.', tokens: 50 }
        : { content: readPage(request), tokens: 60 },
    );
    const result = await extract(model);
    expect(result).toMatchObject({
      ok: true,
      value: { title: 'Blue kettle', price: 25 },
      usage: { calls: 2, tokens: 110 },
    });
    const repair = server.requests[1]!;
    expect(repair.repair).toBe(true);
    expect(repair.body.messages.at(-1)!.content).toMatch(/not a JSON object/);
  });

  it('names the fields that break the schema in the repair request', async () => {
    const { server, model } = await modelWith((request, nth) =>
      nth === 0 ? { content: '{"title": "Blue kettle"}' } : { content: readPage(request) },
    );
    const result = await extract(model);
    expect(result.ok).toBe(true);
    expect(server.requests[1]!.body.messages.at(-1)!.content).toMatch(/must have required property 'price'/);
  });

  it('gives up after one repair with LLM_INVALID_ANSWER saying why', async () => {
    const { server, model } = await modelWith(() => ({ content: '{"title": 42}' }));
    const result = await extract(model);
    expect(result).toMatchObject({ ok: false, code: 'LLM_INVALID_ANSWER', usage: { calls: 2 } });
    if (!result.ok) expect(result.message).toMatch(/\/title must be string/);
    expect(server.requests).toHaveLength(2);
  });

  it('falls back to a JSON object with the schema in the prompt when the server refuses json_schema, and remembers it', async () => {
    const { server, model } = await modelWith((request) =>
      request.mode === 'json_schema'
        ? {
            status: 400,
            body: { error: { message: "'response_format.type' must be 'json_object' or 'text'" } },
          }
        : carefulModel(request, 0),
    );
    expect(await extract(model)).toMatchObject({ ok: true, value: { title: 'Blue kettle', price: 25 } });
    expect(server.requests.map((r) => r.mode)).toEqual(['json_schema', 'json_object']);
    expect(server.requests[1]!.schema).toEqual(SCHEMA);
    expect(await extract(model)).toMatchObject({ ok: true, usage: { calls: 1 } });
    expect(server.requests.map((r) => r.mode)).toEqual(['json_schema', 'json_object', 'json_object']);
  });

  it('gets the object from a server that ignores json_schema by asking in the prompt, then asks that way first', async () => {
    // Like servers that drop an unknown response format: prose around the object, fields missing.
    const { server, model } = await modelWith((request) =>
      request.mode === 'json_schema'
        ? { content: 'Here is what I found: {"name": "kettle"}' }
        : carefulModel(request, 0),
    );
    expect(await extract(model)).toMatchObject({ ok: true, value: { title: 'Blue kettle', price: 25 } });
    expect(server.requests.map((r) => r.mode)).toEqual(['json_schema', 'json_object']);
    await extract(model);
    expect(server.requests.at(-1)!.mode).toBe('json_object');
  });

  it('asks a prompt-only extraction for a JSON object', async () => {
    const { server, model } = await modelWith(() => ({ content: '```json\n{"colour": "blue"}\n```' }));
    const result = await model.extract({
      markdown: PAGE,
      schema: null,
      prompt: 'the colour',
      check: async () => null,
    });
    expect(result).toMatchObject({ ok: true, value: { colour: 'blue' } });
    expect(server.requests[0]!.mode).toBe('json_object');
    expect(server.requests[0]!.body.messages[1]!.content).toMatch(/^Request: the colour/);
  });

  it('is LLM_UNAVAILABLE when the server does not answer within LLM_TIMEOUT_MS', async () => {
    const { model } = await modelWith(() => ({ content: '{}', delayMs: 5_000 }), { timeoutMs: 300 });
    const result = await extract(model);
    expect(result).toMatchObject({ ok: false, code: 'LLM_UNAVAILABLE' });
    if (!result.ok) expect(result.message).toMatch(/did not answer within 300 ms \(LLM_TIMEOUT_MS\)/);
  });

  it('waits as a 429 says and tries again', async () => {
    const { server, model } = await modelWith((request, nth) =>
      nth === 0 ? { status: 429, headers: { 'retry-after-ms': '20' } } : carefulModel(request, nth),
    );
    expect(await extract(model)).toMatchObject({ ok: true, value: { price: 25 } });
    expect(server.requests).toHaveLength(2);
  });

  it('is LLM_UNAVAILABLE when the server keeps answering 429', async () => {
    const { server, model } = await modelWith(() => ({ status: 429, headers: { 'retry-after-ms': '10' } }));
    const result = await extract(model);
    expect(result).toMatchObject({ ok: false, code: 'LLM_UNAVAILABLE' });
    if (!result.ok) expect(result.message).toMatch(/429/);
    expect(server.requests).toHaveLength(3);
  });

  it('estimates the tokens of a server that reports no usage', async () => {
    const { model } = await modelWith((request) => ({ content: readPage(request) }));
    const result = await extract(model);
    expect(result.usage.tokens).toBeGreaterThan(PAGE.length / 4);
  });

  it('stops at once, without an answer, when the caller aborts', async () => {
    const { model } = await modelWith(() => ({ content: '{}', delayMs: 5_000 }));
    const controller = new AbortController();
    const pending = model.extract({
      markdown: PAGE,
      schema: SCHEMA,
      prompt: null,
      check,
      signal: controller.signal,
    });
    controller.abort(new Error('cancelled'));
    await expect(pending).rejects.toThrow('cancelled');
  });
});

describe('ChatModel.summarize', () => {
  it('answers the model text, cut to 2,000 characters at the end of a sentence', async () => {
    const long = `${'A sentence of the summary. '.repeat(100)}`;
    const { server, model } = await modelWith(() => ({ content: long }));
    const result = await model.summarize(PAGE);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value.length).toBeLessThanOrEqual(MAX_SUMMARY_CHARS);
    expect(result.value.endsWith('summary.')).toBe(true);
    expect(server.requests[0]!.summary).toBe(true);
    expect(server.requests[0]!.body.response_format).toBeUndefined();
  });
});

describe('compileExtractSchema', () => {
  it('names the top-level properties in their order and checks values', () => {
    const compiled = compileExtractSchema({
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { b: { type: 'integer' }, a: { type: 'string', pattern: '^x' } },
    });
    expect(compiled.fields).toEqual(['b', 'a']);
    expect(compiled.check({ b: 1, a: 'xy' })).toBeNull();
    expect(compiled.check({ b: 'one', a: 'y' })).toMatch(/\/b must be integer; \/a must match pattern/);
    expect(compiled.check([1])).toBe('the answer must be a JSON object');
  });

  it('reads 2020-12 schemas as zod and the Firecrawl SDK write them', () => {
    const compiled = compileExtractSchema({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { tags: { type: 'array', prefixItems: [{ type: 'string' }] } },
      additionalProperties: false,
    });
    expect(compiled.check({ tags: ['a'] })).toBeNull();
    expect(compiled.check({ tags: [1] })).toMatch(/\/tags\/0 must be string/);
  });

  it('refuses a schema that is not of an object, or that does not compile', () => {
    expect(() => compileExtractSchema({ type: 'array' })).toThrow(/must describe an object/);
    expect(() => compileExtractSchema({ type: 'object', properties: { a: { type: 'nope' } } })).toThrow(
      /is not a valid JSON Schema/,
    );
    expect(() => compileExtractSchema('x')).toThrow(/must be a JSON Schema object/);
  });
});

describe('parseObject and cutToTokens', () => {
  it('finds the object in fences and prose, and nothing in an array or text', () => {
    expect(parseObject('```json\n{"a": 1}\n```')).toEqual({ a: 1 });
    expect(parseObject('The answer is {"a": {"b": 2}} as asked.')).toEqual({ a: { b: 2 } });
    expect(parseObject('[1, 2]')).toBeNull();
    expect(parseObject('no')).toBeNull();
  });

  it('cuts text to a number of tokens and says so, keeping special-token text as text', () => {
    const text = 'word <|endoftext|> '.repeat(1000);
    const cut = cutToTokens(text, 100);
    expect(cut).toMatchObject({ tokens: 100, cut: true });
    expect(text.startsWith(cut.text)).toBe(true);
    expect(cutToTokens('short text', 100)).toEqual({ text: 'short text', tokens: 2, cut: false });
  });
});
