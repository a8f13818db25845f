"""python -m embd: `bench` prints embd beside the Python decoders users run today."""
import sys


def main(argv):
    if len(argv) >= 1 and argv[0] == "bench":
        from . import _bench
        return _bench.main(argv[1:])
    if len(argv) >= 1 and argv[0] == "cpu":
        import embd
        for k, v in embd.cpu().items():
            print("%s: %s" % (k, v))
        return 0
    print("usage: python -m embd bench | cpu\n"
          "  bench  decode speed of embd beside json/base64/numpy (pin it: taskset -c 1)\n"
          "  cpu    CPU features and the kernel implementations in use", file=sys.stderr)
    return 0 if argv[:1] in (["-h"], ["--help"]) else 2


sys.exit(main(sys.argv[1:]))
