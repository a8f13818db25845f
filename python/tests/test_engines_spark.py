"""examples/spark/batch_files.py in Spark local mode (pyspark from
python/requirements-engines.lock, the machine's OpenJDK 17), offline: SPARK_LOCAL_IP and the
driver bound to 127.0.0.1, no UI. One Spark session (local[2,2]: two cores, two attempts
per task so that a retry can happen) is shared by the tests of this module. The Parquet is
compared with the one-process decode (embd.decode_openai_batch) bit for bit, _failed with
what the test wrote, including a run whose partition 0 fails on its first attempt after
producing its rows."""
import importlib.util
import os
import shutil
import sys
from pathlib import Path

import pytest


pa = pytest.importorskip("pyarrow", reason="pyarrow not installed (python/requirements-engines.lock)")
pytest.importorskip("pyspark", reason="pyspark not installed (python/requirements-engines.lock)")
pq = pytest.importorskip("pyarrow.parquet")
from engines_data import check, write_files  # noqa: E402  (after the skips: it imports pyarrow)
if not shutil.which("java"):
    pytest.skip("no java on PATH (Spark 4 needs a JDK 17: Debian openjdk-17-jre-headless)",
                allow_module_level=True)

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "spark" / "batch_files.py"


def load_example():
    spec = importlib.util.spec_from_file_location("embd_spark_example", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def spark():
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    os.environ["PYSPARK_PYTHON"] = sys.executable
    mod = load_example()
    s = mod.session("local[2,2]", app="embd-tests")
    s.sparkContext.setLogLevel("ERROR")
    yield mod, s
    s.stop()


def test_spark_batch_files(spark, tmp_path):
    mod, s = spark
    paths = write_files(tmp_path)
    out = str(tmp_path / "parquet")
    n, failed = mod.run(s, paths, out)
    got = check(out, paths)
    assert n == sum(1 + k % 3 for k in range(300) if k not in (10, 20, 250)) + 2
    assert [(f["custom_id"].split(" ")[0], f["line"], f["status_code"]) for f in got] == [
        ("req-10", 11, None), ("req-250", 101, 429)]


def test_spark_task_retry_every_row_once(spark, tmp_path, monkeypatch):
    mod, s = spark
    paths = write_files(tmp_path)
    out = str(tmp_path / "parquet")
    # the first attempt of partition 0 fails after producing its rows; Spark retries it
    monkeypatch.setenv("EMBD_EXAMPLE_FAIL_FIRST_ATTEMPT", "1")
    mod.run(s, paths, out)
    check(out, paths)


def test_spark_duplicate_is_an_error(spark, tmp_path):
    mod, s = spark
    paths = write_files(tmp_path, n=20)
    with pytest.raises(SystemExit, match="twice"):
        mod.run(s, paths + [paths[0]], str(tmp_path / "parquet"))
