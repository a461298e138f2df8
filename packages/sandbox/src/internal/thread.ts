import { parentPort, type Transferable } from 'node:worker_threads';
import type { ReplyMessage, TaskMessage } from './protocol.ts';

/** Own enumerable fields of an error that survive structured cloning (code, limit, …). */
function fieldsOf(err: object): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(err)) {
    if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) fields[key] = value;
  }
  return fields;
}

/**
 * The thread side of a SandboxPool: answers each task with `handler`'s value, or with the error it
 * threw (name, message and its plain fields, rebuilt as a TaskError in the pool's thread).
 */
export function serveTasks<In, Out>(
  handler: (input: In) => Out | Promise<Out>,
  transferOf: (value: Out) => Transferable[] = () => [],
): void {
  const port = parentPort;
  if (!port) throw new Error('serveTasks must run in a worker thread');
  port.on('message', async ({ input }: TaskMessage) => {
    let reply: ReplyMessage;
    let transfer: Transferable[] = [];
    try {
      const value = await handler(input as In);
      reply = { ok: true, value };
      transfer = transferOf(value);
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err));
      reply = { ok: false, error: { name: error.name, message: error.message, fields: fieldsOf(error) } };
    }
    port.postMessage(reply, transfer);
  });
}
