import { MAX_EXTRACT_PROMPT, MAX_EXTRACT_SCHEMA_BYTES } from '@scrapejobs/contracts';
import type { StoredExtract } from '@scrapejobs/domain';
import { fieldError } from './fields.ts';
import { html, type SafeHtml } from './html.ts';

/** The language-model part of the job form as typed (docs/api.md §24). */
export interface ExtractFormValues {
  /** A JSON Schema of an object, as JSON text; empty for none. */
  schema: string;
  prompt: string;
}

export const emptyExtractForm = (): ExtractFormValues => ({ schema: '', prompt: '' });

/** The extraction fieldset of the job form, with the API's errors at the schema and prompt. */
export function extractFieldset(v: ExtractFormValues, errors: Record<string, string>): SafeHtml {
  const schema = fieldError(errors, 'err-extract-schema', (k) => k === 'extract' || k === 'extract.schema');
  const prompt = fieldError(errors, 'err-extract-prompt', (k) => k === 'extract.prompt');
  return html`<fieldset>
<legend>Extraction by the language model</legend>
<p class="hint">The operator’s language model reads each page and answers one object: its top-level properties are the page’s record, checked against the schema. Give a schema, a prompt, or both; the queries above then stay empty.</p>
<div class="field"><label for="extract-schema">JSON Schema</label><p class="hint" id="hint-extract-schema">Of an object, at most ${MAX_EXTRACT_SCHEMA_BYTES / 1024} KiB, such as <code>{"type": "object", "properties": {"price": {"type": "number"}}}</code>.</p><textarea id="extract-schema" name="extract_schema" class="mono" rows="6"${schema.aria || html` aria-describedby="hint-extract-schema"`}>${v.schema}</textarea>${schema.text}</div>
<div class="field"><label for="extract-prompt">Prompt</label><p class="hint" id="hint-extract-prompt">What to extract, in words (at most ${MAX_EXTRACT_PROMPT.toLocaleString('en')} characters).</p><textarea id="extract-prompt" name="extract_prompt" rows="3" maxlength="${MAX_EXTRACT_PROMPT}"${prompt.aria || html` aria-describedby="hint-extract-prompt"`}>${v.prompt}</textarea>${prompt.text}</div>
</fieldset>`;
}

/** A job's extraction setting for its page: its record fields, schema and prompt. */
export function extractSettings(extract: StoredExtract | null): SafeHtml {
  if (!extract) return html`<dt>Language model</dt><dd>off</dd>`;
  const fields =
    extract.fields.length === 0
      ? html`<span class="muted">the object’s own properties</span>`
      : html`${extract.fields.map((f, i) => html`${i > 0 ? ', ' : ''}<span class="mono">${f}</span>`)}`;
  return html`<dt>Language model</dt><dd>one object a page; record fields ${fields}</dd>
<dt>Extraction schema</dt><dd>${extract.schema ? html`<pre class="mono wrap">${JSON.stringify(extract.schema, null, 2)}</pre>` : html`<span class="muted">none</span>`}</dd>
<dt>Extraction prompt</dt><dd class="wrap">${extract.prompt ?? html`<span class="muted">none</span>`}</dd>`;
}
