/* embd: the command-line tool. A thin layer over the library: one table entry per
 * subcommand (add a command: write `int cmd_x(int argc, char **argv)`, argv[0] being its
 * name, returning an exit code, and add a line to `commands` below). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "bench.h"
#include "commands.h"

typedef struct cli_command {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
} cli_command;

static const cli_command commands[] = {
    {"encode", cmd_encode, "vectors (JSON lines, OpenAI response, .npy, raw) -> EMBD batch"},
    {"decode", cmd_decode, "EMBD batch or frame stream -> JSON lines, .npy, raw, pgcopy, _bulk, fvecs"},
    {"inspect", cmd_inspect, "each frame's header fields and a summary"},
    {"verify", cmd_verify, "exit 0 when every frame is valid, else the first error"},
    {"openai", cmd_openai, "OpenAI /v1/embeddings response -> JSON lines, .npy, raw, EMBD, pgcopy..."},
    {"tokens", cmd_tokens, "Codec token stream (session, msgpack, protobuf) -> ids or text"},
    {"serve", cmd_serve, "binary front (EMBD frames) for an OpenAI-compatible embedding server"},
    {"cpu", cmd_cpu, "CPU features and the implementation each kernel uses"},
    {"bench", embd_cli_bench, "what each wire format and every kernel costs on this machine"},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f) {
  fprintf(f,
          "Usage: embd <command> [options] [args]\n"
          "       embd --help | --version | help <command>\n"
          "Moves AI numbers over the wire in binary: EMBD float32 frames and batches,\n"
          "base64 embeddings and OpenAI /v1/embeddings responses, Codec token streams.\n"
          "\n"
          "Commands:\n");
  for (size_t i = 0; i < NCOMMANDS; i++) {
#ifdef EMBD_CLI_NO_SERVE
    /* listed means built (tests/cli: every listed command answers --help): `embd serve`
     * still runs, to say what it needs */
    if (commands[i].run == cmd_serve) continue;
#endif
    fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
  }
  fprintf(f,
          "\n"
          "'embd <command> --help' explains each command's options, with examples.\n"
          "A file argument of - means stdin (or stdout for -o). Frames are numbered from 0;\n"
          "byte offsets are from the start of the input. A progress bar is shown on stderr\n"
          "when it is a terminal and the work takes over a second (EMBD_NO_PROGRESS=1: never).\n"
          "EMBD_ISA (e.g. scalar, avx2) forces the kernels' tier, as in the library.\n"
          "\n"
          "Exit status:\n"
          "  0  success\n"
          "  1  invalid input data (the message names file, frame, byte offset or line:column)\n"
          "  2  usage error (unknown command or option, bad option value)\n"
          "  3  I/O error (cannot open, read or write a file)\n"
          "  4  out of memory or internal error\n"
          "  5  embd tokens: the stream carried an ERROR frame (the peer's failure);\n"
          "     embd openai: batch requests stayed failed (the other rows written)\n"
          "\n"
          "Examples:\n"
          "  embd encode vectors.jsonl -o vectors.embd\n"
          "  embd decode vectors.embd > vectors.jsonl\n"
          "  embd verify vectors.embd && embd inspect vectors.embd\n"
          "  embd openai response.json --to npy -o vectors.npy\n"
          "  embd openai r.json --to pgcopy | psql -c \"COPY items (embedding) FROM STDIN (FORMAT binary)\"\n"
          "  embd cpu\n");
}

static const cli_command *find(const char *name) {
  for (size_t i = 0; i < NCOMMANDS; i++)
    if (!strcmp(commands[i].name, name)) return &commands[i];
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return CLI_EUSAGE;
  }
  const char *a = argv[1];
  if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
    usage(stdout);
    return cli_flush_stdout();
  }
  if (!strcmp(a, "--version") || !strcmp(a, "-V")) {
    printf("embd %s (library %s)\n", EMBD_VERSION_STRING, embd_version());
    return cli_flush_stdout();
  }
  /* An invalid EMBD_ISA makes the library abort at the first kernel call: say so here. */
  const char *isa = getenv("EMBD_ISA");
  if (isa && *isa) {
    const embd_result r = embd_isa_check(isa);
    if (r) {
      fprintf(stderr, "embd: EMBD_ISA=%s: %s\n", cli_esc(isa), embd_strerror(r));
      return CLI_EUSAGE;
    }
  }
  if (!strcmp(a, "help")) {
    if (argc < 3) {
      usage(stdout);
      return cli_flush_stdout();
    }
    const cli_command *c = find(argv[2]);
    if (!c) {
      fprintf(stderr, "embd: unknown command '%s'\nTry 'embd --help'.\n", cli_esc(argv[2]));
      return CLI_EUSAGE;
    }
    char *hargv[] = {(char *)c->name, "--help", NULL};
    cli_cmd = c->name;
    const int rc = c->run(2, hargv);
    return rc ? rc : cli_flush_stdout();
  }
  const cli_command *c = find(a);
  if (!c) {
    fprintf(stderr, "embd: unknown command '%s'\nTry 'embd --help'.\n", cli_esc(a));
    return CLI_EUSAGE;
  }
  cli_cmd = c->name;
  const int rc = c->run(argc - 1, argv + 1);
  /* whatever the command printed: a full disk or a closed pipe is an error with its reason
   * (a command that failed has said why already) */
  return rc ? rc : cli_flush_stdout();
}
