// Imports one entry point and prints its export names, one a line.
const module = await import(process.argv[2]);
console.log(Object.keys(module).sort().join('\n'));
