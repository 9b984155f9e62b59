/** A preview run's result (the `kapps preview -o json` document) printed as `kapps preview` prints it. */
import { ServerError } from './http.js';
import { formatPreviewDetails, formatPreviewTable, type PreviewDocument } from '../../release/index.js';

/** Print the document as a table with details, or as JSON; returns whether anything would change. */
export function printPreviewDocument(text: string, output: 'table' | 'json', origin: string): boolean {
  let document: PreviewDocument;
  try {
    document = JSON.parse(text) as PreviewDocument;
  } catch {
    throw new ServerError(`${origin} sent a preview result that is not JSON`);
  }
  if (!Array.isArray(document.kapps)) throw new ServerError(`${origin} sent a preview result without kapps`);
  if (document.refreshed) {
    // As `kapps preview --refresh` says it.
    process.stderr.write(
      document.refreshed.length
        ? `Refresh: ran the output phase of ${document.refreshed.join(', ')} to read their live outputs (nothing was changed).\n`
        : 'Refresh: no installed, unchanged kapp declares outputs; nothing was read.\n',
    );
  }
  const revision = document.basedOnRevision;
  const against = revision === null ? 'no previous release' : `release ${revision}`;
  const rows = document.kapps.map((k) => ({ id: k.id, action: k.action }));
  if (output === 'json') {
    process.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
  } else if (!document.hasChanges) {
    process.stdout.write(
      rows.length === 0
        ? `No changes: no kapps to preview (against ${against}).\n`
        : `No changes: the ${rows.length} kapp(s) match ${against}.\n`,
    );
  } else {
    process.stdout.write(`Preview against ${against}:\n`);
    process.stdout.write(formatPreviewTable(rows));
    const details = formatPreviewDetails(document);
    if (details) process.stdout.write(`\n${details}`);
  }
  return document.hasChanges;
}
