// GET a URL and report its status; optionally check that the body contains a text.
//
//   node probe.mjs URL [--contains TEXT] [--within SECONDS]
//
// Exit code: 0 for a 2xx answer (containing TEXT when given), the first digit of the status otherwise (3, 4, 5),
// 1 when there is no answer or TEXT is missing.
/* global fetch, AbortSignal */
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { contains: { type: 'string' }, within: { type: 'string', default: '10' } },
});
const url = positionals[0];
if (!url || !/^https?:\/\//.test(url)) {
  console.error(`error: expected an http(s) URL, got '${url ?? ''}'`);
  process.exit(1);
}

let res;
try {
  res = await fetch(url, { signal: AbortSignal.timeout(Number(values.within) * 1000), redirect: 'manual' });
} catch (e) {
  console.error(`GET ${url}: no answer (${e.cause?.code ?? e.message})`);
  process.exit(1);
}
const body = await res.text();
console.log(`GET ${url}: ${res.status} ${res.statusText} (${body.length} bytes)`);
if (res.status < 200 || res.status > 299) process.exit(Math.floor(res.status / 100));
if (values.contains !== undefined) {
  if (!body.includes(values.contains)) {
    console.error(`the page does not contain '${values.contains}'`);
    process.exit(1);
  }
  console.log(`the page contains '${values.contains}'`);
}
