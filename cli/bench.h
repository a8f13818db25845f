/* embd bench (cli/bench.c). */
#ifndef EMBD_CLI_BENCH_H
#define EMBD_CLI_BENCH_H

/* argv[0] is "bench"; returns the process exit code (0 ok, 2 usage, 3 I/O, 4 internal). */
int embd_cli_bench(int argc, char **argv);

#endif
