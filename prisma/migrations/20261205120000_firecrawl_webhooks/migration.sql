-- Firecrawl-style webhooks of crawls and batch scrapes (docs/api.md §18): a job-scoped webhook row
-- per crawl or batch that asked for one, and the account's compatible-API signing secret.

-- CreateEnum
CREATE TYPE "WebhookStyle" AS ENUM ('service', 'firecrawl');

-- AlterTable
ALTER TABLE "webhooks" ADD COLUMN "job_id" TEXT;
ALTER TABLE "webhooks" ADD COLUMN "style" "WebhookStyle" NOT NULL DEFAULT 'service';
ALTER TABLE "webhooks" ADD COLUMN "event_prefix" TEXT;
ALTER TABLE "webhooks" ADD COLUMN "headers" JSONB;
ALTER TABLE "webhooks" ADD COLUMN "metadata" JSONB;

-- CreateIndex
CREATE INDEX "webhooks_job_id_idx" ON "webhooks"("job_id");

-- AddForeignKey
ALTER TABLE "webhooks" ADD CONSTRAINT "webhooks_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "jobs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- CreateTable
CREATE TABLE "firecrawl_webhook_secrets" (
    "user_id" TEXT NOT NULL,
    "secret_encrypted" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "firecrawl_webhook_secrets_pkey" PRIMARY KEY ("user_id")
);

-- AddForeignKey
ALTER TABLE "firecrawl_webhook_secrets" ADD CONSTRAINT "firecrawl_webhook_secrets_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
