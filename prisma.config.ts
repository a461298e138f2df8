import { defineConfig } from 'prisma/config';

// Used by the Prisma CLI (generate everywhere; migrate deploy where its engine can be downloaded).
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: process.env.DATABASE_URL ?? 'postgresql://root@127.0.0.1:5432/scrapejobs' },
});
