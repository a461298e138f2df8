/**
 * The container and Kubernetes files, checked without a Docker engine or a cluster (none runs on
 * these machines, see NOTES.md):
 *
 * - docker-compose.yml against the Compose Specification schema, infra/k8s/kustomization.yaml
 *   against the kustomization schema (both vendored in test/infra/schemas, see its README), and
 *   every Kubernetes object against the Kubernetes OpenAPI schemas (kubernetes-models) or KEDA's
 *   CRD schemas (@kubernetes-models/keda). Those validators ignore unknown fields, which the API
 *   server's strict field validation rejects, so every field is also probed (`unknownFields`).
 * - The references between the files: Services, PDBs, autoscalers and KEDA triggers to the
 *   Deployments, ConfigMap and Secret references, probes to /health and /ready on the port the
 *   app listens on, settings accepted by the apps' own environment schemas, images to Dockerfile
 *   targets, and commands to files that exist. The scraper's KEDA query runs against a migrated
 *   test database (the only check here that needs PostgreSQL).
 * - The Dockerfile "buildable by construction": every COPY source exists and is not excluded by
 *   .dockerignore, every stage named by --from exists, the base is a Node 24 slim image, runtime
 *   stages run as a non-root user, and every `node <file>` command names a file the image holds.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type IScaledObject, ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import { TriggerAuthentication } from '@kubernetes-models/keda/keda.sh/v1alpha1/TriggerAuthentication';
import { parseConfig } from '@scrapejobs/config';
import { newId } from '@scrapejobs/db';
import { catalog } from '@scrapejobs/queues';
import { Ajv } from 'ajv';
import { Deployment, type IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import {
  HorizontalPodAutoscaler,
  type IHorizontalPodAutoscaler,
} from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { type IJob, Job } from 'kubernetes-models/batch/v1/Job';
import {
  type IPodDisruptionBudget,
  PodDisruptionBudget,
} from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap, type IConfigMap } from 'kubernetes-models/v1/ConfigMap';
import type { IContainer } from 'kubernetes-models/v1/Container';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import type { IProbe } from 'kubernetes-models/v1/Probe';
import { type ISecret, Secret } from 'kubernetes-models/v1/Secret';
import { type IService, Service } from 'kubernetes-models/v1/Service';
import { parseAllDocuments } from 'yaml';
import { apiEnvSchema } from '../../apps/api/src/config.ts';
import { DEFAULT_CHROMIUM_PATH, workerEnvSchema } from '../../apps/scraper-worker/src/config.ts';
import { webhookWorkerEnvSchema } from '../../apps/webhook-worker/src/config.ts';
import { createTestDatabase } from '../support/database.ts';
import { runningRun } from '../support/runs.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const repoPath = (rel: string) => posix.join(ROOT, rel);
const read = (rel: string) => readFileSync(repoPath(rel), 'utf8');

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
/** Fails with the label in the message when the condition does not hold. */
const holds = (label: string, condition: boolean) =>
  expect({ label, holds: condition }).toEqual({ label, holds: true });

/** Every document of a YAML file, as kubectl (YAML 1.1: `yes`, `on` are booleans) or compose reads it. */
const readYaml = (rel: string, version: '1.1' | '1.2') => parseYaml(read(rel), rel, version);
function parseYaml(text: string, name: string, version: '1.1' | '1.2'): Obj[] {
  return parseAllDocuments(text, { merge: true, version })
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`${name}: ${doc.errors.map((e) => e.message).join('; ')}`);
      return doc.toJS() as unknown;
    })
    .filter((doc): doc is Obj => doc !== null && doc !== undefined)
    .map((doc) => {
      if (!isObj(doc)) throw new Error(`${name}: a document is not a mapping`);
      return doc;
    });
}

const ajv = new Ajv({ strict: false, allErrors: true });
const compiled = new Map<string, ReturnType<typeof ajv.compile>>();
/** A vendored JSON schema, compiled by Ajv (its draft-04/07 `$schema` and `id` left out: Ajv 8 knows the rules). */
function vendoredSchema(file: string) {
  const known = compiled.get(file);
  if (known) return known;
  const schema = JSON.parse(read(`test/infra/schemas/${file}`)) as Obj;
  delete schema.$schema;
  delete schema.id;
  const validate = ajv.compile(schema);
  compiled.set(file, validate);
  return validate;
}
const schemaErrors = (errors: typeof ajv.errors) =>
  (errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);

// ---------------------------------------------------------------------------------------------
// The apps: what each process reads, and which Dockerfile target holds it.
// ---------------------------------------------------------------------------------------------
/** The migration reads DATABASE_URL only (apps/api/src/cli/migrate.ts). */
const migrateEnvSchema = apiEnvSchema.pick({ DATABASE_URL: true });
type EnvSchema =
  | typeof apiEnvSchema
  | typeof migrateEnvSchema
  | typeof workerEnvSchema
  | typeof webhookWorkerEnvSchema;
interface AppInfo {
  target: string;
  schema: EnvSchema;
  /** The port of /health and /ready: the API's PORT, the workers' METRICS_PORT. */
  portSetting?: string;
  /** Settings whose product is the work one pod holds at once, which the KEDA target must equal. */
  perPod?: string[];
  /** The BullMQ queue whose lists KEDA reads; none for the scraper, which follows the frontier. */
  queue?: string;
}
const APPS: Record<string, AppInfo> = {
  api: { target: 'api', schema: apiEnvSchema, portSetting: 'PORT' },
  migrate: { target: 'api', schema: migrateEnvSchema },
  'scraper-worker': {
    target: 'scraper-worker',
    schema: workerEnvSchema,
    portSetting: 'METRICS_PORT',
    perPod: ['SCRAPER_CONCURRENCY', 'RUN_URL_CONCURRENCY'],
  },
  'webhook-worker': {
    target: 'webhook-worker',
    schema: webhookWorkerEnvSchema,
    portSetting: 'METRICS_PORT',
    perPod: ['WEBHOOK_CONCURRENCY'],
    queue: catalog.webhookDeliveries.name,
  },
};
const knownSetting = (app: string, name: string) => name in (APPS[app]?.schema.shape ?? {});
/** The settings an app ends up with: the given ones parsed, the rest defaulted, as at its start. */
function appConfig(app: string, env: Record<string, string>): Record<string, unknown> {
  return parseConfig(APPS[app]!.schema, env) as Record<string, unknown>;
}

// ---------------------------------------------------------------------------------------------
// Dockerfile and .dockerignore
// ---------------------------------------------------------------------------------------------
interface Instruction {
  keyword: string;
  flags: Record<string, string>;
  args: string;
  line: number;
}
interface Stage {
  name: string;
  from: string;
  instructions: Instruction[];
}

function parseDockerfile(text: string): Stage[] {
  const instructions: Instruction[] = [];
  let buffer = '';
  let start = 0;
  text.split('\n').forEach((raw, i) => {
    if (/^\s*#/.test(raw) || (!buffer && !raw.trim())) return; // comments end no instruction
    if (!buffer) start = i + 1;
    if (/\\\s*$/.test(raw)) {
      buffer += `${raw.replace(/\\\s*$/, '')} `;
      return;
    }
    buffer += raw;
    const m = /^\s*([A-Za-z]+)\s+([\s\S]*)$/.exec(buffer);
    if (!m) throw new Error(`Dockerfile:${start}: cannot parse "${buffer}"`);
    let args = m[2]!.trim();
    const flags: Record<string, string> = {};
    for (let f = /^--([a-z-]+)(?:=(\S*))?\s+/.exec(args); f; f = /^--([a-z-]+)(?:=(\S*))?\s+/.exec(args)) {
      flags[f[1]!] = f[2] ?? '';
      args = args.slice(f[0].length);
    }
    instructions.push({ keyword: m[1]!.toUpperCase(), flags, args, line: start });
    buffer = '';
  });
  const stages: Stage[] = [];
  for (const ins of instructions) {
    if (ins.keyword === 'FROM') {
      const [from = '', as, name] = ins.args.split(/\s+/);
      if (as && as.toUpperCase() !== 'AS') throw new Error(`Dockerfile:${ins.line}: FROM <image> AS <name>`);
      stages.push({ name: name ?? String(stages.length), from, instructions: [] });
    } else {
      const stage = stages.at(-1);
      if (!stage) throw new Error(`Dockerfile:${ins.line}: ${ins.keyword} before FROM`);
      stage.instructions.push(ins);
    }
  }
  return stages;
}

/** Exec form (`["a", "b"]`) or shell form, as a list of words. */
const words = (args: string): string[] =>
  args.startsWith('[') ? (JSON.parse(args) as string[]) : args.split(/\s+/).filter(Boolean);

/** .dockerignore patterns as Docker applies them: relative to the context, last match wins. */
function dockerignore(text: string): (path: string) => boolean {
  const rules = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const negate = l.startsWith('!');
      const pattern = posix.normalize((negate ? l.slice(1) : l).replace(/^\/+/, ''));
      const source = pattern
        .split(/(\*\*\/|\*\*|\*|\?)/)
        .map((part) => {
          if (part === '**/') return '(?:.*/)?';
          if (part === '**') return '.*';
          if (part === '*') return '[^/]*';
          if (part === '?') return '[^/]';
          return part.replace(/[.+^${}()|[\]\\]/g, '\\$&');
        })
        .join('');
      return { negate, re: new RegExp(`^${source}$`) };
    });
  const matches = (path: string) => {
    let excluded = false;
    for (const rule of rules) if (rule.re.test(path)) excluded = !rule.negate;
    return excluded;
  };
  // A path is out of the context when it, or a folder above it, is excluded.
  return (path: string) => {
    const parts = posix.normalize(path).split('/');
    return parts.some((_, i) => matches(parts.slice(0, i + 1).join('/')));
  };
}

const dockerfile = parseDockerfile(read('Dockerfile'));
const ignored = dockerignore(read('.dockerignore'));
const stageNamed = (name: string) => dockerfile.find((s) => s.name === name);
/** A stage's instructions after those of the stages it is built FROM. */
function chain(stage: Stage): Instruction[] {
  const parent = stageNamed(stage.from);
  return [...(parent ? chain(parent) : []), ...stage.instructions];
}
function stageEnv(stage: Stage): Record<string, string> {
  const env: Record<string, string> = {};
  for (const ins of chain(stage).filter((i) => i.keyword === 'ENV'))
    for (const m of ins.args.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=(\S*)/g)) env[m[1]!] = m[2]!;
  return env;
}
const workdir = (instructions: Instruction[]) =>
  instructions.filter((i) => i.keyword === 'WORKDIR').at(-1)?.args ?? '/';

/**
 * The repository file behind an absolute path of a stage's image, through its COPY instructions
 * from the build context (the last COPY that covers the path wins); null when none does.
 */
function contextFileFor(stage: Stage, imagePath: string): string | null {
  let found: string | null = null;
  const seen: Instruction[] = [];
  for (const ins of chain(stage)) {
    seen.push(ins);
    if (ins.keyword !== 'COPY' || ins.flags.from !== undefined) continue;
    const parts = words(ins.args);
    const dest = posix.resolve(workdir(seen), parts.at(-1)!);
    for (const src of parts.slice(0, -1)) {
      const isDir = existsSync(repoPath(src)) && statSync(repoPath(src)).isDirectory();
      const target = isDir ? dest : parts.at(-1)!.endsWith('/') ? posix.join(dest, basename(src)) : dest;
      if (imagePath === target) found = src;
      else if (isDir && imagePath.startsWith(`${target}/`))
        found = posix.join(src, imagePath.slice(target.length + 1));
    }
  }
  return found;
}

/** The file that a `node <file>` command runs, relative to the image's WORKDIR. */
function nodeScript(command: string[]): string | null {
  const i = command.findIndex((w) => w === 'node' || w.endsWith('/node'));
  return i >= 0 && command[i + 1] ? command[i + 1]! : null;
}

// ---------------------------------------------------------------------------------------------
// Kubernetes
// ---------------------------------------------------------------------------------------------
type ModelClass = new (data: never) => { validate(): void };
const MODELS: Record<string, ModelClass> = {
  'v1/Namespace': Namespace,
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'batch/v1/Job': Job,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'keda.sh/v1alpha1/ScaledObject': ScaledObject,
  'keda.sh/v1alpha1/TriggerAuthentication': TriggerAuthentication,
};
const modelOf = (doc: Obj) => MODELS[`${String(doc.apiVersion)}/${String(doc.kind)}`];

/**
 * Fields the schema does not know. The generated validators accept unknown fields, so each field
 * in turn is replaced by a value no schema accepts: a known field then fails validation at its
 * path, an unknown one does not.
 */
function unknownFields(Model: ModelClass, doc: Obj): string[] {
  const probe = Symbol('probe');
  const unknown: string[] = [];
  const fails = (path: string) => {
    try {
      new Model(doc as never).validate();
      return false;
    } catch (err) {
      const errors = (err as { errors?: { instancePath: string }[] }).errors ?? [];
      return errors.some((e) => e.instancePath === path || e.instancePath.startsWith(`${path}/`));
    }
  };
  const visit = (node: unknown, path: string): void => {
    if (Array.isArray(node)) {
      node.forEach((item, i) => {
        visit(item, `${path}/${i}`);
      });
    }
    if (!isObj(node)) return;
    for (const key of Object.keys(node)) {
      const keyPath = `${path}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
      const value = node[key];
      node[key] = probe;
      const known = fails(keyPath);
      node[key] = value;
      if (known) visit(value, keyPath);
      else unknown.push(keyPath);
    }
  };
  visit(doc, '');
  return unknown;
}

const K8S_DIR = 'infra/k8s';
const k8sFiles = readdirSync(repoPath(K8S_DIR))
  .filter((f) => /\.ya?ml$/.test(f))
  .sort();
const kustomizationFile = `${K8S_DIR}/kustomization.yaml`;
const kustomization = readYaml(kustomizationFile, '1.1')[0]!;
const objects = k8sFiles
  .filter((f) => f !== 'kustomization.yaml')
  .flatMap((file) => readYaml(`${K8S_DIR}/${file}`, '1.1').map((doc) => ({ file, doc })));
const ofKind = <T>(kind: string) =>
  objects
    .filter((o) => o.doc.kind === kind)
    .map((o) => o.doc as unknown as T & { metadata: { name: string } });

const deployments = ofKind<IDeployment>('Deployment');
const jobs = ofKind<IJob>('Job');
const services = ofKind<IService>('Service');
const configMaps = ofKind<IConfigMap>('ConfigMap');
const secrets = ofKind<ISecret>('Secret');
const pdbs = ofKind<IPodDisruptionBudget>('PodDisruptionBudget');
const hpas = ofKind<IHorizontalPodAutoscaler>('HorizontalPodAutoscaler');
const scaledObjects = ofKind<IScaledObject>('ScaledObject');
const triggerAuths = ofKind<{
  spec: { secretTargetRef?: { parameter: string; name: string; key: string }[] };
}>('TriggerAuthentication');

const component = (o: { metadata?: { labels?: Record<string, string> } }) =>
  o.metadata?.labels?.['app.kubernetes.io/component'] ?? '';
const workloads = [
  ...deployments.map((d) => ({
    kind: 'Deployment',
    name: d.metadata.name,
    app: component(d),
    pod: d.spec!.template.spec!,
  })),
  ...jobs.map((j) => ({
    kind: 'Job',
    name: j.metadata.name,
    app: component(j),
    pod: j.spec!.template.spec!,
  })),
];
const subset = (selector: Record<string, string> | undefined, labels: Record<string, string> | undefined) =>
  !!selector &&
  Object.keys(selector).length > 0 &&
  Object.entries(selector).every(([k, v]) => labels?.[k] === v);
const deploymentSelectedBy = (selector: Record<string, string> | undefined) =>
  deployments.filter((d) => subset(selector, d.spec!.template.metadata?.labels));
const deploymentNamed = (name: string) => deployments.find((d) => d.metadata.name === name);

/** A container's settings as the pod gets them: ConfigMaps through envFrom, literal values, Secret keys. */
function containerSettings(c: IContainer) {
  const literal: Record<string, string> = {};
  const fromSecret: string[] = [];
  for (const source of c.envFrom ?? []) {
    const cm = configMaps.find((m) => m.metadata.name === source.configMapRef?.name);
    Object.assign(literal, cm?.data ?? {});
  }
  for (const e of c.env ?? []) {
    if (e.value !== undefined) literal[e.name] = e.value;
    else if (e.valueFrom?.secretKeyRef) fromSecret.push(e.name);
    else if (e.valueFrom?.configMapKeyRef) {
      const ref = e.valueFrom.configMapKeyRef;
      const value = configMaps.find((m) => m.metadata.name === ref.name)?.data?.[ref.key];
      if (value !== undefined) literal[e.name] = value;
    }
  }
  return { literal, fromSecret, names: [...Object.keys(literal), ...fromSecret] };
}

/** The container port a probe aims at, as a number. */
function probePort(c: IContainer, probe: IProbe | undefined): number | undefined {
  const port = probe?.httpGet?.port;
  if (typeof port === 'number') return port;
  return c.ports?.find((p) => p.name === port)?.containerPort;
}

/** Kubernetes image reference without tag or digest. */
const imageName = (image: string) => image.replace(/@.*$/, '').replace(/:[^/]*$/, '');

// ---------------------------------------------------------------------------------------------
// Compose
// ---------------------------------------------------------------------------------------------
interface ComposeService {
  image?: string;
  build?: string | { context?: string; target?: string };
  command?: string | string[];
  environment?: Record<string, string | number | boolean | null> | string[];
  depends_on?: string[] | Record<string, { condition: string }>;
  healthcheck?: { test?: string | string[]; disable?: boolean };
  ports?: unknown[];
  volumes?: (string | { target?: string })[];
  container_name?: string;
  restart?: string;
  stop_grace_period?: string;
}
const composeDoc = readYaml('docker-compose.yml', '1.2')[0]!;
const composeServices = (composeDoc.services ?? {}) as Record<string, ComposeService>;
/** `${VAR:-default}` and `${VAR}` as compose fills them when VAR is unset. */
const interpolate = (value: string) =>
  value.replace(/\$\{[A-Za-z_][A-Za-z0-9_]*(?::?-([^}]*))?\}/g, (_, d) => d ?? '');
function composeEnv(service: ComposeService): Record<string, string> {
  const env = service.environment ?? {};
  const entries = Array.isArray(env)
    ? env.map((line) => [line.split('=')[0]!, line.slice(line.indexOf('=') + 1)] as const)
    : Object.entries(env).map(([k, v]) => [k, v === null ? '' : String(v)] as const);
  return Object.fromEntries(entries.map(([k, v]) => [k, interpolate(v)]));
}
const composeTarget = (s: ComposeService) => (typeof s.build === 'object' ? s.build.target : undefined);
/** Compose durations such as `20s`, `1m30s`, in milliseconds. */
function durationMs(text: string): number {
  let ms = 0;
  for (const m of text.matchAll(/(\d+(?:\.\d+)?)(ms|us|s|m|h)/g))
    ms +=
      Number(m[1]) *
      { us: 0.001, ms: 1, s: 1_000, m: 60_000, h: 3_600_000 }[m[2] as 'us' | 'ms' | 's' | 'm' | 'h'];
  return ms;
}
/** The app in a compose service: the one its command runs (apps/<app>/src/...), or migrate. */
function composeApp(service: ComposeService): string | null {
  const script = nodeScript(
    typeof service.command === 'string' ? words(service.command) : (service.command ?? []),
  );
  if (!script) return null;
  if (script === 'apps/api/src/cli/migrate.ts') return 'migrate';
  return /^apps\/([^/]+)\//.exec(script)?.[1] ?? null;
}

// =============================================================================================
describe('docker-compose.yml', () => {
  it('follows the Compose Specification', () => {
    const validate = vendoredSchema('compose-spec.json');
    expect(validate(composeDoc) ? [] : schemaErrors(validate.errors)).toEqual([]);
  });

  it('has PostgreSQL, Redis, the one-shot migration, the three apps and the optional SearXNG', () => {
    expect(Object.keys(composeServices).sort()).toEqual(
      ['api', 'migrate', 'postgres', 'redis', 'scraper-worker', 'searxng', 'webhook-worker'].sort(),
    );
    expect((composeServices.searxng as { profiles?: string[] }).profiles).toEqual(['search']);
  });

  it("mounts SearXNG settings with JSON output enabled, which the API's search asks for", () => {
    const mount = (composeServices.searxng!.volumes ?? []).find(
      (v): v is string => typeof v === 'string' && v.includes('/etc/searxng/settings.yml'),
    );
    expect(mount).toBeDefined();
    const settings = readYaml(mount!.split(':')[0]!.replace(/^\.\//, ''), '1.2')[0] as {
      search?: { formats?: string[] };
    };
    expect(settings.search?.formats).toContain('json');
  });

  it('runs Redis with AOF persistence on a volume and without eviction (BullMQ production settings)', () => {
    const redis = composeServices.redis!;
    const command = (typeof redis.command === 'string' ? words(redis.command) : (redis.command ?? [])).join(
      ' ',
    );
    expect(command).toMatch(/--appendonly yes\b/);
    expect(command).toMatch(/--maxmemory-policy noeviction\b/);
    const targets = (redis.volumes ?? []).map((v) => (typeof v === 'string' ? v.split(':')[1] : v.target));
    expect(targets).toContain('/data');
  });

  it('gives every app service a health check, or a dependency on a healthy service', () => {
    const healthy = (name: string) => {
      const hc = composeServices[name]?.healthcheck;
      return (
        !!hc && !hc.disable && hc.test !== undefined && !(Array.isArray(hc.test) && hc.test[0] === 'NONE')
      );
    };
    for (const [name, service] of Object.entries(composeServices).filter(([, s]) => s.build)) {
      const deps = service.depends_on ?? [];
      const healthyDeps = Array.isArray(deps)
        ? []
        : Object.entries(deps).filter(([dep, d]) => d.condition === 'service_healthy' && healthy(dep));
      expect({ name, ok: healthy(name) || healthyDeps.length > 0 }).toEqual({ name, ok: true });
    }
  });

  it('starts the apps after the migration completed, and the migration once', () => {
    for (const name of ['api', 'scraper-worker', 'webhook-worker']) {
      const deps = composeServices[name]!.depends_on as Record<string, { condition: string }>;
      expect({ name, migrate: deps.migrate?.condition }).toEqual({
        name,
        migrate: 'service_completed_successfully',
      });
      expect({ name, postgres: deps.postgres?.condition, redis: deps.redis?.condition }).toEqual({
        name,
        postgres: 'service_healthy',
        redis: 'service_healthy',
      });
    }
    expect(composeApp(composeServices.migrate!)).toBe('migrate');
    expect(composeServices.migrate!.restart).toBe('no');
  });

  it('can run `--scale scraper-worker=4`: no fixed container name, no host port', () => {
    const scraper = composeServices['scraper-worker']!;
    expect(scraper.container_name).toBeUndefined();
    expect(scraper.ports ?? []).toEqual([]);
  });

  it('builds each app from its Dockerfile target, the scraper from the one with Chromium', () => {
    for (const service of Object.values(composeServices).filter((s) => s.build)) {
      const app = composeApp(service)!;
      expect(app).toBeTruthy();
      expect(composeTarget(service)).toBe(APPS[app]!.target);
      expect(stageNamed(composeTarget(service)!)).toBeDefined();
    }
    expect(composeTarget(composeServices['scraper-worker']!)).toBe('scraper-worker');
  });

  it('runs commands and health checks that exist in the image', () => {
    for (const [name, service] of Object.entries(composeServices).filter(([, s]) => s.build)) {
      const stage = stageNamed(composeTarget(service)!)!;
      const test = service.healthcheck?.test;
      const commands = [service.command, Array.isArray(test) ? test.slice(1) : test];
      for (const command of commands) {
        const script = nodeScript(typeof command === 'string' ? words(command) : (command ?? []));
        if (!script) continue;
        expect({
          name,
          script,
          file: contextFileFor(stage, posix.resolve(workdir(chain(stage)), script)),
        }).toEqual({
          name,
          script,
          file: script,
        });
      }
    }
  });

  it('passes settings that the apps accept, with health checks on their ports', () => {
    for (const [name, service] of Object.entries(composeServices).filter(([, s]) => s.build)) {
      const app = composeApp(service)!;
      const env = composeEnv(service);
      expect({ name, unknown: Object.keys(env).filter((k) => !knownSetting(app, k)) }).toEqual({
        name,
        unknown: [],
      });
      const config = appConfig(app, env);
      const test = service.healthcheck?.test;
      if (Array.isArray(test) && nodeScript(test) === 'infra/docker/healthcheck.mjs') {
        const [variable, fallback, path] = test.slice(test.indexOf('infra/docker/healthcheck.mjs') + 1);
        expect({ name, variable, path }).toEqual({ name, variable: APPS[app]!.portSetting, path: '/ready' });
        expect({ name, port: Number(env[variable!] ?? fallback) }).toEqual({
          name,
          port: Number(config[variable!] ?? fallback),
        });
      }
      // Compose kills a container this long after SIGTERM: later than the app's own deadline.
      if (config.SHUTDOWN_TIMEOUT_MS !== undefined) {
        const grace = durationMs(service.stop_grace_period ?? '10s');
        expect({ name, grace: grace > Number(config.SHUTDOWN_TIMEOUT_MS) }).toEqual({ name, grace: true });
      }
    }
  });
});

// =============================================================================================
describe('Dockerfile', () => {
  const runtimeTargets = [...new Set(Object.values(APPS).map((a) => a.target))];

  it('starts from Node 24 slim images, and names only stages defined earlier', () => {
    dockerfile.forEach((stage, i) => {
      const earlier = dockerfile.slice(0, i).map((s) => s.name);
      if (!earlier.includes(stage.from))
        expect({ stage: stage.name, from: stage.from }).toEqual({
          stage: stage.name,
          from: expect.stringMatching(/^node:24-([a-z0-9.-]+-)?slim$/),
        });
      for (const ins of stage.instructions.filter((x) => x.flags.from !== undefined))
        expect({ line: ins.line, from: ins.flags.from, defined: earlier.includes(ins.flags.from!) }).toEqual({
          line: ins.line,
          from: ins.flags.from,
          defined: true,
        });
    });
    expect(new Set(dockerfile.map((s) => s.name)).size).toBe(dockerfile.length);
    // A plain `docker build .` (no --target) gives the API image.
    expect(dockerfile.at(-1)!.name).toBe('api');
  });

  it('copies from the build context only paths that exist and .dockerignore keeps', () => {
    const sources = dockerfile.flatMap((s) =>
      s.instructions
        .filter((i) => (i.keyword === 'COPY' || i.keyword === 'ADD') && i.flags.from === undefined)
        .flatMap((i) =>
          words(i.args)
            .slice(0, -1)
            .map((src) => ({ line: i.line, src })),
        ),
    );
    expect(sources.length).toBeGreaterThan(0);
    for (const { line, src } of sources) {
      expect({ line, src, exists: existsSync(repoPath(src)) }).toEqual({ line, src, exists: true });
      if (src !== '.') expect({ line, src, ignored: ignored(src) }).toEqual({ line, src, ignored: false });
    }
    expect(dockerfile.flatMap((s) => s.instructions).filter((i) => i.keyword === 'ADD')).toEqual([]);
  });

  it('copies from other stages only what those stages produce', () => {
    for (const stage of dockerfile)
      for (const ins of stage.instructions.filter(
        (i) => i.keyword === 'COPY' && i.flags.from !== undefined,
      )) {
        const from = stageNamed(ins.flags.from!)!;
        const made = chain(from);
        for (const src of words(ins.args).slice(0, -1)) {
          const produced =
            src.startsWith(`${workdir(made)}/`) ||
            src === workdir(made) ||
            made.some((i) => i.keyword === 'RUN' && i.args.includes(src.replace(/\/$/, '')));
          expect({ line: ins.line, src, produced }).toEqual({ line: ins.line, src, produced: true });
          // The generated Prisma client: where prisma/schema.prisma's generator writes it.
          if (src.includes('/generated')) {
            const output = /output\s*=\s*"([^"]+)"/.exec(read('prisma/schema.prisma'))?.[1];
            const written = posix.resolve(workdir(made), 'prisma', output ?? '');
            expect(written.startsWith(`${src}/`)).toBe(true);
            expect(made.some((i) => i.keyword === 'RUN' && /prisma generate/.test(i.args))).toBe(true);
          }
        }
      }
  });

  it('installs the workspace from its lockfile with every package manifest, hermetically', () => {
    const workspaceGlobs = (readYaml('pnpm-workspace.yaml', '1.2')[0]!.packages as string[]) ?? [];
    const runs = dockerfile.flatMap((s) => s.instructions.filter((i) => i.keyword === 'RUN'));
    const manifestCopy = runs.find((r) => r.args.includes('pnpm-lock.yaml'))?.args ?? '';
    for (const glob of workspaceGlobs) expect(manifestCopy).toContain(`${glob}/package.json`);
    const installs = runs.filter((r) => /\bpnpm install\b/.test(r.args));
    expect(installs.length).toBeGreaterThan(0);
    for (const r of installs) expect(r.args).toMatch(/--frozen-lockfile/);
    const pnpmVersion = (JSON.parse(read('package.json')) as { packageManager: string }).packageManager;
    expect(runs.some((r) => r.args.includes(pnpmVersion))).toBe(true);
    // Nothing fetched from outside the npm registry and Debian's archive.
    for (const r of runs) expect(r.args).not.toMatch(/\b(curl|wget|git clone)\b/);
    const base = stageNamed('base')!;
    expect(stageEnv(base)).toMatchObject({
      PUPPETEER_SKIP_DOWNLOAD: 'true',
      PRISMA_SCHEMA_ENGINE_BINARY: '/bin/true',
    });
  });

  it('installs each runtime target with the production dependencies of its own app', () => {
    for (const target of runtimeTargets) {
      const stage = stageNamed(target)!;
      const deps = stage.instructions.find(
        (i) => i.keyword === 'COPY' && i.flags.from?.startsWith('prod-deps'),
      );
      expect({ target, from: deps?.flags.from }).toEqual({ target, from: `prod-deps-${target}` });
      const install = chain(stageNamed(`prod-deps-${target}`)!).find((i) => /pnpm install/.test(i.args))!;
      const pkg = JSON.parse(read(`apps/${target}/package.json`)) as { name: string };
      expect(install.args).toContain('--prod');
      expect(install.args).toContain(`--filter "${pkg.name}..."`);
    }
  });

  it('runs every runtime target as a non-root user, with a command file the image holds', () => {
    for (const target of runtimeTargets) {
      const stage = stageNamed(target)!;
      const all = chain(stage);
      const cmdIndex = all.findLastIndex((i) => i.keyword === 'CMD');
      const userIndex = all.findLastIndex((i) => i.keyword === 'USER');
      expect({ target, cmd: cmdIndex >= 0, userBeforeCmd: userIndex >= 0 && userIndex < cmdIndex }).toEqual({
        target,
        cmd: true,
        userBeforeCmd: true,
      });
      expect(all[userIndex]!.args.split(':')[0]).not.toMatch(/^(root|0)$/);
      for (const ins of all.filter((i) => ['CMD', 'ENTRYPOINT', 'HEALTHCHECK'].includes(i.keyword))) {
        const command = words(ins.keyword === 'HEALTHCHECK' ? ins.args.replace(/^CMD\s+/, '') : ins.args);
        const script = nodeScript(command);
        if (!script) continue;
        const file = contextFileFor(stage, posix.resolve(workdir(all), script));
        expect({ target, script, file }).toEqual({ target, script, file: script });
        expect(existsSync(repoPath(script)) && !ignored(script)).toBe(true);
      }
      expect(nodeScript(words(all[cmdIndex]!.args))).toBe(
        target === 'api' ? 'apps/api/src/main.ts' : `apps/${target}/src/main.ts`,
      );
      // The health check asks the port the image exposes.
      const hc = all.find((i) => i.keyword === 'HEALTHCHECK');
      const exposed = all.filter((i) => i.keyword === 'EXPOSE').map((i) => i.args);
      if (hc) expect(exposed).toContain(words(hc.args.replace(/^CMD\s+/, '')).at(-2));
    }
  });

  it("gives the scraper image Debian Chromium's headless shell and fonts, and the other images none", () => {
    const scraper = stageNamed('scraper-worker')!;
    const apt = chain(scraper)
      .filter((i) => i.keyword === 'RUN')
      .map((i) => i.args)
      .join(' ');
    for (const pkg of ['chromium-headless-shell', 'fonts-liberation', 'fonts-noto-color-emoji'])
      expect(apt).toMatch(new RegExp(`\\b${pkg}\\b`));
    expect(stageEnv(scraper).CHROMIUM_PATH).toBe(DEFAULT_CHROMIUM_PATH);
    for (const target of ['api', 'webhook-worker'])
      expect(chain(stageNamed(target)!).some((i) => /chromium/.test(i.args))).toBe(false);
  });

  it('keeps local state out of the build context', () => {
    for (const path of ['node_modules', 'apps/api/node_modules', '.git', 'packages/db/src/generated', '.env'])
      expect({ path, ignored: ignored(path) }).toEqual({ path, ignored: true });
    for (const path of [
      'apps/api/src/main.ts',
      'packages/db/src/index.ts',
      'prisma/schema.prisma',
      'pnpm-lock.yaml',
    ])
      expect({ path, ignored: ignored(path) }).toEqual({ path, ignored: false });
  });
});

// =============================================================================================
describe('infra/k8s', () => {
  it('has a kustomization that follows its schema and lists every manifest but the Secret template', () => {
    const validate = vendoredSchema('kustomization.json');
    expect(validate(kustomization) ? [] : schemaErrors(validate.errors)).toEqual([]);
    const resources = kustomization.resources as string[];
    for (const r of resources)
      expect({ r, exists: existsSync(repoPath(`${K8S_DIR}/${r}`)) }).toEqual({ r, exists: true });
    expect([...resources].sort()).toEqual(
      k8sFiles.filter((f) => !['kustomization.yaml', 'secret.example.yaml'].includes(f)).sort(),
    );
    // Every image the manifests use can be set there.
    const images = (kustomization.images as { name: string }[]).map((i) => i.name).sort();
    const used = [
      ...new Set(workloads.flatMap((w) => w.pod.containers.map((c) => imageName(c.image!)))),
    ].sort();
    expect(images).toEqual(used);
  });

  it('validates every object against the Kubernetes OpenAPI or KEDA CRD schemas, with no unknown field', () => {
    expect(objects.length).toBeGreaterThan(0);
    for (const { file, doc } of objects) {
      const Model = modelOf(doc);
      const id = `${file}: ${String(doc.kind)} ${String((doc.metadata as Obj | undefined)?.name)}`;
      expect({ id, known: !!Model }).toEqual({ id, known: true });
      let error = '';
      try {
        new Model!(doc as never).validate();
      } catch (err) {
        error = (err as Error).message;
      }
      expect({ id, error }).toEqual({ id, error: '' });
      expect({ id, unknown: unknownFields(Model!, doc) }).toEqual({ id, unknown: [] });
    }
  });

  it('names every object once per kind, with selectors that match their own pod labels', () => {
    const ids = objects.map((o) => `${String(o.doc.kind)}/${String((o.doc.metadata as Obj).name)}`);
    expect(ids.length).toBe(new Set(ids).size);
    for (const d of deployments)
      expect({
        name: d.metadata.name,
        ok: subset(d.spec!.selector.matchLabels, d.spec!.template.metadata?.labels),
      }).toEqual({
        name: d.metadata.name,
        ok: true,
      });
  });

  it('points every Service at one Deployment, on ports its containers declare', () => {
    expect(services.length).toBeGreaterThan(0);
    for (const s of services) {
      const selected = deploymentSelectedBy(s.spec!.selector);
      expect({ service: s.metadata.name, deployments: selected.length }).toEqual({
        service: s.metadata.name,
        deployments: 1,
      });
      const containers = selected[0]!.spec!.template.spec!.containers;
      for (const port of s.spec!.ports ?? []) {
        const target = port.targetPort ?? port.port;
        const declared = containers.some((c) =>
          (c.ports ?? []).some((p) => p.name === target || p.containerPort === target),
        );
        expect({ service: s.metadata.name, target, declared }).toEqual({
          service: s.metadata.name,
          target,
          declared: true,
        });
      }
    }
  });

  it('covers every Deployment with a PodDisruptionBudget and an autoscaler (HPA for the API, KEDA for workers)', () => {
    for (const d of deployments) {
      const name = d.metadata.name;
      const budgets = pdbs.filter((p) => deploymentSelectedBy(p.spec!.selector?.matchLabels).includes(d));
      const hpa = hpas.filter(
        (h) => h.spec!.scaleTargetRef.kind === 'Deployment' && h.spec!.scaleTargetRef.name === name,
      );
      const keda = scaledObjects.filter((o) => o.spec.scaleTargetRef.name === name);
      expect({ name, budgets: budgets.length, autoscalers: hpa.length + keda.length }).toEqual({
        name,
        budgets: 1,
        autoscalers: 1,
      });
      expect({ name, hpa: hpa.length }).toEqual({ name, hpa: component(d) === 'api' ? 1 : 0 });
      // The autoscaler owns the replica count; a re-apply must not reset it.
      expect({ name, replicas: d.spec!.replicas }).toEqual({ name, replicas: undefined });
    }
    for (const target of [
      ...hpas.map((h) => h.spec!.scaleTargetRef.name),
      ...scaledObjects.map((o) => o.spec.scaleTargetRef.name),
    ])
      expect(deploymentNamed(target)).toBeDefined();
  });

  /** The ScaledObject of a worker, its Deployment and what one pod of it works on at once. */
  const scalingOf = (app: string) => {
    const o = scaledObjects.find((x) => component(deploymentNamed(x.spec.scaleTargetRef.name)!) === app)!;
    const d = deploymentNamed(o.spec.scaleTargetRef.name)!;
    const config = appConfig(app, containerSettings(d.spec!.template.spec!.containers[0]!).literal);
    const perPod = APPS[app]!.perPod!.reduce((n, setting) => n * Number(config[setting]), 1);
    return { o, d, perPod };
  };

  it('keeps at least one pod of each worker, and has a ScaledObject for each', () => {
    expect(scaledObjects.map((o) => component(deploymentNamed(o.spec.scaleTargetRef.name)!)).sort()).toEqual([
      'scraper-worker',
      'webhook-worker',
    ]);
    // Never to zero: the scraper worker seeds new runs' frontiers (nothing to count before), ends
    // and times out runs; the webhook worker moves the events outbox into its queue.
    for (const o of scaledObjects) expect(o.spec.minReplicaCount ?? 0).toBeGreaterThanOrEqual(1);
  });

  it('scales the webhook workers on their BullMQ lists, target = the deliveries one pod sends at once', () => {
    const prefix = configMaps.find((m) => m.metadata.name === 'scrapejobs-config')!.data!.QUEUE_PREFIX!;
    expect(prefix).toBe(String(appConfig('api', {}).QUEUE_PREFIX)); // the apps' default
    const { o, perPod } = scalingOf('webhook-worker');
    const queue = APPS['webhook-worker']!.queue;
    const lists = o.spec.triggers.map((t) => t.metadata.listName);
    expect(lists.sort()).toEqual([`${prefix}:${queue}:active`, `${prefix}:${queue}:wait`]);
    for (const t of o.spec.triggers) {
      expect(t.type).toBe('redis');
      expect(triggerAuths.map((a) => a.metadata.name)).toContain(t.authenticationRef?.name);
    }
    // The formula adds the triggers by name; the target is what one pod runs at once.
    const modifiers = o.spec.advanced?.scalingModifiers;
    const names = o.spec.triggers.map((t) => t.name!);
    expect(new Set(modifiers?.formula?.match(/[A-Za-z_]\w*/g))).toEqual(new Set(names));
    expect(Number(modifiers?.target)).toBe(perPod);
  });

  it('scales the scraper workers on the frontier, target = SCRAPER_CONCURRENCY x RUN_URL_CONCURRENCY', () => {
    const { o, d, perPod } = scalingOf('scraper-worker');
    expect(o.spec.triggers.map((t) => t.type)).toEqual(['postgresql']);
    const trigger = o.spec.triggers[0]!;
    expect(Number(trigger.metadata.targetQueryValue)).toBe(perPod);
    // One trigger: its own target is the per-pod one, no formula over it.
    expect(o.spec.advanced?.scalingModifiers).toBeUndefined();
    // KEDA connects with the Secret key that the pods read as DATABASE_URL.
    const auth = triggerAuths.find((a) => a.metadata.name === trigger.authenticationRef?.name);
    const podDatabase = d.spec!.template.spec!.containers[0]!.env?.find((e) => e.name === 'DATABASE_URL');
    const ref = podDatabase?.valueFrom?.secretKeyRef;
    expect(auth?.spec.secretTargetRef).toEqual([{ parameter: 'connection', name: ref?.name, key: ref?.key }]);
  });

  it("counts, with the scraper's KEDA query, the URLs of running runs that wait or are in flight", async () => {
    const query = String(scalingOf('scraper-worker').o.spec.triggers[0]!.metadata.query);
    const tdb = await createTestDatabase();
    try {
      const userId = (await tdb.db.user.create({ data: { id: newId('usr'), email: 'keda@example.com' } })).id;
      const urls = async (runId: string, kinds: string[], statuses: string[]) =>
        tdb.db.pool.query(
          `INSERT INTO run_urls (run_id, seq, kind, url, url_key, status)
           SELECT $1, t.seq, t.kind, 'https://example.com/' || t.seq, decode(md5($1 || t.seq), 'hex'), t.status
             FROM unnest($2::"UrlKind"[], $3::"UrlStatus"[]) WITH ORDINALITY AS t(kind, status, seq)`,
          [runId, kinds, statuses],
        );
      const all = ['pending', 'active', 'success', 'failed', 'skipped'];
      const running = await runningRun(tdb.db, userId, 5);
      await urls(
        running.runId,
        [...all.map(() => 'page'), 'robots', 'sitemap'],
        [...all, 'pending', 'active'],
      );
      for (const status of ['success', 'failed', 'cancelled'] as const) {
        const ended = await runningRun(tdb.db, userId, 2);
        await tdb.db.run.update({ where: { id: ended.runId }, data: { status } });
        await urls(ended.runId, ['page', 'page'], ['pending', 'active']);
      }
      // Pending and active pages, robots.txt and sitemaps of the running run only (pg reads bigint as text).
      expect((await tdb.db.pool.query(query)).rows).toEqual([{ count: '4' }]);
    } finally {
      await tdb.drop();
    }
  });

  it('refers only to ConfigMaps, Secrets and keys that the manifests define', () => {
    const secret = (name = '') => secrets.find((s) => s.metadata.name === name);
    const secretKeys = (name = '') => Object.keys({ ...secret(name)?.data, ...secret(name)?.stringData });
    const cm = (name = '') => configMaps.find((m) => m.metadata.name === name);
    for (const w of workloads)
      for (const c of [...(w.pod.initContainers ?? []), ...w.pod.containers]) {
        const where = `${w.kind} ${w.name}/${c.name}`;
        for (const { configMapRef, secretRef } of c.envFrom ?? []) {
          if (configMapRef) holds(`${where}: ConfigMap ${configMapRef.name}`, !!cm(configMapRef.name));
          if (secretRef) holds(`${where}: Secret ${secretRef.name}`, !!secret(secretRef.name));
        }
        for (const e of c.env ?? []) {
          const s = e.valueFrom?.secretKeyRef;
          if (s) holds(`${where}: Secret key ${s.name}/${s.key}`, secretKeys(s.name).includes(s.key));
          const m = e.valueFrom?.configMapKeyRef;
          if (m) holds(`${where}: ConfigMap key ${m.name}/${m.key}`, m.key in (cm(m.name)?.data ?? {}));
        }
      }
    for (const a of triggerAuths)
      for (const ref of a.spec.secretTargetRef ?? [])
        holds(
          `TriggerAuthentication ${a.metadata.name}: ${ref.name}/${ref.key}`,
          secretKeys(ref.name).includes(ref.key),
        );
  });

  it('passes every app only settings it reads, with values it accepts', () => {
    for (const w of workloads) {
      expect({ workload: w.name, app: w.app in APPS }).toEqual({ workload: w.name, app: true });
      for (const c of w.pod.containers) {
        const settings = containerSettings(c);
        expect({
          where: `${w.name}/${c.name}`,
          unknown: settings.names.filter((n) => !knownSetting(w.app, n)),
        }).toEqual({
          where: `${w.name}/${c.name}`,
          unknown: [],
        });
        expect(() => appConfig(w.app, settings.literal)).not.toThrow();
      }
    }
  });

  it('runs each app from its image and an entry file that exists', () => {
    for (const w of workloads)
      for (const c of w.pod.containers) {
        const app = APPS[w.app]!;
        expect({ where: w.name, image: imageName(c.image!) }).toEqual({
          where: w.name,
          image: `scrapejobs/${app.target}`,
        });
        const script = nodeScript(c.command ?? []);
        const expected = w.app === 'migrate' ? 'apps/api/src/cli/migrate.ts' : `apps/${w.app}/src/main.ts`;
        expect({ where: w.name, script }).toEqual({ where: w.name, script: expected });
        const stage = stageNamed(app.target)!;
        expect(contextFileFor(stage, posix.resolve(workdir(chain(stage)), script!))).toBe(script);
      }
    const scraper = deployments.find((d) => component(d) === 'scraper-worker')!;
    expect(scraper.spec!.template.spec!.containers[0]!.image).toMatch(/^scrapejobs\/scraper-worker(:|@|$)/);
  });

  it('probes /health (liveness) and /ready (readiness) on the port each app listens on', () => {
    for (const d of deployments)
      for (const c of d.spec!.template.spec!.containers) {
        const where = `${d.metadata.name}/${c.name}`;
        const app = APPS[component(d)]!;
        const config = appConfig(component(d), containerSettings(c).literal);
        const port = Number(config[app.portSetting!]);
        expect({ where, path: c.livenessProbe?.httpGet?.path, port: probePort(c, c.livenessProbe) }).toEqual({
          where,
          path: '/health',
          port,
        });
        expect({
          where,
          path: c.readinessProbe?.httpGet?.path,
          port: probePort(c, c.readinessProbe),
        }).toEqual({
          where,
          path: '/ready',
          port,
        });
        if (c.startupProbe) expect(probePort(c, c.startupProbe)).toBe(port);
        // Prometheus scrapes the same port.
        expect(d.spec!.template.metadata?.annotations?.['prometheus.io/port']).toBe(String(port));
      }
  });

  it('gives every pod resource requests, a memory limit and a restricted, non-root security context', () => {
    const restricted = (pod: IPodSpec, where: string) => {
      expect({
        where,
        runAsNonRoot: pod.securityContext?.runAsNonRoot,
        seccomp: pod.securityContext?.seccompProfile?.type,
      }).toEqual({
        where,
        runAsNonRoot: true,
        seccomp: 'RuntimeDefault',
      });
      expect(pod.securityContext?.runAsUser).not.toBe(0);
      for (const c of [...(pod.initContainers ?? []), ...pod.containers]) {
        const sc = c.securityContext;
        expect({
          where: `${where}/${c.name}`,
          cpu: c.resources?.requests?.cpu !== undefined,
          memory: c.resources?.requests?.memory !== undefined,
          memoryLimit: c.resources?.limits?.memory !== undefined,
          allowPrivilegeEscalation: sc?.allowPrivilegeEscalation,
          readOnlyRootFilesystem: sc?.readOnlyRootFilesystem,
          drop: sc?.capabilities?.drop,
          user: sc?.runAsUser ?? pod.securityContext?.runAsUser,
        }).toEqual({
          where: `${where}/${c.name}`,
          cpu: true,
          memory: true,
          memoryLimit: true,
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          drop: ['ALL'],
          user: expect.any(Number),
        });
        // A read-only root filesystem: /tmp must be a volume.
        expect((c.volumeMounts ?? []).map((m) => m.mountPath)).toContain('/tmp');
      }
    };
    for (const w of workloads) restricted(w.pod, `${w.kind} ${w.name}`);
  });

  it('lets every process finish its graceful shutdown before the kill', () => {
    for (const d of deployments) {
      const pod = d.spec!.template.spec!;
      for (const c of pod.containers) {
        const config = appConfig(component(d), containerSettings(c).literal);
        const preStop = c.lifecycle?.preStop?.exec?.command;
        const preStopMs = preStop?.[0] === 'sleep' ? Number(preStop[1]) * 1000 : 0;
        const graceMs = (pod.terminationGracePeriodSeconds ?? 30) * 1000;
        expect({
          where: d.metadata.name,
          ok: graceMs > preStopMs + Number(config.SHUTDOWN_TIMEOUT_MS),
        }).toEqual({
          where: d.metadata.name,
          ok: true,
        });
      }
    }
  });

  it('has a migration Job that runs to completion once, from the API image', () => {
    expect(jobs.map((j) => component(j))).toEqual(['migrate']);
    const job = jobs[0]!;
    expect(job.spec!.template.spec!.restartPolicy).toBe('Never');
    expect(job.spec!.backoffLimit).toBeGreaterThan(0);
  });
});

// =============================================================================================
describe('the checks themselves', () => {
  it('use the vendored schemas unchanged (SHA-256 as recorded in test/infra/schemas/README.md)', () => {
    const readme = read('test/infra/schemas/README.md');
    for (const file of ['compose-spec.json', 'kustomization.json']) {
      const row = readme.split('\n').find((l) => l.startsWith(`| \`${file}\``)) ?? '';
      const recorded = /`([0-9a-f]{64})`/.exec(row)?.[1];
      const actual = createHash('sha256')
        .update(readFileSync(repoPath(`test/infra/schemas/${file}`)))
        .digest('hex');
      expect({ file, sha256: actual }).toEqual({ file, sha256: recorded });
    }
  });

  it('find a misspelt or misplaced Kubernetes field and a bad value', () => {
    const [doc] = parseYaml(
      [
        'apiVersion: apps/v1',
        'kind: Deployment',
        'metadata: {name: x, labels: {app.kubernetes.io/name: x}}',
        'spec:',
        '  selector: {matchLabels: {a: b}}',
        '  replica: 2',
        '  template:',
        '    metadata: {labels: {a: b}}',
        '    spec:',
        '      containers:',
        '        - {name: c, image: i, imagePullPolicyy: Always, resources: {requests: {cpu: 250m}}}',
      ].join('\n'),
      'fixture',
      '1.1',
    );
    expect(unknownFields(Deployment, doc!)).toEqual([
      '/spec/replica',
      '/spec/template/spec/containers/0/imagePullPolicyy',
    ]);
    const bad = structuredClone(doc!) as { spec: { template: { spec: { containers: IContainer[] } } } };
    bad.spec.template.spec.containers[0]!.resources = { requests: { cpu: '1x' } };
    expect(() => new Deployment(bad as never).validate()).toThrow(/quantity/);
  });

  it('read Kubernetes YAML as kubectl does (YAML 1.1), so an unquoted yes is no string', () => {
    const [cm] = parseYaml(
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {FLAG: yes}\n',
      'fixture',
      '1.1',
    );
    expect(() => new ConfigMap(cm as never).validate()).toThrow();
  });

  it('reject a compose file with an unknown service field', () => {
    const validate = vendoredSchema('compose-spec.json');
    expect(validate({ services: { a: { image: 'x', restart: 'no' } } })).toBe(true);
    expect(validate({ services: { a: { image: 'x', helthcheck: {} } } })).toBe(false);
  });

  it('apply .dockerignore patterns as Docker does', () => {
    const isIgnored = dockerignore('**/node_modules\nbench\n**/*.test.ts\n!keep.test.ts\n');
    expect(
      ['node_modules', 'apps/api/node_modules/x/y.js', 'bench/a.ts', 'a/b.test.ts'].map(isIgnored),
    ).toEqual([true, true, true, true]);
    expect(['apps/api/src/main.ts', 'benchmark.ts', 'keep.test.ts'].map(isIgnored)).toEqual([
      false,
      false,
      false,
    ]);
  });

  it('parse Dockerfile continuation lines, flags and exec forms', () => {
    const [stage] = parseDockerfile(
      'FROM node:24-slim AS s\nWORKDIR /app\nRUN --mount=type=cache,target=/c \\\n    echo a \\\n  && echo b\nCOPY apps ./apps\nCMD ["node", "apps/api/src/main.ts"]\n',
    );
    expect(stage!.instructions.map((i) => i.keyword)).toEqual(['WORKDIR', 'RUN', 'COPY', 'CMD']);
    expect(stage!.instructions[1]!.flags).toEqual({ mount: 'type=cache,target=/c' });
    expect(stage!.instructions[1]!.args.replace(/\s+/g, ' ')).toBe('echo a && echo b');
    expect(contextFileFor(stage!, '/app/apps/api/src/main.ts')).toBe('apps/api/src/main.ts');
    expect(contextFileFor(stage!, '/app/packages/db/src/index.ts')).toBeNull();
  });
});
