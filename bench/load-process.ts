/**
 * The ingress bench's load generator as a process of its own, so the bench process's CPU time during a
 * run is the receiver's alone. Reads `{ url, bodies }` from the JSON file it is given, POSTs every body
 * (at most `concurrency` in flight) and prints the LoadResult as one JSON line.
 */
import { readFileSync } from 'node:fs';
import { runLoad, type SignedBody } from './load.js';

const [file, concurrency] = process.argv.slice(2);
const { url, bodies } = JSON.parse(readFileSync(file!, 'utf8')) as { url: string; bodies: SignedBody[] };
const result = await runLoad(bodies.length, Number(concurrency), async (i) => {
  const { raw, headers } = bodies[i]!;
  const response = await fetch(url, { method: 'POST', headers, body: raw });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`answered ${response.status}: ${text.slice(0, 200)}`);
});
process.stdout.write(`${JSON.stringify(result)}\n`);
