/* embd CLI: the subcommands. Each takes argv[0] = its name and returns the exit code. */
#ifndef EMBD_CLI_COMMANDS_H
#define EMBD_CLI_COMMANDS_H

int cmd_encode(int argc, char **argv);
int cmd_decode(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_openai(int argc, char **argv);
int cmd_cpu(int argc, char **argv);
int cmd_tokens(int argc, char **argv);
int cmd_serve(int argc, char **argv); /* execs embd-serve (serve/) */

/* Shared by decode and openai: parses "--to" for vector output. */
#define CLI_DEFAULT_MAX_DIMS 1048576u

#endif
