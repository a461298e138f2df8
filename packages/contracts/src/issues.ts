import type { z } from 'zod';

type Path = readonly PropertyKey[];

/** `['queries', 0, 'type']` → `queries[0].type`; the empty path is the body itself. */
export function formatPath(path: Path): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out ? `.${String(seg)}` : String(seg);
  }
  return out || 'body';
}

const NOUN: Record<string, string> = { string: 'character', array: 'item', set: 'item', file: 'byte' };

const counted = (n: number | bigint, noun: string) => `${n} ${noun}${Number(n) === 1 ? '' : 's'}`;

// zod 4 leaves the input out of issues, so a missing value is recognised by its message.
const isMissing = (issue: z.core.$ZodIssueInvalidType) =>
  'input' in issue ? issue.input === undefined : /received undefined$/.test(issue.message);

function typeName(expected: string): string {
  if (expected === 'int') return 'an integer';
  if (expected === 'array' || expected === 'object' || expected === 'integer') return `an ${expected}`;
  return `a ${expected}`;
}

function issueText(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      return isMissing(issue) ? 'is required' : `must be ${typeName(issue.expected)}`;
    case 'too_small': {
      const noun = NOUN[issue.origin];
      if (noun) return `must have at least ${counted(issue.minimum, noun)}`;
      return issue.inclusive ? `must be at least ${issue.minimum}` : `must be greater than ${issue.minimum}`;
    }
    case 'too_big': {
      const noun = NOUN[issue.origin];
      if (noun) return `must have at most ${counted(issue.maximum, noun)}`;
      return issue.inclusive ? `must be at most ${issue.maximum}` : `must be less than ${issue.maximum}`;
    }
    case 'invalid_value':
      return `must be one of ${issue.values.map(String).join(', ')}`;
    default:
      return issue.message;
  }
}

/**
 * An empty details object. It has no prototype, so a client's field named `__proto__`,
 * `constructor` or `toString` is an ordinary key of it (JSON.stringify writes it as such).
 */
export const newDetails = (): Record<string, string> => Object.create(null) as Record<string, string>;

/**
 * Field paths a 400 names at most: a body of thousands of wrong values gets an answer of bounded
 * size (docs/api.md §9).
 */
export const MAX_DETAILS = 100;

/**
 * Every violation keyed by its field path, the first text per path, the first MAX_DETAILS paths;
 * unknown keys get their own path.
 */
export function issuesToDetails(issues: readonly z.core.$ZodIssue[]): Record<string, string> {
  const details = newDetails();
  let count = 0;
  const put = (path: Path, text: string) => {
    const key = formatPath(path);
    if (count < MAX_DETAILS && !Object.hasOwn(details, key)) {
      details[key] = text;
      count++;
    }
  };
  for (const issue of issues) {
    if (count === MAX_DETAILS) break;
    if (issue.code === 'unrecognized_keys')
      for (const k of issue.keys) put([...issue.path, k], 'unknown field');
    else put(issue.path, issueText(issue));
  }
  return details;
}
