// The README's JavaScript example, run as written (the ```js block of "## JavaScript"),
// its printed lines checked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(fileURLToPath(new URL('../..', import.meta.url)));

test('README JavaScript example runs and prints what its comments say', () => {
  const md = readFileSync(join(root, 'README.md'), 'utf8');
  const sec = md.slice(md.indexOf('\n## JavaScript\n'));
  const m = /```js\n([\s\S]*?)```/.exec(sec);
  assert.ok(m, 'a js block');
  const file = join(root, `.readme-example-${process.pid}.mjs`);
  writeFileSync(file, m[1]);
  try {
    const out = execFileSync(process.execPath, [file], { encoding: 'utf8' }).trim().split('\n');
    assert.equal(out[0], '3 Float32Array(3) [ 0.25, -1, 3 ]');
    assert.equal(out[1], 'Float32Array(2) [ 1, 2 ]');
    assert.equal(out[2], 'Float32Array(2) [ 3, 4 ]');
    assert.equal(out[3], '2 2 text-embedding-3-small Float32Array(2) [ 0.5, 2 ]');
    assert.equal(out[4], 'Float32Array(2) [ 1, 2 ]');
    assert.equal(out[5], 'Float32Array(2) [ 1, 2 ]');
    assert.equal(out[6], 'Float32Array(2) [ 3, 4 ]');
    assert.equal(out[7], 'FRAME_HEADER_CRC 12');
    assert.equal(out[8], 'cbf43926');
    assert.equal(out[9], '20 4.75');
  } finally {
    rmSync(file, { force: true });
  }
});
