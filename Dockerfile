# One image for every process; the command picks the app (see docker-compose.yml).
FROM node:24-slim AS deps
WORKDIR /app
RUN npm install --global pnpm@10.34.8
COPY package.json pnpm-lock.yaml pnpm-workspace.yaml ./
COPY apps/api/package.json apps/api/
COPY apps/scraper-worker/package.json apps/scraper-worker/
COPY apps/webhook-worker/package.json apps/webhook-worker/
COPY packages/config/package.json packages/config/
COPY packages/contracts/package.json packages/contracts/
COPY packages/db/package.json packages/db/
COPY packages/extraction/package.json packages/extraction/
COPY packages/logging/package.json packages/logging/
COPY packages/queues/package.json packages/queues/
RUN pnpm install --frozen-lockfile

FROM deps AS build
COPY . .
RUN pnpm exec prisma generate && pnpm prune --prod --ignore-scripts

FROM node:24-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build --chown=node:node /app /app
USER node
EXPOSE 3000
CMD ["node", "apps/api/src/main.ts"]
