// npm pack gives a tarball with the .wasm files, the ESM and the .d.ts; a scratch project
// installs it (no registry: --offline, the tarball and this package's own typescript) and
// type-checks and runs a TypeScript consumer with `tsc --noEmit` and node.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync, existsSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkg = resolve(fileURLToPath(new URL('..', import.meta.url)));
const tsc = join(pkg, 'node_modules', '.bin', 'tsc');

test('npm pack + install into a TypeScript consumer + tsc --noEmit + run', { skip: !existsSync(tsc) && 'typescript not installed (npm ci in js/)' }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'embd-consumer-'));
  try {
    const out = execFileSync('npm', ['pack', '--json', '--pack-destination', dir], { cwd: pkg, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const info = JSON.parse(out)[0];
    const files = info.files.map((f) => f.path).sort();
    for (const f of ['dist/embd-simd128.wasm', 'dist/embd-scalar.wasm', 'src/embd.js', 'src/embd.d.ts', 'src/stream.js', 'src/worker.js', 'package.json']) {
      assert.ok(files.includes(f), `${f} in the tarball (${files.join(', ')})`);
    }
    assert.ok(!files.some((f) => f.includes('node_modules') || f.startsWith('test/')), 'nothing else');
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', type: 'module', private: true }));
    execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', join(dir, info.filename)], { cwd: dir, stdio: 'pipe' });
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext', strict: true, noEmit: true, skipLibCheck: false, types: [] }, files: ['main.ts'] }));
    writeFileSync(join(dir, 'main.ts'), `
import { init, encodeEmbedding, decodeEmbedding, decodeBatch, decodeOpenAI, decodeOpenAIAsync, decodeBase64Embedding,
  EmbeddingCodecError, kernels, decodeStream, MLEmbedClient, encodeTokens, decodeFrames, decodeTokens,
  decodeFrameStream, FRAME, decodeProtobuf, encodeProtobuf, type ProtobufFrame, type DecodeResult, type OpenAIResult, type CodecFrame } from '@embd/embd';
const embd = await init();
const ws: 'idle' | 'running' | 'unavailable' | 'off' = embd.workerState;
const oa: OpenAIResult = await decodeOpenAIAsync('{"data":[]}', { dims: 0 });
const closed: Promise<void> = embd.close(); void ws; void oa; void closed;
const frame: ArrayBuffer = encodeEmbedding(new Float32Array([1, 2, 3]));
const r: DecodeResult = decodeEmbedding(frame);
const v: Float32Array = r.vector;
for (const f of decodeBatch(new ArrayBuffer(4))) { const n: number = f.dimensions; void n; }
const o: OpenAIResult = decodeOpenAI('{"data":[{"index":0,"embedding":[0.5]}],"model":"m"}', { dtype: 'f32', byteOrder: 'little' });
const b: Float32Array = decodeBase64Embedding('AACAPw==');
try { decodeEmbedding(new Uint8Array(3)); } catch (e) { if (e instanceof EmbeddingCodecError) { const c: string = e.code; const at: number = e.offset; console.log(c, at); } }
const crc: number = kernels.crc32(new Uint8Array([1]));
const client = new MLEmbedClient('http://127.0.0.1:9', 'k');
void client; void decodeStream; void decodeFrameStream;
const fr: CodecFrame[] = decodeFrames(encodeTokens([1, 2]));
const ids: Uint32Array = decodeTokens(encodeTokens(new Uint32Array([3])));
const t: 2 = FRAME.TOKENS; void t; void fr; void ids;
const pf: ProtobufFrame[] = decodeProtobuf(encodeProtobuf({ ids: [1], done: true }), { delta: false });
const done: boolean = pf[0].done; void done;
console.log(v.length, o.count, o.row(0)[0], b[0], crc.toString(16));
`);
    execFileSync(tsc, ['--noEmit', '-p', dir], { cwd: dir, stdio: 'pipe' });
    // and the same program as JavaScript (type annotations stripped by hand: run main.js)
    writeFileSync(join(dir, 'main.mjs'), `
import { init, encodeEmbedding, decodeEmbedding, decodeOpenAI, decodeOpenAIAsync, decodeBase64Embedding, kernels } from '@embd/embd';
const embd = await init();
const r = decodeEmbedding(encodeEmbedding(new Float32Array([1, 2, 3])));
const o = decodeOpenAI('{"data":[{"index":0,"embedding":[0.5]}],"model":"m"}');
// a body over workerMinBytes: the installed package's worker.js decodes it
const big = await decodeOpenAIAsync(JSON.stringify({ data: [{ index: 0, embedding: Array.from({ length: 20000 }, (_, i) => i / 4) }] }));
console.log(r.vector.length, o.count, o.row(0)[0], decodeBase64Embedding('AACAPw==')[0], kernels.crc32(new Uint8Array([1])).toString(16), big.matrix[7], embd.workerState);
`);
    const got = execFileSync(process.execPath, ['main.mjs'], { cwd: dir, encoding: 'utf8' }).trim();
    assert.equal(got, `3 1 0.5 1 ${(0xa505df1b).toString(16)} 1.75 running`);
    // a type error is caught (the check can fail)
    writeFileSync(join(dir, 'main.ts'), `import { decodeEmbedding } from '@embd/embd';\nconst n: string = decodeEmbedding(new ArrayBuffer(16)).dimensions;\nvoid n;\n`);
    assert.throws(() => execFileSync(tsc, ['--noEmit', '-p', dir], { cwd: dir, stdio: 'pipe' }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
