/**
 * Turns single calls into batches: calls made in the same turn of the event loop are run
 * together by `run`, which returns one output per input, in order. Under load many attempts
 * reach the database at once and share one round trip; alone, a call waits one setImmediate.
 */
export function microBatch<I, O>(
  run: (inputs: I[]) => Promise<O[]>,
  maxSize = 500,
): (input: I) => Promise<O> {
  let pending: { input: I; resolve: (o: O) => void; reject: (e: unknown) => void }[] = [];
  const flush = () => {
    const batch = pending;
    pending = [];
    run(batch.map((p) => p.input)).then(
      (outputs) => {
        for (const [i, p] of batch.entries()) p.resolve(outputs[i]!);
      },
      (err: unknown) => {
        for (const p of batch) p.reject(err);
      },
    );
  };
  return (input) =>
    new Promise<O>((resolve, reject) => {
      if (pending.length === 0) setImmediate(flush);
      pending.push({ input, resolve, reject });
      if (pending.length >= maxSize) flush();
    });
}
