-- Structured extraction with the operator's language model (docs/api.md §24): a job's `extract`
-- ({schema, prompt, fields}) makes each page's record the object the model answers.

-- AlterTable
ALTER TABLE "jobs" ADD COLUMN "extract" JSONB;
