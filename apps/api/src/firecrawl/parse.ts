import { AppError, type UsageService } from '@scrapejobs/domain';
import { fileKind, type ParseRequest, parseParseOptions } from '@scrapejobs/firecrawl';
import { NO_MODEL_MESSAGE } from '@scrapejobs/llm';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { principalOf, requireScope } from '../http/auth.ts';
import { MAX_BODY_BYTES } from '../http/body.ts';
import { readForm } from '../http/multipart.ts';
import { type FileParser, ParseTimeout } from './file-parser.ts';

export interface ParseDeps {
  files: FileParser;
  /** PARSE_MAX_BYTES: an uploaded file's bytes at most. */
  maxBytes: number;
  usage: UsageService;
  /** Resolves the API key and counts the request against the rate limit. */
  auth: readonly RequestHandler[];
  /** Whether the operator named a language model (docs/api.md §24). */
  model: boolean;
}

/** A file's name is shown in its metadata: longer ones are cut. */
const MAX_NAME_CHARS = 255;

const PARSE_MODEL_MESSAGE =
  'is not written for parsed files by this service: scrape the file from a URL for the language model’s formats';

const invalidAt = (field: string, message: string) =>
  new AppError(400, `The request is invalid: ${field}: ${message}.`, { details: { [field]: message } });

/** The form's `options` part as text (a string part, or a small file part); undefined without one. */
async function optionsText(form: FormData): Promise<string | undefined> {
  const part = form.get('options');
  if (part === null) return undefined;
  // As much as a JSON body may have.
  if ((typeof part === 'string' ? Buffer.byteLength(part) : part.size) > MAX_BODY_BYTES)
    throw invalidAt('options', `must have at most ${MAX_BODY_BYTES} bytes`);
  return typeof part === 'string' ? part : part.text();
}

/** The form's `file` part: a file part with bytes, at most `maxBytes` of them. */
function filePart(form: FormData, maxBytes: number): File {
  const part = form.get('file');
  if (part === null) throw invalidAt('file', 'is required: the file to parse, as the form part named file');
  if (typeof part === 'string')
    throw invalidAt('file', 'must be a file part (with a filename), not a text field');
  if (part.size === 0) throw invalidAt('file', 'is empty');
  if (part.size > maxBytes)
    throw new AppError(413, `The file has ${part.size} bytes, more than the limit of ${maxBytes}.`);
  return part;
}

/** Formats the language model writes: a 400 at each (without a model, the message of docs/api.md §24). */
function refuseModelFormats(request: ParseRequest, model: boolean): void {
  if (request.modelFormatsAt.length === 0) return;
  const message = model ? PARSE_MODEL_MESSAGE : NO_MODEL_MESSAGE;
  const paths = request.modelFormatsAt.map((at) => `options.formats[${at}]`);
  throw new AppError(400, `The request is invalid: ${paths[0]}: ${message}.`, {
    details: Object.fromEntries(paths.map((path) => [path, message])),
  });
}

/**
 * POST /v2/parse (docs/api.md §18): an uploaded HTML or PDF file as a Firecrawl document, made by
 * the fleet's converters on the API's parse threads. Nothing is stored; the parse counts as one
 * page of the account's month (/team/credit-usage).
 */
export function parseRoute(deps: ParseDeps): RequestHandler[] {
  const handle = async (req: Request, res: Response, next: NextFunction) => {
    // The router answers /v1 and /v2: Firecrawl's parse is v2 only.
    if (req.baseUrl !== '/v2') return next();
    const principal = principalOf(req);
    const form = await readForm(req, res, deps.maxBytes);
    const parsed = parseParseOptions(await optionsText(form));
    if (!parsed.ok) throw new AppError(400, parsed.message, { details: parsed.details });
    const request = parsed.value;
    refuseModelFormats(request, deps.model);
    const part = filePart(form, deps.maxBytes);
    const bytes = new Uint8Array(await part.arrayBuffer());
    const name = part.name.slice(0, MAX_NAME_CHARS);
    const kind = fileKind({ name, type: part.type, bytes });
    if (typeof kind === 'object')
      throw kind.status === 415
        ? new AppError(415, `The file cannot be parsed: ${kind.message}.`)
        : invalidAt('file', kind.message);
    const warnings = [...request.warnings];
    if (request.timeout > deps.files.timeLimitMs)
      warnings.push(
        `the file is parsed within ${deps.files.timeLimitMs} ms, this service's limit, not ${request.timeout}`,
      );
    try {
      const document = await deps.files.parse(
        principal.userId,
        { kind, bytes, file: { name, type: part.type }, options: request },
        request.timeout,
      );
      await deps.usage.count(principal.userId);
      const warning = [...warnings, ...(document.warning ? [document.warning] : [])].join('; ');
      res.json({ success: true, data: warning ? { ...document, warning } : document });
    } catch (err) {
      if (!(err instanceof ParseTimeout)) throw err;
      res.status(408).json({ success: false, code: 'SCRAPE_TIMEOUT', error: err.message });
    }
  };
  return [...deps.auth, requireScope('jobs:write'), handle];
}
