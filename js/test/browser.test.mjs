// The interop cases in headless Chromium (Debian's chromium), with the SIMD128 module, the
// scalar one, and with WebAssembly.validate refusing the SIMD probe (the loader must fall
// back; V8 has no switch that turns SIMD128 off).
// Skips loudly without chromium (scripts/install-deps.sh installs it).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { readFile } from 'node:fs/promises';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const chromium = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
const types = { '.mjs': 'text/javascript', '.js': 'text/javascript', '.html': 'text/html', '.wasm': 'application/wasm' };

let server, base;
before(async () => {
  if (!chromium) return;
  server = http.createServer(async (req, res) => {
    try {
      const url = new URL(req.url, 'http://x');
      let body, path;
      if (url.pathname === '/seed.mjs') {
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
      res.end(body);
    } catch { res.statusCode = 404; res.end(); }
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${server.address().port}`;
});
after(() => server?.close());

function page(query, extra = []) {
  const profile = mkdtempSync(join(tmpdir(), 'embd-chromium-'));
  return new Promise((res, rej) => {
    execFile(chromium, ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', `--user-data-dir=${profile}`,
      '--virtual-time-budget=20000', ...extra, '--dump-dom', `${base}/js/test/browser/interop.html?${query}`],
    { timeout: 60000, maxBuffer: 1 << 20 }, (err, stdout) => {
      rmSync(profile, { recursive: true, force: true });
      if (err && !stdout) return rej(err);
      const m = /<pre id="out">([^<]*)<\/pre>/.exec(stdout);
      if (!m) return rej(new Error(`no result in the page: ${stdout.slice(0, 500)}`));
      res(JSON.parse(m[1].replace(/&quot;/g, '"').replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>')));
    });
  });
}

const skip = !chromium && 'SKIP: chromium not installed (scripts/install-deps.sh)';
test('Chromium: SIMD128 module (auto)', { skip }, async () => {
  const r = await page('simd=auto');
  assert.equal(r.error, undefined, r.error);
  assert.deepEqual(r.failures, []);
  assert.ok(r.pass >= 25, `${r.pass} checks`);
  assert.equal(r.validate, true);
  assert.equal(r.simd, true);
  assert.equal(r.active, 'wasm-simd128');
});
test('Chromium: scalar module', { skip }, async () => {
  const r = await page('simd=0');
  assert.equal(r.error, undefined, r.error);
  assert.deepEqual(r.failures, []);
  assert.equal(r.simd, false);
  assert.equal(r.active, 'scalar');
});
test('Chromium, WebAssembly.validate refusing SIMD128: the loader falls back to the scalar module', { skip }, async () => {
  const r = await page('simd=auto&novalidate=1');
  assert.equal(r.error, undefined, r.error);
  assert.deepEqual(r.failures, []);
  assert.equal(r.validate, false, 'the probe refused');
  assert.equal(r.simd, false);
  assert.equal(r.active, 'scalar');
});
