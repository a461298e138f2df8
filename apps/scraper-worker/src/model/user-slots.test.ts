import { describe, expect, it } from '@jest/globals';
import { UserSlots } from './user-slots.ts';

describe('UserSlots', () => {
  it("holds a user's calls past the limit until one ends, in order, without holding other users", async () => {
    const slots = new UserSlots(2);
    const signal = new AbortController().signal;
    const first = await slots.take('a', signal);
    await slots.take('a', signal);
    const order: string[] = [];
    const third = slots.take('a', signal).then((release) => {
      order.push('third');
      return release;
    });
    const fourth = slots.take('a', signal).then(() => order.push('fourth'));
    await slots.take('b', signal);
    order.push('b');
    expect(order).toEqual(['b']);
    first();
    first(); // a second release is ignored
    (await third)();
    await fourth;
    expect(order).toEqual(['b', 'third', 'fourth']);
  });

  it('stops waiting with the signal, and gives nothing away for it', async () => {
    const slots = new UserSlots(1);
    const release = await slots.take('a', new AbortController().signal);
    const controller = new AbortController();
    const waiting = slots.take('a', controller.signal);
    controller.abort(new Error('cancelled'));
    await expect(waiting).rejects.toThrow('cancelled');
    release();
    expect(slots.users).toBe(0);
  });
});
