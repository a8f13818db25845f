"""What the benchmark scripts share (imported from the script's own folder, which Python
puts first on sys.path): the CPU's name for the line every benchmark prints."""
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
