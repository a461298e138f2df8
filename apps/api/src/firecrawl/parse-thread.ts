// A thread that converts uploaded files (POST /v2/parse), so that a large or hostile file never
// holds up the API's event loop; the pool ends it past its time or heap limit.
import { decodeHtml } from '@scrapejobs/extraction';
import { parsedFileDocument } from '@scrapejobs/firecrawl';
import { serveTasks } from '@scrapejobs/sandbox';
import type { ParseTask } from './file-parser.ts';

serveTasks((task: ParseTask) =>
  parsedFileDocument(
    task.kind === 'html'
      ? { kind: 'html', html: decodeHtml(task.bytes, task.file.type || undefined) }
      : { kind: 'pdf', bytes: task.bytes },
    task.file,
    task.options,
  ),
);
