/* EMBD_API under every platform configuration, from one host: embd/export.h is included
 * again under each set of defines and the macro's expansion compared as text. The
 * Windows branches cannot be compiled here, but their preprocessing can be checked. */
#include <stdio.h>
#include <string.h>

#define STR_(x) #x
#define STR(x) STR_(x)

static int failures;

static void expect(const char *what, const char *got, const char *want) {
  if (strcmp(got, want) != 0) {
    printf("FAIL %s: EMBD_API is \"%s\", expected \"%s\"\n", what, got, want);
    failures++;
  } else {
    printf("ok   %s: \"%s\"\n", what, got);
  }
}

/* This host (GCC or Clang on ELF): visibility("default"), also for static users. */
#include "embd/export.h"
static const char host[] = STR(EMBD_API);

#undef EMBD_EXPORT_H
#undef EMBD_API
#define EMBD_STATIC
#include "embd/export.h"
static const char host_static[] = STR(EMBD_API);
#undef EMBD_STATIC

/* Windows: DLL users, the DLL itself, static users (both spellings). */
#define _WIN32 1
#undef EMBD_EXPORT_H
#undef EMBD_API
#include "embd/export.h"
static const char win_user[] = STR(EMBD_API);

#undef EMBD_EXPORT_H
#undef EMBD_API
#define EMBD_BUILDING_LIBRARY
#include "embd/export.h"
static const char win_dll[] = STR(EMBD_API);
#undef EMBD_BUILDING_LIBRARY

#undef EMBD_EXPORT_H
#undef EMBD_API
#define EMBD_STATIC
#include "embd/export.h"
static const char win_static[] = STR(EMBD_API);
#undef EMBD_STATIC

#undef EMBD_EXPORT_H
#undef EMBD_API
#define EMBD_STATIC_DEFINE
#include "embd/export.h"
static const char win_static_old[] = STR(EMBD_API);
#undef EMBD_STATIC_DEFINE
#undef _WIN32

int main(void) {
  expect("gcc/clang ELF", host, "__attribute__((visibility(\"default\")))");
  expect("gcc/clang ELF, EMBD_STATIC", host_static, "__attribute__((visibility(\"default\")))");
  expect("_WIN32 DLL user", win_user, "__declspec(dllimport)");
  expect("_WIN32 building the DLL", win_dll, "__declspec(dllexport)");
  expect("_WIN32 EMBD_STATIC", win_static, "");
  expect("_WIN32 EMBD_STATIC_DEFINE", win_static_old, "");
  return failures != 0;
}
