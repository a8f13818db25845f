// node:test as the suite sees it under Deno (scripts/test-js.sh maps 'node:test' here with
// deno-import-map.json): Deno's own node:test, with the tests below left out, each saying
// why on stderr. The test files run unchanged; test-js.sh counts those lines against the
// entries here, so a renamed test cannot drop out (or stay in) silently.
const real = process.getBuiltinModule('node:test');

// test name -> why it cannot run under Deno (the package is not at fault in any of them)
const LEFT_OUT = new Map([
  ['a process that used it exits by itself (the idle worker holds nothing open)',
    "spawns process.execPath with Node's `--input-type=module -e` (deno has no such flags); "
    + 'test-js.sh runs the same check with `deno run` (runtimes/exits.mjs)'],
  ['property: mutated zlib streams give the same values, or the same code and offset, through node:zlib and DecompressionStream',
    "Deno's DecompressionStream('deflate') takes a cut stream without an error (78 9c 03 00 00 00 00: "
    + "no TypeError at close, as the Compression Streams spec asks), so zlib: 'streams' cannot match "
    + 'node:zlib on broken streams there; Deno\'s default is node:zlib'],
]);
const seen = new Set();

export function test(name, ...rest) {
  const why = LEFT_OUT.get(name);
  if (why === undefined) return real.test(name, ...rest);
  seen.add(name);
  console.error(`test-js: deno: LEFT OUT "${name}": ${why}`);
  return real.test.skip(name, ...rest);
}
export const { before, after, beforeEach, afterEach, describe, it, mock } = real;
export default test;

