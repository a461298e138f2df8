import { isDatabaseUnavailable } from './index.ts';

describe('isDatabaseUnavailable', () => {
  it.each([
    ['an unreachable server', { code: 'ECONNREFUSED' }],
    ['a transaction that could not start or ran out of time', { code: 'P2028' }],
    ['a deadlock or write conflict through Prisma', { code: 'P2034' }],
    ['a deadlock', { code: '40P01' }],
    ['a serialization failure', { code: '40001' }],
    ['a lock not available', { code: '55P03' }],
    ['any of them as the cause', { message: 'wrapped', cause: { code: '40P01' } }],
  ])('is true for %s', (_, err) => {
    expect(isDatabaseUnavailable(err)).toBe(true);
  });

  it.each([
    ['a unique violation', { code: '23505' }],
    ['a record not found', { code: 'P2025' }],
    ['a plain error', new Error('boom')],
  ])('is false for %s', (_, err) => {
    expect(isDatabaseUnavailable(err)).toBe(false);
  });
});
