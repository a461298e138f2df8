import { formatPath, MAX_DETAILS, newDetails } from './issues.ts';

/** Why PostgreSQL cannot store `s` (text and jsonb refuse NUL; UTF-8 has no lone surrogate), or null. */
function unstorableReason(s: string): string | null {
  if (s.includes('\0')) return 'must not contain NUL characters';
  if (!s.isWellFormed()) return 'must not contain unpaired surrogates';
  return null;
}

interface Node {
  value: unknown;
  key: string | number | null;
  parent: Node | null;
}

const pathOf = (node: Node): (string | number)[] => {
  const path: (string | number)[] = [];
  for (let n: Node | null = node; n && n.key !== null; n = n.parent) path.push(n.key);
  return path.reverse();
};

/**
 * Every string and object key in a parsed JSON body or query string that no column could
 * store, keyed by its field path (`queries[0].query`; a bad key is reported at its own path), the
 * first MAX_DETAILS of them.
 * Iterative, with parent links instead of copied paths: a deeply nested body costs no stack.
 */
export function unstorableText(value: unknown): Record<string, string> {
  const details = newDetails();
  let count = 0;
  const report = (node: Node, text: string) => {
    const path = formatPath(pathOf(node));
    if (!Object.hasOwn(details, path)) {
      details[path] = text;
      count++;
    }
  };
  const stack: Node[] = [{ value, key: null, parent: null }];
  while (stack.length > 0 && count < MAX_DETAILS) {
    const node = stack.pop()!;
    const keyReason = typeof node.key === 'string' ? unstorableReason(node.key) : null;
    const v = node.value;
    if (keyReason) report(node, `field name ${keyReason}`);
    else if (typeof v === 'string') {
      const reason = unstorableReason(v);
      if (reason) report(node, reason);
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], key: i, parent: node });
    } else if (typeof v === 'object' && v !== null) {
      const keys = Object.keys(v);
      for (let i = keys.length - 1; i >= 0; i--)
        stack.push({ value: (v as Record<string, unknown>)[keys[i]!], key: keys[i]!, parent: node });
    }
  }
  return details;
}
