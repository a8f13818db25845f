"""embd's Arrow output loaded into the vector stores and engines that speak Arrow, each from
the Arrow record batch itself (no Python lists or numpy on the way): LanceDB (a table in a
temporary folder, a nearest-neighbour query), DuckDB (a FLOAT[d] column,
array_cosine_similarity against numpy), Polars (Array(Float32, d)). The versions are those
of python/requirements-engines.lock; a store that is not installed skips loudly."""
import base64
import json

import numpy as np
import pytest

import embd

pa = pytest.importorskip("pyarrow", reason="pyarrow not installed (python/requirements-engines.lock)")

D = 32


def batch_file(tmp_path, n=40, seed=5):
    """A batch output file of n requests of 2 vectors each; returns (path, ids, vectors)."""
    rng = np.random.default_rng(seed)
    vecs = rng.standard_normal((n, 2, D)).astype(np.float32)
    lines, ids = [], []
    for k in range(n):
        cid = "doc-%03d" % k
        body = {"data": [{"index": i, "embedding": base64.b64encode(vecs[k, i].astype("<f4").tobytes()).decode()}
                         for i in (1, 0)]}
        lines.append(json.dumps({"id": "b", "custom_id": cid, "response": {"status_code": 200, "body": body},
                                 "error": None}))
        ids += [cid, cid]
    p = tmp_path / "out.jsonl"
    p.write_text("\n".join(lines) + "\n")
    return p, ids, vecs.reshape(-1, D)


def test_lancedb_nearest_neighbour(tmp_path):
    lancedb = pytest.importorskip("lancedb", reason="lancedb not installed (python/requirements-engines.lock)")
    path, ids, v = batch_file(tmp_path)
    rb = embd.decode_openai_batch(path, arrow=True)
    db = lancedb.connect(str(tmp_path / "lance"))
    tbl = db.create_table("vectors", data=pa.Table.from_batches([rb]))
    assert tbl.count_rows() == len(ids)
    assert tbl.schema.field("embedding").type == pa.list_(pa.float32(), D)
    # a query near row 37 (its vector plus a little noise) finds row 37's custom_id first
    q = v[37] + np.float32(1e-3)
    hit = tbl.search(q, vector_column_name="embedding").metric("l2").limit(3).to_arrow()
    assert hit.column("custom_id")[0].as_py() == ids[37]
    assert hit.column("index")[0].as_py() == 37 % 2
    # the stored vectors are the decoded ones, bit for bit
    back = tbl.to_arrow().sort_by([("custom_id", "ascending"), ("index", "ascending")])
    got = back.column("embedding").combine_chunks().values.to_numpy().reshape(-1, D)
    assert np.array_equal(got.view(np.uint32), v.view(np.uint32))


def test_duckdb_float_array_cosine(tmp_path):
    duckdb = pytest.importorskip("duckdb", reason="duckdb not installed (python/requirements-engines.lock)")
    path, ids, v = batch_file(tmp_path)
    rb = embd.decode_openai_batch(path, arrow=True)
    con = duckdb.connect()
    con.register("rb", pa.Table.from_batches([rb]))
    con.execute("CREATE TABLE vectors AS SELECT * FROM rb")
    assert con.execute("SELECT DISTINCT typeof(embedding) FROM vectors").fetchall() == [("FLOAT[%d]" % D,)]
    q = v[5]
    # the query vector goes in as Arrow too: a one-row table with a FLOAT[D] column
    con.register("q", pa.table({"q": pa.FixedSizeListArray.from_arrays(pa.array(q), D)}))
    res = con.sql("SELECT custom_id, \"index\", array_cosine_similarity(embedding, q.q) AS cos "
                  "FROM vectors, q ORDER BY custom_id, \"index\"").to_arrow_table()
    cos = res.column("cos").to_numpy()
    want = (v.astype(np.float64) @ q.astype(np.float64)) / (
        np.linalg.norm(v.astype(np.float64), axis=1) * np.linalg.norm(q.astype(np.float64)))
    assert res.column("custom_id").to_pylist() == ids
    assert np.max(np.abs(cos - want)) < 1e-6
    got = res.num_rows
    assert got == len(ids)


def test_polars_array_float32(tmp_path):
    pl = pytest.importorskip("polars", reason="polars not installed (python/requirements-engines.lock)")
    path, ids, v = batch_file(tmp_path)
    rb = embd.decode_openai_batch(path, arrow=True)
    addr = rb.column("embedding").values.buffers()[1].address
    df = pl.from_arrow(rb)
    assert df.schema["embedding"] == pl.Array(pl.Float32, D)
    assert df.schema["index"] == pl.Int32 and df.schema["custom_id"] == pl.String
    assert df["custom_id"].to_list() == ids
    got = df["embedding"].to_numpy()
    assert got.shape == (len(ids), D) and np.array_equal(got.view(np.uint32), v.view(np.uint32))
    # Polars took the buffer as it is (no copy on the way in)
    back = df["embedding"].to_arrow()
    flat = back.values if hasattr(back, "values") else back.combine_chunks().values
    assert flat.buffers()[1].address == addr
    # and the FixedSizeListArray of decode_openai_arrow as a Series
    body = json.dumps({"data": [{"index": 0, "embedding": base64.b64encode(v[0].tobytes()).decode()}]})
    s = pl.Series("e", embd.decode_openai_arrow(body))
    assert s.dtype == pl.Array(pl.Float32, D)
    assert np.array_equal(s.to_numpy()[0], v[0])
