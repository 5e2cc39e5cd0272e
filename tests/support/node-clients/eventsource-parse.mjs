// Parse SSE files with the `eventsource-parser` package, fed in pseudo-random chunk sizes so that
// chunk boundaries fall everywhere (inside fields, between CR and LF, inside UTF-8 text).
// Usage: node eventsource-parse.mjs FILE... ; prints {FILE: {retry, comments, events}} as JSON.
import { createParser } from 'eventsource-parser';
import { readFileSync } from 'node:fs';

const out = {};
for (const file of process.argv.slice(2)) {
  const events = [];
  const comments = [];
  let retry = null;
  const parser = createParser({
    onEvent: (e) => events.push({ id: e.id ?? null, event: e.event ?? null, data: e.data }),
    onRetry: (r) => { if (retry === null) retry = r; },
    onComment: (c) => comments.push(c),
    onError: (e) => { throw e; },
  });
  const text = readFileSync(file, 'utf8');
  let seed = 12345;
  for (let i = 0; i < text.length;) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    const n = 1 + (seed % 97);
    parser.feed(text.slice(i, i + n));
    i += n;
  }
  out[file] = { retry, comments, events };
}
process.stdout.write(JSON.stringify(out));
