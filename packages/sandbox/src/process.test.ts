import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProcessStopped, runInProcess, SandboxError, TaskError } from '@scrapejobs/sandbox';

const entry = new URL('../../../test/fixtures/sandbox-process.ts', import.meta.url);
const parent = new URL('../../../test/fixtures/sandbox-parent.ts', import.meta.url);

const run = (input: unknown, opts: { timeLimitMs?: number; memoryMb?: number; signal?: AbortSignal } = {}) =>
  runInProcess(input, { entry, timeLimitMs: 2_000, graceMs: 200, memoryMb: 64, ...opts });

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('runInProcess', () => {
  it("returns the child's answer, cloned with its typed arrays", async () => {
    const value = { n: 1, bytes: new Uint8Array([1, 2, 3]) };
    expect(await run({ kind: 'echo', value })).toEqual(value);
  });

  it('rejects with a TaskError carrying what the task threw', async () => {
    const err = await run({ kind: 'throw', message: 'no' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TaskError);
    expect(err).toEqual(
      expect.objectContaining({ name: 'RangeError', message: 'no', fields: { code: 'BAD_INPUT' } }),
    );
  });

  it('names the death of a child that aborts, exits or passes its heap or its time', async () => {
    const death = async (task: unknown, opts = {}) => {
      const err = (await run(task, opts).catch((e: unknown) => e)) as SandboxError;
      expect(err).toBeInstanceOf(SandboxError);
      return { limit: err.limit, message: err.message };
    };
    expect(await death({ kind: 'abort' })).toEqual({
      limit: 'crash',
      message: 'its process was ended by SIGABRT',
    });
    expect(await death({ kind: 'exit' })).toEqual({
      limit: 'crash',
      message: 'its process exited with code 3 without answering',
    });
    expect(await death({ kind: 'grow' })).toEqual({
      limit: 'memory',
      message: 'exceeded its memory limit of 64 MB',
    });
    expect(await death({ kind: 'spin' }, { timeLimitMs: 300 })).toEqual({
      limit: 'time',
      message: 'exceeded its time limit of 300 ms',
    });
  });

  it('kills the child on abort and rejects with the reason', async () => {
    const controller = new AbortController();
    const spinning = run({ kind: 'spin' }, { signal: controller.signal });
    setTimeout(() => controller.abort('stop'), 300);
    await expect(spinning).rejects.toBe('stop');
  });

  it('raises the oom_score_adj of the child, so that the kernel ends it first', async () => {
    expect(await run({ kind: 'oom-score' })).toBe('1000');
  });

  it('does not blame the task for a SIGTERM of its process', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sandbox-'));
    const file = join(dir, 'pid');
    const hanging = run({ kind: 'hang', file }, { timeLimitMs: 20_000 });
    while (!existsSync(file) || readFileSync(file, 'utf8') === '')
      await new Promise((r) => setTimeout(r, 20));
    process.kill(Number(readFileSync(file, 'utf8')), 'SIGTERM');
    await expect(hanging).rejects.toBeInstanceOf(ProcessStopped);
  });

  it('ends the child when its parent is killed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sandbox-'));
    const file = join(dir, 'pid');
    const proc = spawn(process.execPath, [parent.pathname, file], { stdio: 'ignore' });
    while (!existsSync(file) || readFileSync(file, 'utf8') === '')
      await new Promise((r) => setTimeout(r, 20));
    const child = Number(readFileSync(file, 'utf8'));
    expect(alive(child)).toBe(true);
    proc.kill('SIGKILL');
    for (let i = 0; i < 250 && alive(child); i++) await new Promise((r) => setTimeout(r, 20));
    expect(alive(child)).toBe(false);
  });
});
