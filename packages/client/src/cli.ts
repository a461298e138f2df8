#!/usr/bin/env node
// The `scrapejobs` command (package.json `bin`): see `scrapejobs --help` and the README.
import { runCli } from './internal/cli/main.ts';

process.exitCode = await runCli(process.argv.slice(2), process.env, process);
