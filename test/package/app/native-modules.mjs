// Imports one module and prints the native modules (`.node` files) this process has loaded, as JSON.
import { readFileSync } from 'node:fs';

await import(process.argv[2]);
const mapped = readFileSync('/proc/self/maps', 'utf8')
  .split('\n')
  .map((line) => line.trim().split(/\s+/)[5])
  .filter((path) => path?.endsWith('.node'));
console.log(JSON.stringify([...new Set(mapped)]));
