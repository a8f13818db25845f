// The interop cases in headless Chromium (Debian's chromium), with the SIMD128 module, the
// scalar one, and with WebAssembly.validate refusing the SIMD probe (the loader must fall
// back; V8 has no switch that turns SIMD128 off), and with a CSP that forbids workers
// (decodeOpenAIAsync falls back to the loop).
// Skips loudly without chromium (scripts/install-deps.sh installs it).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { readFile } from 'node:fs/promises';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inflateSync } from 'node:zlib';
import { zlibCasesJson } from './zlib_cases.mjs';
import { crc32 } from '../../tests/interop/seed_codec.mjs';

const root = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const chromium = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
const types = { '.json': 'application/json', '.mjs': 'text/javascript', '.js': 'text/javascript', '.html': 'text/html', '.wasm': 'application/wasm' };

let server, base;
const results = new Map(); // run id -> resolve(the page's JSON text)
let runs = 0;
before(async () => {
  if (!chromium) return;
  server = http.createServer(async (req, res) => {
    try {
      const url = new URL(req.url, 'http://x');
      let body, path;
      if (url.pathname === '/result' && req.method === 'POST') {
        let text = '';
        for await (const c of req) text += c;
        results.get(url.searchParams.get('run'))?.(text);
        res.end();
        return;
      }
      if (url.pathname === '/zlib-cases.json') {
        body = zlibCasesJson();
        path = 'x.json';
      } else if (url.pathname === '/seed.mjs') {
        // the seed codec without its Node driver (imports of node:* and the CLI block)
        const src = await readFile(join(root, 'tests/interop/seed_codec.mjs'), 'utf8');
        body = src.replace(/^import .* from 'node:.*';$/gm, '').split('\nif (process.argv[1]')[0];
        path = 'x.mjs';
      } else {
        path = normalize(url.pathname).replace(/^\/+/, '');
        if (!path.startsWith('js/') || path.includes('node_modules')) throw new Error('404');
        body = await readFile(join(root, path));
      }
      res.setHeader('content-type', types[path.slice(path.lastIndexOf('.'))] ?? 'application/octet-stream');
      // ?csp=1: a page whose policy forbids workers (decodeOpenAIAsync must decode on the loop)
      if (url.searchParams.get('csp') === '1') res.setHeader('content-security-policy', "worker-src 'none'");
      res.end(body);
    } catch { res.statusCode = 404; res.end(); }
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${server.address().port}`;
});
after(() => server?.close());

// Opens the page in headless Chromium and waits (real time, at most 60 s) for the result it
// POSTs to /result; then stops the browser. Chromium runs in its own process group and the
// whole group is killed: killing only the browser process left its helpers (renderer,
// crashpad) writing into the profile while it was being removed (ENOTEMPTY, 1 run in 2).
function page(query, extra = []) {
  const profile = mkdtempSync(join(tmpdir(), 'embd-chromium-'));
  const id = String(++runs);
  let child, timer;
  const got = new Promise((res, rej) => {
    results.set(id, res);
    child = spawn(chromium, ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', `--user-data-dir=${profile}`,
      ...extra, `${base}/js/test/browser/interop.html?${query}&run=${id}`], { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
    let err = '';
    child.stderr.on('data', (d) => { if (err.length < 4000) err += d; });
    child.on('error', rej);
    child.on('exit', (code) => rej(new Error(`chromium exited (${code}) before the page reported: ${err.slice(0, 1000)}`)));
    timer = setTimeout(() => rej(new Error(`no result from the page in 60 s: ${err.slice(0, 1000)}`)), 60000);
  });
  const done = () => {
    clearTimeout(timer);
    results.delete(id);
    const exited = child.exitCode !== null || child.signalCode !== null ? Promise.resolve()
      : new Promise((r) => { child.once('exit', r); try { process.kill(-child.pid, 'SIGKILL'); } catch { child.kill('SIGKILL'); } });
    // a helper outside the group (if any) may still be closing files: retry the removal
    return exited.then(() => rmSync(profile, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 }));
  };
  return got.then((text) => done().then(() => JSON.parse(text)), (e) => done().then(() => { throw e; }));
}

const skip = !chromium && 'SKIP: chromium not installed (scripts/install-deps.sh)';
// Frames the page made with encodeEmbeddingAsync (CompressionStream): node:zlib inflates
// their payloads to the values' bytes, the seed's CRC-32 checks their CRCs.
function checkEncoded(encoded) {
  assert.equal(encoded?.length, 3);
  for (const { flags, dtype, frame, values } of encoded) {
    const f = Buffer.from(frame, 'base64');
    assert.equal(f.readUInt32LE(12), crc32(f.subarray(0, 12)));
    assert.equal(f[5], flags);
    const clen = f.readUInt32LE(16);
    assert.equal(f.length, 20 + clen + (flags & 2 ? 4 : 0));
    if (flags & 2) assert.equal(f.readUInt32LE(20 + clen), crc32(f.subarray(16, 20 + clen)));
    const raw = inflateSync(f.subarray(20, 20 + clen));
    const v = Uint32Array.from(values);
    const want = dtype === 'f32' ? Buffer.from(v.buffer)
      : Buffer.from(Uint16Array.from(v, (x) => (x + 0x7fff + ((x >>> 16) & 1)) >>> 16).buffer); // bf16, nearest-even
    assert.deepEqual(raw, want, `flags ${flags} ${dtype}`);
  }
}
test('Chromium: SIMD128 module (auto)', { skip }, async () => {
  const r = await page('simd=auto');
  assert.equal(r.error, undefined, r.error);
  assert.deepEqual(r.failures, []);
  checkEncoded(r.encoded);
  assert.equal(r.workerState, 'running', 'decodeOpenAIAsync ran in a Web Worker');
  assert.ok(r.pass >= 25, `${r.pass} checks`);
  assert.equal(r.validate, true);
  assert.equal(r.simd, true);
  assert.equal(r.active, 'wasm-simd128');
});
test('Chromium: scalar module', { skip }, async () => {
  const r = await page('simd=0');
  assert.equal(r.error, undefined, r.error);
  assert.deepEqual(r.failures, []);
  checkEncoded(r.encoded);
  assert.equal(r.workerState, 'running', 'decodeOpenAIAsync ran in a Web Worker');
  assert.equal(r.simd, false);
  assert.equal(r.active, 'scalar');
});
test('Chromium, WebAssembly.validate refusing SIMD128: the loader falls back to the scalar module', { skip }, async () => {
  const r = await page('simd=auto&novalidate=1');
  assert.equal(r.error, undefined, r.error);
  assert.deepEqual(r.failures, []);
  checkEncoded(r.encoded);
  assert.equal(r.workerState, 'running', 'decodeOpenAIAsync ran in a Web Worker');
  assert.equal(r.validate, false, 'the probe refused');
  assert.equal(r.simd, false);
  assert.equal(r.active, 'scalar');
});
test('Chromium, a CSP forbidding workers: decodeOpenAIAsync decodes on the loop and says so', { skip }, async () => {
  const r = await page('simd=auto&csp=1');
  assert.equal(r.error, undefined, r.error);
  assert.deepEqual(r.failures, []);
  assert.equal(r.workerState, 'unavailable');
  assert.equal(r.simd, true);
});
