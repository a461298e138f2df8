import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the stand-in received: the request body, its response format, and the fenced page. */
export interface ChatRequest {
  body: {
    model: string;
    messages: { role: string; content: string }[];
    response_format?: { type: string; json_schema?: { schema?: Record<string, unknown> } };
    tools?: unknown;
  };
  /** `json_schema`, `json_object`, or `prompt` (no response format). */
  mode: 'json_schema' | 'json_object' | 'prompt';
  /** The schema: the response format's, or the one a system message carries. */
  schema: Record<string, unknown> | null;
  /** The page between the markers of the last user message that has one. */
  page: string;
  /** A summary is asked for (the system message says so). */
  summary: boolean;
  /** A repair: the conversation already holds an answer. */
  repair: boolean;
}

/** How the stand-in answers: content (with usage), or an HTTP error, after `delayMs`. */
export type ChatReply =
  | { content: string; tokens?: number; delayMs?: number }
  | { status: number; body?: unknown; headers?: Record<string, string>; delayMs?: number };

export type ChatHandler = (request: ChatRequest, nth: number) => ChatReply;

const PAGE = /<<<PAGE\n([\s\S]*)\nPAGE>>>/;

function readRequest(body: ChatRequest['body']): ChatRequest {
  const format = body.response_format?.type;
  const system = body.messages.find((m) => m.role === 'system')?.content ?? '';
  const inPrompt = /match this JSON Schema:\n([\s\S]*)$/.exec(system)?.[1];
  const page =
    [...body.messages]
      .reverse()
      .map((m) => PAGE.exec(m.content)?.[1])
      .find((p) => p !== undefined) ?? '';
  return {
    body,
    mode: format === 'json_schema' ? 'json_schema' : format === 'json_object' ? 'json_object' : 'prompt',
    schema: body.response_format?.json_schema?.schema ?? (inPrompt ? JSON.parse(inPrompt) : null),
    page,
    summary: /summarise/.test(system),
    repair: body.messages.some((m) => m.role === 'assistant'),
  };
}

/**
 * What a careful model would answer for a page: for each property of the schema, the text after
 * `<name>:` on the page (a number when the schema says so), else null; a summary is the page's
 * first sentence. Pages written for tests state their fields that way.
 */
export function readPage(request: ChatRequest): string {
  const text = request.page.replace(/[*_#>`]/g, '');
  if (request.summary) return `Summary: ${(/[^.!?]+[.!?]/.exec(text)?.[0] ?? text).trim()}`;
  const properties = (request.schema?.properties ?? { title: { type: 'string' } }) as Record<
    string,
    { type?: string }
  >;
  const out: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(properties)) {
    const value = new RegExp(`${name}:\\s*([^\\n]+)`, 'i').exec(text)?.[1]?.trim() ?? null;
    out[name] = value !== null && (spec.type === 'number' || spec.type === 'integer') ? Number(value) : value;
  }
  return JSON.stringify(out);
}

/** The default handler: answers as readPage, with a usage of 100 tokens a call. */
export const carefulModel: ChatHandler = (request) => ({ content: readPage(request), tokens: 100 });

/**
 * A local stand-in for an OpenAI-compatible chat-completions server (the outside world the
 * service calls): `POST /v1/chat/completions` answers as `handler` says; every request is kept.
 */
export async function startChatServer(handler: ChatHandler = carefulModel) {
  const requests: ChatRequest[] = [];
  const delayed = new Set<NodeJS.Timeout>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
        res.writeHead(404, { 'Content-Type': 'application/json' }).end('{"error":{"message":"not found"}}');
        return;
      }
      const request = readRequest(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      requests.push(request);
      const reply = handler(request, requests.length - 1);
      const send = () => {
        if (res.destroyed) return;
        if ('status' in reply) {
          res
            .writeHead(reply.status, { 'Content-Type': 'application/json', ...reply.headers })
            .end(JSON.stringify(reply.body ?? { error: { message: `error ${reply.status}` } }));
          return;
        }
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(
          JSON.stringify({
            id: `chatcmpl-${requests.length}`,
            object: 'chat.completion',
            created: Math.floor(Date.now() / 1000),
            model: request.body.model,
            choices: [
              { index: 0, message: { role: 'assistant', content: reply.content }, finish_reason: 'stop' },
            ],
            ...(reply.tokens !== undefined && {
              usage: { prompt_tokens: reply.tokens - 10, completion_tokens: 10, total_tokens: reply.tokens },
            }),
          }),
        );
      };
      if (!reply.delayMs) return send();
      const timer = setTimeout(() => {
        delayed.delete(timer);
        send();
      }, reply.delayMs);
      delayed.add(timer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of delayed) clearTimeout(timer);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export type ChatServer = Awaited<ReturnType<typeof startChatServer>>;
