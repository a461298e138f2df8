import type { RenderAction } from '@scrapejobs/contracts';
import { z } from 'zod';
import { type Issue, nestedIssues, report } from './parse.ts';
import { qualitySchema, type ScreenshotAsk, viewportSchema } from './screenshot.ts';
import type { ActionOutputs } from './types.ts';

/** Render steps a job may have (docs/api.md §14). */
const MAX_RENDER_STEPS = 20;
/** Longest single wait step (docs/api.md §14): longer waits take several steps. */
const MAX_WAIT_STEP_MS = 10_000;
/** Firecrawl's bound on `waitFor` plus every wait action. */
const MAX_TOTAL_WAIT_MS = 60_000;
/** What Firecrawl counts for a wait on a selector. */
const SELECTOR_WAIT_MS = 1_000;
const MAX_ACTIONS = 50;

const SUPPORTED_TYPES = [
  'wait',
  'click',
  'write',
  'press',
  'scroll',
  'screenshot',
  'scrape',
  'executeJavascript',
] as const;
const UNSUPPORTED_TYPES = new Set(['pdf']);

const selector = z.string().min(1).max(1000);

// Like Firecrawl, fields an action does not know are dropped, not refused.
const wait = z
  .object({
    type: z.literal('wait'),
    // Bounded here, before planRender expands waits into steps.
    milliseconds: z.int().positive().max(MAX_TOTAL_WAIT_MS).optional(),
    selector: selector.optional(),
  })
  .refine(
    (a) => (a.milliseconds === undefined) !== (a.selector === undefined),
    "Either 'milliseconds' or 'selector' must be provided, but not both.",
  );
const click = z.object({ type: z.literal('click'), selector, all: z.boolean().optional() });
const screenshot = z.object({
  type: z.literal('screenshot'),
  fullPage: z.boolean().default(false),
  quality: qualitySchema.optional(),
  viewport: viewportSchema.optional(),
});
const write = z.object({ type: z.literal('write'), text: z.string().max(10_000) });
const press = z.object({ type: z.literal('press'), key: z.string().min(1).max(50) });
const scroll = z.object({
  type: z.literal('scroll'),
  direction: z.enum(['up', 'down']).default('down'),
  selector: selector.optional(),
});
const scrape = z.object({ type: z.literal('scrape') });
const executeJavascript = z.object({
  type: z.literal('executeJavascript'),
  script: z.string().min(1).max(50_000),
});

const SCHEMAS = { wait, click, screenshot, write, press, scroll, scrape, executeJavascript } as const;

type FirecrawlAction = z.output<(typeof SCHEMAS)[keyof typeof SCHEMAS]>;

function readAction(item: unknown, at: number, issues: Issue[]): FirecrawlAction | null {
  const type = typeof item === 'object' && item !== null ? (item as { type?: unknown }).type : undefined;
  if (typeof type !== 'string' || !Object.hasOwn(SCHEMAS, type)) {
    const message =
      typeof type === 'string' && UNSUPPORTED_TYPES.has(type)
        ? `the action "${type}" is not supported by this service`
        : `must be one of ${SUPPORTED_TYPES.join(', ')}`;
    issues.push({ path: [at, 'type'], message });
    return null;
  }
  const parsed = SCHEMAS[type as keyof typeof SCHEMAS].safeParse(item);
  if (parsed.success) return parsed.data;
  issues.push(...nestedIssues(parsed.error.issues, [at]));
  return null;
}

/** Firecrawl's `actions`: each one checked alone (their order is checked with `waitFor`, by planRender). */
export const actionsSchema = z
  .array(z.unknown())
  .max(MAX_ACTIONS)
  .default([])
  .transform((items, ctx) => {
    const issues: Issue[] = [];
    const actions = items.map((item, at) => readAction(item, at, issues));
    return report(issues, ctx) ? z.NEVER : (actions as FirecrawlAction[]);
  });

interface RenderPlan {
  steps: RenderAction[];
  outputs: ActionOutputs;
  /** The first screenshot action as asked; null without one. */
  screenshot: ScreenshotAsk | null;
  /** Milliseconds of waiting, as Firecrawl counts it. */
  totalWaitMs: number;
}

type PlannedRender = { ok: true; plan: RenderPlan } | { ok: false; issues: Issue[] };

const waitSteps = (ms: number): RenderAction[] => {
  const steps: RenderAction[] = [];
  for (let left = ms; left > 0; left -= MAX_WAIT_STEP_MS)
    steps.push({ type: 'wait', ms: Math.min(left, MAX_WAIT_STEP_MS) });
  return steps;
};

const CHANGES_PAGE = new Set(['click', 'write', 'press', 'scroll', 'executeJavascript']);

/**
 * `waitFor` then `actions` as render steps (docs/api.md §14). Firecrawl's `write` types into
 * what the last click focused, so it needs a click before it. Screenshots and scrapes are
 * taken once, after the last step, so no step that changes the page may follow them.
 * Issue paths are relative to the scrape options.
 */
export function planRender(waitFor: number, actions: readonly FirecrawlAction[]): PlannedRender {
  const issues: Issue[] = [];
  const steps = waitSteps(waitFor);
  const outputs: ActionOutputs = { screenshots: 0, scrapes: 0, scripts: 0 };
  let totalWaitMs = waitFor;
  let focused: string | null = null;
  let capturedAt: number | null = null;
  let screenshot: ScreenshotAsk | null = null;
  actions.forEach((action, at) => {
    if (capturedAt !== null && CHANGES_PAGE.has(action.type))
      issues.push({
        path: ['actions', capturedAt],
        message: `${actions[capturedAt]!.type === 'screenshot' ? 'the screenshot is taken' : 'the page is captured'} after the last action here, so no click, write, press, scroll or executeJavascript may follow it`,
      });
    switch (action.type) {
      case 'wait':
        if (action.selector !== undefined) {
          steps.push({ type: 'wait_for', selector: action.selector, timeout_ms: 10_000 });
          totalWaitMs += SELECTOR_WAIT_MS;
        } else {
          steps.push(...waitSteps(action.milliseconds ?? 0));
          totalWaitMs += action.milliseconds ?? 0;
        }
        break;
      case 'click':
        steps.push({ type: 'click', selector: action.selector, ...(action.all && { all: true }) });
        focused = action.selector;
        break;
      case 'write':
        if (focused === null)
          issues.push({
            path: ['actions', at],
            message: 'a write action needs a click action before it, on the element to type into',
          });
        else steps.push({ type: 'type', selector: focused, text: action.text });
        break;
      case 'press':
        steps.push({ type: 'press', key: action.key });
        break;
      case 'scroll':
        steps.push({
          type: 'scroll',
          to: action.direction === 'up' ? 'top' : 'bottom',
          times: 1,
          ...(action.selector !== undefined && { selector: action.selector }),
        });
        break;
      case 'executeJavascript':
        steps.push({ type: 'execute_javascript', script: action.script });
        outputs.scripts += 1;
        break;
      case 'screenshot':
        outputs.screenshots += 1;
        screenshot ??= action;
        capturedAt ??= at;
        break;
      case 'scrape':
        outputs.scrapes += 1;
        capturedAt ??= at;
        break;
    }
  });
  if (totalWaitMs > MAX_TOTAL_WAIT_MS)
    issues.push({
      path: ['actions'],
      message: 'Total wait time (waitFor + wait actions) cannot exceed 60 seconds',
    });
  else if (steps.length > MAX_RENDER_STEPS)
    issues.push({
      path: ['actions'],
      message: `needs ${steps.length} render steps, more than the ${MAX_RENDER_STEPS} this service runs (a wait takes one step per 10 seconds)`,
    });
  return issues.length > 0
    ? { ok: false, issues }
    : { ok: true, plan: { steps, outputs, screenshot, totalWaitMs } };
}
