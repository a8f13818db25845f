// Runs SQL and binary COPY loads in one PGlite instance with pgvector, for the tests:
//   node pglite_copy.mjs steps.json results.json
// steps.json: [{"sql": "..."} | {"copy": "TABLE", "file": "path"[, "format": "text"]} |
//              {"query": "SELECT ..."}]   (copy: FORMAT binary unless "format" says text; its
//              result carries "ms", the COPY's own time)
// Every step runs; each result is {"ok": true, "rows": [...]} or {"ok": false, "error": "..."}
// (a refused COPY is a result, not a crash: the tests check that the server refuses what
// embd refuses). PGlite starts once (about 10-20 s here: it compiles PostgreSQL's wasm).
import { readFileSync, writeFileSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';

const [stepsPath, outPath] = process.argv.slice(2);
if (!stepsPath || !outPath) {
  console.error('usage: node pglite_copy.mjs steps.json results.json');
  process.exit(2);
}
const steps = JSON.parse(readFileSync(stepsPath, 'utf8'));
const db = await PGlite.create({ extensions: { vector } });
await db.exec('CREATE EXTENSION IF NOT EXISTS vector');
const results = [];
for (const s of steps) {
  try {
    if (s.sql !== undefined) {
      await db.exec(s.sql);
      results.push({ ok: true });
    } else if (s.copy !== undefined) {
      const blob = new Blob([readFileSync(s.file)]);
      const t0 = performance.now();
      await db.query(`COPY ${s.copy} FROM '/dev/blob' WITH (FORMAT ${s.format === 'text' ? 'text' : 'binary'})`, [], { blob });
      results.push({ ok: true, ms: performance.now() - t0 });
    } else if (s.query !== undefined) {
      const r = await db.query(s.query);
      results.push({ ok: true, rows: r.rows.map((row) => Object.values(row).map((v) => (typeof v === 'bigint' ? v.toString() : v))) });
    } else {
      results.push({ ok: false, error: 'unknown step' });
    }
  } catch (e) {
    results.push({ ok: false, error: String(e && e.message ? e.message : e) });
  }
}
writeFileSync(outPath, JSON.stringify(results));
await db.close();
