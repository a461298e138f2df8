import { afterAll } from '@jest/globals';
import { killStragglers } from './support/processes.ts';

// After every test file's tests (jest runs this hook before the file's own afterAll hooks, which then
// find their processes ended): what the file started is SIGKILLed (test/support/processes.ts).
afterAll(killStragglers);
