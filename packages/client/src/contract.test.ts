// The client follows the API's contract: every endpoint the API documents has a client method,
// with the schemas the API documents for it (testing/endpoints.ts), and the type-check fails when
// a schema changes and the client's types do not follow.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { z } from 'zod';
import { ENDPOINTS } from './testing/endpoints.ts';
import { type Stack, startStack } from './testing/stack.ts';

const ROOT = new URL('../../../', import.meta.url).pathname;

interface Operation {
  parameters: { name: string; in: string }[];
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
}

const jsonSchema = (schema: z.ZodType, io: 'input' | 'output') =>
  z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' });

describe('the OpenAPI document the API serves', () => {
  let stack: Stack;
  let paths: Record<string, Record<string, Operation>>;

  beforeAll(async () => {
    stack = await startStack();
    paths = ((await (await fetch(`${stack.baseUrl}/openapi.json`)).json()) as { paths: typeof paths }).paths;
  });
  afterAll(() => stack?.stop());

  it('lists exactly the endpoints the client calls', () => {
    const served = Object.entries(paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(served.sort()).toEqual(Object.keys(ENDPOINTS).sort());
  });

  it.each(Object.entries(ENDPOINTS))(
    '%s: answers, takes and is queried with the schemas the client is typed from',
    (name, endpoint) => {
      const [method, path] = name.split(' ') as [string, string];
      const op = paths[path]![method.toLowerCase()]!;
      const answer = op.responses[String(endpoint.status)];
      expect(answer).toBeDefined();
      const documented = answer!.content?.['application/json']?.schema;
      expect(documented).toEqual(endpoint.response && jsonSchema(endpoint.response, 'output'));
      expect(op.requestBody?.content['application/json']?.schema).toEqual(
        endpoint.body && jsonSchema(endpoint.body, 'input'),
      );
      const queryNames = op.parameters.filter((p) => p.in === 'query').map((p) => p.name);
      const properties =
        endpoint.query && (jsonSchema(endpoint.query, 'input') as { properties: object }).properties;
      expect(queryNames).toEqual(Object.keys(properties ?? {}));
    },
  );
});

describe('the type-check', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'scrapejobs-types-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('passes for the client as it is, and fails wherever a schema changes without the client following', async () => {
    // Relative specifiers, so that TypeScript treats them as the repository's own files.
    const from = (path: string) => JSON.stringify(relative(dir, join(ROOT, path)));
    // Each line marked DRIFT stands for a contract change the client's types do not follow.
    const drift = `import { changeListSchema, createJobSchema, documentListSchema, downloadQuerySchema, jobDetailSchema, listDocumentsQuerySchema, runSchema, webhookSchema } from ${from('packages/contracts/src/index.ts')};
import type { ScrapeJobs } from ${from('packages/client/src/index.ts')};
import { body, query, responds } from ${from('packages/client/src/testing/endpoints.ts')};
const client = undefined as unknown as ScrapeJobs;
const [recordChange] = changeListSchema.shape.changes.element.options;
const documentSchema = documentListSchema.shape.documents.element;
responds(200, jobDetailSchema, () => client.jobs.get);
responds(200, documentListSchema, () => client.runs.documents);
query(listDocumentsQuerySchema, () => client.runs.documents, 2);
query(downloadQuerySchema, () => client.results.open, 1);
responds(200, jobDetailSchema.omit({ mode: true }), () => client.jobs.get); // DRIFT: a field removed
responds(200, jobDetailSchema.extend({ archived: jobDetailSchema.shape.name }), () => client.jobs.get); // DRIFT: a field added
responds(200, webhookSchema.extend({ active: webhookSchema.shape.url }), () => client.webhooks.get); // DRIFT: a type changed
responds(200, runSchema.partial(), () => client.runs.get); // DRIFT: fields made optional
body(createJobSchema.extend({ priority: jobDetailSchema.shape.rate_limit }), () => client.jobs.create, 0); // DRIFT: a body field added
responds(200, changeListSchema.extend({ changes: recordChange.array() }), () => client.runs.changes); // DRIFT: a union narrowed
responds(200, documentListSchema.extend({ documents: documentSchema.omit({ truncated: true }).array() }), () => client.runs.documents); // DRIFT: a nested field removed
query(listDocumentsQuerySchema.extend({ format: listDocumentsQuerySchema.shape.url }), () => client.runs.documents, 2); // DRIFT: a query field added
query(downloadQuerySchema.omit({ content: true }), () => client.results.open, 1); // DRIFT: a query field removed
`;
    await writeFile(join(dir, 'drift.ts'), drift);
    await writeFile(join(dir, 'package.json'), '{"type": "module"}');
    await writeFile(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        extends: join(ROOT, 'tsconfig.json'),
        compilerOptions: { typeRoots: [join(ROOT, 'node_modules/@types')], types: ['node'] },
        include: [],
        files: [join(dir, 'drift.ts'), join(ROOT, 'packages/client/src/testing/endpoints.ts')],
      }),
    );
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    const ran = await promisify(execFile)(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')]).catch(
      (err: { code: number; stdout: string }) => err,
    );
    const errorLines = [...ran.stdout.matchAll(/^(.+?)\((\d+),\d+\): error TS\d+/gm)].map(
      ([, file, line]) => `${file!.endsWith('drift.ts') ? 'drift.ts' : file}:${line}`,
    );
    const driftLines = drift
      .split('\n')
      .flatMap((text, i) => (text.includes('// DRIFT') ? [`drift.ts:${i + 1}`] : []));
    expect(errorLines).toEqual(driftLines);
  }, 30_000);
});
