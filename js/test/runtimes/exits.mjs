// The check async.test.mjs makes with `node --input-type=module -e` (which deno and bun
// cannot take), as a file any runtime can run: a process that used decodeOpenAIAsync (a
// body large enough for the worker) exits by itself. test-js.sh runs it with a timeout and
// compares the line; the values are the body's own (i / 8, exact in float32).
import { init, decodeOpenAIAsync } from '../../src/embd.js';
const e = await init();
const body = JSON.stringify({ data: [{ index: 0, embedding: Array.from({ length: 20000 }, (_, i) => i / 8) }], model: 'm' });
const r = await decodeOpenAIAsync(body);
console.log(r.count, r.dims, r.matrix[9], r.matrix[19999], e.workerState);
