/**
 * The import rules of the source tree, checked on the file graph madge builds (every import,
 * type-only ones too): no circular import among the files of apps/<app>/src, packages/<pkg>/src,
 * test and bench (workspace packages resolved to their source, so a cycle through a package's
 * index counts); no app imports another app's files; no package imports an app's files.
 * Run: `node scripts/check-imports.ts`; prints what breaks a rule and exits 1, else one line.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import ts from 'typescript';

interface MadgeResult {
  obj(): Record<string, string[]>;
  circular(): string[][];
  warnings(): { skipped: string[] };
}
type Madge = (paths: string[], config: object) => Promise<MadgeResult>;

const ROOT = resolve(import.meta.dirname, '..');
const madge = createRequire(import.meta.url)('madge') as Madge;

/** `@scrapejobs/<name>` → the file its package.json exports as `.`, as TypeScript `paths`. */
function workspacePackagePaths(): Record<string, string[]> {
  const paths: Record<string, string[]> = {};
  for (const dir of readdirSync(join(ROOT, 'packages'))) {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'packages', dir, 'package.json'), 'utf8')) as {
      name: string;
      exports: { '.': string };
    };
    paths[pkg.name] = [join('packages', dir, pkg.exports['.'])];
  }
  return paths;
}

function compilerOptions(): ts.CompilerOptions {
  const file = join(ROOT, 'tsconfig.json');
  const parsed = ts.parseJsonSourceFileConfigFileContent(
    ts.readJsonConfigFile(file, ts.sys.readFile),
    ts.sys,
    ROOT,
  );
  return { ...parsed.options, baseUrl: ROOT, paths: workspacePackagePaths() };
}

const dirs = (parent: string) =>
  readdirSync(join(ROOT, parent))
    .map((d) => join(parent, d, 'src'))
    .filter((d) => existsSync(join(ROOT, d)));
const graph = await madge([...dirs('apps'), ...dirs('packages'), 'test', 'bench'], {
  baseDir: ROOT,
  fileExtensions: ['ts'],
  excludeRegExp: [/\/generated\//],
  tsConfig: { compilerOptions: compilerOptions() },
});

const problems: string[] = [];
for (const cycle of graph.circular()) problems.push(`circular import: ${[...cycle, cycle[0]].join(' > ')}`);
const appOf = (file: string) => /^apps\/([^/]+)\//.exec(file)?.[1];
for (const [file, imports] of Object.entries(graph.obj())) {
  const inPackage = file.startsWith('packages/');
  const app = appOf(file);
  if (!inPackage && !app) continue;
  for (const target of imports) {
    const targetApp = appOf(target);
    if (!targetApp || targetApp === app) continue;
    problems.push(`${inPackage ? 'a package' : 'an app'} imports an app's file: ${file} > ${target}`);
  }
}
// An unresolved workspace import would hide its edges from both checks.
for (const name of graph.warnings().skipped.filter((s) => s.startsWith('@scrapejobs/')))
  problems.push(`import not resolved: ${name}`);

if (problems.length) {
  console.error(problems.join('\n'));
  process.exit(1);
}
console.log(`imports: ${Object.keys(graph.obj()).length} files, no cycle, no import across apps`);
