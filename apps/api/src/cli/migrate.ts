// Applies pending migrations (prisma/migrations) and exits; used before the processes start.
import { commonEnv, parseConfig } from '@scrapejobs/config';
import { applyMigrations } from '@scrapejobs/db';
import { z } from 'zod';

const config = parseConfig(z.object({ DATABASE_URL: commonEnv.DATABASE_URL }), process.env);
const applied = await applyMigrations(config.DATABASE_URL);
console.log(JSON.stringify({ level: 'info', msg: 'migrations applied', applied }));
