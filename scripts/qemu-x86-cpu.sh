#!/usr/bin/env bash
# The test emulator of the "any x86-64 CPU" runs (scripts/test.sh): qemu-x86_64 with the
# CPU model named by EMBD_QEMU_CPU (Haswell, Westmere, ...), so that one build tree serves
# every model (the model is chosen when ctest runs, not when cmake configures).
exec qemu-x86_64 -cpu "${EMBD_QEMU_CPU:?EMBD_QEMU_CPU names the qemu CPU model}" "$@"
