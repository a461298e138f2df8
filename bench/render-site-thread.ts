/**
 * bench/render-site.ts in a worker thread of its own (bench/render-vs-crawlee.ts): the parent's
 * sampling of every process's memory, synchronous reads of /proc, would otherwise hold the
 * site's answers back, which costs a fast side more than a slow one.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { startRenderSite } from './render-site.ts';

const site = await startRenderSite(Number(workerData.jsEvery));
parentPort?.postMessage(site.origin);
