// The seed design's MLEmbedClient (src/embedservice/mlEmbedClient.ts in the design
// document), transcribed to plain JavaScript as it is written there (types dropped), over
// the seed codec's own transcription (seed_codec.mjs). tests/serve/test_serve.py runs it
// against `embd serve`:
//   node seed_client.mjs BASE_URL API_KEY MODEL TEXT...
// prints one JSON line {"one_binary", "one_json", "batch_binary", "batch_json"}: the
// float32 bits of each vector as hex strings (little-endian bytes), so that the caller
// compares them with the upstream's bit for bit.
import { decodeBatch, decodeEmbedding } from './seed_codec.mjs';

export class MLEmbedClient {
  constructor(baseUrl, apiKey) {
    this.baseUrl = baseUrl;
    this.apiKey = apiKey;
  }

  async embedOne(text, opts = {}) {
    const useBinary = opts.useBinaryCodec ?? true;

    const response = await fetch(`${this.baseUrl}/v1/embed`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'Authorization': `Bearer ${this.apiKey}`,
        'Accept': useBinary ? 'application/octet-stream' : 'application/json',
      },
      body: JSON.stringify({ text, model: opts.model ?? 'default' }),
    });

    if (!response.ok) {
      throw new Error(`Embed service request failed: ${response.status} ${response.statusText}`);
    }

    if (useBinary) {
      const buf = await response.arrayBuffer();
      const result = decodeEmbedding(buf);
      // Clone to detach from the response buffer before it may be GC'd
      return result.vector.slice();
    }

    // JSON fallback path
    const json = await response.json();
    return new Float32Array(json.embedding);
  }

  async *embedBatch(texts, opts = {}) {
    const useBinary = opts.useBinaryCodec ?? true;

    const response = await fetch(`${this.baseUrl}/v1/embed/batch`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'Authorization': `Bearer ${this.apiKey}`,
        'Accept': useBinary ? 'application/octet-stream' : 'application/json',
      },
      body: JSON.stringify({ texts, model: opts.model ?? 'default' }),
    });

    if (!response.ok) {
      throw new Error(`Embed service batch request failed: ${response.status}`);
    }

    if (useBinary) {
      const buf = await response.arrayBuffer();
      for (const frame of decodeBatch(buf)) {
        // Clone each frame so callers can hold references independently
        yield frame.vector.slice();
      }
      return;
    }

    // JSON fallback
    const json = await response.json();
    for (const embedding of json.embeddings) {
      yield new Float32Array(embedding);
    }
  }
}

function hex(f32) {
  return Buffer.from(f32.buffer, f32.byteOffset, f32.byteLength).toString('hex');
}

async function main() {
  const [base, key, model, ...texts] = process.argv.slice(2);
  const c = new MLEmbedClient(base, key);
  const opts = model === '-' ? {} : { model };
  const out = {
    one_binary: hex(await c.embedOne(texts[0], opts)),
    one_json: hex(await c.embedOne(texts[0], { ...opts, useBinaryCodec: false })),
    batch_binary: [],
    batch_json: [],
  };
  for await (const v of c.embedBatch(texts, opts)) out.batch_binary.push(hex(v));
  for await (const v of c.embedBatch(texts, { ...opts, useBinaryCodec: false })) out.batch_json.push(hex(v));
  console.log(JSON.stringify(out));
}

main().catch((e) => {
  console.error(`seed_client: ${e.message}`);
  process.exit(1);
});
