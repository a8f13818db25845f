"""What the benchmark scripts share (imported from the script's own folder, which Python
puts first on sys.path): the CPU's name for the line every benchmark prints, from the
package's own python/src/embd/_cpu.py (one copy). Loaded by its path, not as embd._cpu:
importing the package would load libembd and numpy, which serve_bench.py and
pg_ingest.py's baselines do not need."""
import importlib.util
import os

_spec = importlib.util.spec_from_file_location(
    "embd_bench_cpu", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "src", "embd", "_cpu.py"))
_cpu = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_cpu)
cpu_model = _cpu.cpu_model
