"""The CPU's name, for the line every benchmark prints: python -m embd bench, and the
scripts in bench/ (bench/benchutil.py loads this file by its path, so that they need
neither the package installed nor numpy). Standard library only."""
import platform


def cpu_model():
    """The "model name" of /proc/cpuinfo, else what platform knows."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"
