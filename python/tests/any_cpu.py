"""Run by scripts/test-python.sh under qemu-x86_64 -cpu qemu64 / Westmere / Haswell: the
installed module loads and decodes right on CPUs without the build machine's features
(runtime dispatch), and reports the tier it chose. Not a pytest file (no test_ prefix)."""
import base64
import json
import sys

import numpy as np

import embd

want = sys.argv[1] if len(sys.argv) > 1 else None
k = embd.cpu()["kernels"]
v = np.arange(1536, dtype=np.float32) / 7
assert np.array_equal(embd.decode_batch(embd.encode_batch([v, -v], payload_crc=True)), np.stack([v, -v]))
body = json.dumps({"data": [{"index": 0, "embedding": base64.b64encode(v.tobytes()).decode()}]})
assert np.array_equal(embd.decode_openai(body)[0], v)
assert embd.b64decode(embd.b64encode(v.tobytes())) == v.tobytes()
assert np.array_equal(embd.to_f32(embd.from_f32(v, "f16"), "f16"), v.astype(np.float16).astype(np.float32))
if want and not k["base64-decode"].startswith(want):
    sys.exit("expected the %s tier, got %s" % (want, k))
print("any_cpu: ok with", ", ".join("%s=%s" % kv for kv in k.items()))
