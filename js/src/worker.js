// The worker behind Embd.decodeOpenAIAsync on the WebAssembly backend (embd.js, "decodeOpenAIAsync
// off the event loop"): its own instance of the main instance's compiled WebAssembly.Module,
// posted to it (no second compile, and a runtime that forbids compiling still works), and
// decodeOpenAI run on it, so the body's parse happens here while the caller's event loop turns.
// Node (node:worker_threads) and browsers (a module Worker) speak the same three messages:
//   worker -> {up: true}                      once it listens (a message sent before that
//                                             could be lost in a browser)
//   main   -> {module}                        worker -> {ready: true} | {failed: message}
//   main   -> {id, body, length, dtype, byteOrder, dims}  (body: the ArrayBuffer of `length`
//                                             UTF-8 bytes, transferred)
//   worker -> {id, input, matrix, count, dims, model, usage}  (matrix: the result's
//                                             ArrayBuffer, transferred)
//             ArrayBuffers, not views: Deno's node:worker_threads copies a view element by
//             element (seconds for 20 MB), an ArrayBuffer at once
//           | {id, input, error: {name, message, code, offset, result}}
//             input: body's ArrayBuffer, transferred back for the next call to reuse
import { load } from './embd.js';

const IS_NODE = typeof process !== 'undefined' && !!process.versions?.node;
let embd = null;

function reply(post, msg) {
  if (msg.module) {
    load({ module: msg.module }).then(
      (e) => { embd = e; post({ ready: true }); },
      (err) => post({ failed: String(err?.message ?? err) }));
    return;
  }
  const { id, body, length, dtype, byteOrder, dims } = msg;
  let r;
  try {
    r = embd.decodeOpenAI(new Uint8Array(body, 0, length), { dtype, byteOrder, dims });
  } catch (err) {
    post({ id, input: body, error: { name: err?.name, message: String(err?.message ?? err), code: err?.code, offset: err?.offset, result: err?.result } }, [body]);
    return;
  }
  // The matrix owns its ArrayBuffer whole (embd.js newFloats), so transferring it moves
  // exactly the result and copies nothing.
  post({ id, input: body, matrix: r.matrix.buffer, count: r.count, dims: r.dims, model: r.model, usage: r.usage }, [r.matrix.buffer, body]);
}

if (IS_NODE) {
  const { parentPort } = await import('node:worker_threads');
  const post = (m, t) => parentPort.postMessage(m, t);
  parentPort.on('message', (msg) => reply(post, msg));
  post({ up: true });
} else {
  const post = (m, t) => self.postMessage(m, t);
  self.onmessage = (ev) => reply(post, ev.data);
  post({ up: true });
}
