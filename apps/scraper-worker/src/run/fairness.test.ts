import { type HeldRun, runsToHandBack } from './fairness.ts';

const run = (runId: string, userId: string, since: number): HeldRun => ({ runId, userId, since });

describe('runsToHandBack', () => {
  const full = [
    run('a1', 'alice', 0),
    run('a2', 'alice', 1_000),
    run('a3', 'alice', 2_000),
    run('b1', 'bob', 0),
  ];

  it("hands back the newest run of the user holding most places when another user's run waits", () => {
    expect(runsToHandBack(full, ['carol'], 10_000, 2_000)).toEqual(['a3']);
  });

  it('hands back one run more for each run queued before the waiting one', () => {
    expect(runsToHandBack(full, ['alice', 'carol'], 10_000, 2_000)).toEqual(['a3', 'a2']);
    // Never a user's last place, however long the queue.
    expect(runsToHandBack(full, ['alice', 'alice', 'alice', 'carol'], 10_000, 2_000)).toEqual(['a3', 'a2']);
  });

  it('asks nothing when the waiting runs belong to users already served here', () => {
    expect(runsToHandBack(full, ['alice', 'bob'], 10_000, 2_000)).toEqual([]);
    expect(runsToHandBack(full, [], 10_000, 2_000)).toEqual([]);
  });

  it('never asks a user holding a single place to give way', () => {
    const oneEach = [run('a1', 'alice', 0), run('b1', 'bob', 0), run('c1', 'carol', 0)];
    expect(runsToHandBack(oneEach, ['dave'], 10_000, 2_000)).toEqual([]);
  });

  it('lets a run that has just started have its turn first', () => {
    expect(runsToHandBack(full, ['carol'], 3_000, 2_000)).toEqual(['a2']);
    expect(runsToHandBack(full, ['carol'], 2_500, 2_000)).toEqual(['a1']);
    expect(runsToHandBack(full, ['carol'], 1_500, 2_000)).toEqual([]);
  });
});
