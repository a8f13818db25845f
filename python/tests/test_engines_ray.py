"""examples/ray/batch_files.py under Ray Data (ray from python/requirements-engines.lock),
offline: ray.init(num_cpus=2, include_dashboard=False) on 127.0.0.1, RAY_USAGE_STATS_ENABLED=0.
One Ray instance for the module. The Parquet is compared with the one-process decode
(embd.decode_openai_batch) bit for bit and _failed with what the test wrote, including a
run whose first task fails after producing its rows (Ray retries it)."""
import importlib.util
import os
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow", reason="pyarrow not installed (python/requirements-engines.lock)")
pytest.importorskip("ray", reason="ray not installed (python/requirements-engines.lock)")
from engines_data import check, write_files  # noqa: E402  (after the skips: it imports pyarrow)

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "ray" / "batch_files.py"


@pytest.fixture(scope="module")
def example():
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    spec = importlib.util.spec_from_file_location("embd_ray_example", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    ray = mod.init(2)
    yield mod
    ray.shutdown()


def test_ray_batch_files(example, tmp_path):
    paths = write_files(tmp_path)
    out = str(tmp_path / "parquet")
    n, failed = example.run(paths, out)
    got = check(out, paths)
    assert [(f["custom_id"].split(" ")[0], f["line"], f["status_code"]) for f in got] == [
        ("req-10", 11, None), ("req-250", 101, 429)]


def test_ray_task_retry_every_row_once(example, tmp_path, monkeypatch):
    paths = write_files(tmp_path)
    out = str(tmp_path / "parquet")
    marker = tmp_path / "failed-once"
    monkeypatch.setenv("EMBD_EXAMPLE_FAIL_FIRST_ATTEMPT", str(marker))
    example.run(paths, out)
    assert marker.exists()  # an attempt did fail
    check(out, paths)


def test_ray_duplicate_is_an_error(example, tmp_path):
    paths = write_files(tmp_path, n=20)
    with pytest.raises(SystemExit, match="twice"):
        example.run(paths + [paths[0]], str(tmp_path / "parquet"))
