/** A run this process is executing: whose it is, and since when it holds its place here. */
export interface HeldRun {
  runId: string;
  userId: string;
  since: number;
}

/**
 * When every place of this process is taken and a run of a user none of whose runs it holds
 * waits, the runs to hand back so that run gets a place: one per run queued before it and one
 * for it, each the newest of the runs of the user holding the most places here, as long as that
 * user holds two or more and the run has had `minTurnMs` to work. A user with one run here is
 * never asked to give way, so no user is starved and no run thrashes.
 */
export function runsToHandBack(
  held: readonly HeldRun[],
  waitingUsers: readonly string[],
  now: number,
  minTurnMs: number,
): string[] {
  const byUser = new Map<string, HeldRun[]>();
  for (const run of held) byUser.set(run.userId, [...(byUser.get(run.userId) ?? []), run]);
  const firstUnserved = waitingUsers.findIndex((user) => !byUser.has(user));
  if (firstUnserved < 0) return [];
  const chosen: string[] = [];
  while (chosen.length <= firstUnserved) {
    let busiest: HeldRun[] = [];
    for (const runs of byUser.values()) if (runs.length > busiest.length) busiest = runs;
    if (busiest.length < 2) break;
    const ready = busiest.filter((run) => now - run.since >= minTurnMs);
    if (ready.length === 0) break;
    const newest = ready.reduce((a, b) => (b.since > a.since ? b : a));
    chosen.push(newest.runId);
    busiest.splice(busiest.indexOf(newest), 1);
  }
  return chosen;
}
