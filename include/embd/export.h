/* embd: the export macro, EMBD_API (included by embd/common.h).
 *
 * On its own so that it can be checked for every platform from one host
 * (tests/test_export_macro.c re-includes it under each configuration). */
#ifndef EMBD_EXPORT_H
#define EMBD_EXPORT_H

/* EMBD_API marks the public functions.
 *   Windows (MSVC, clang-cl, MinGW): __declspec(dllexport) while building the DLL
 *     (EMBD_BUILDING_LIBRARY), __declspec(dllimport) for its users, nothing for users of the
 *     static library: define EMBD_STATIC (the CMake target embd::embd_static does it for its
 *     users; EMBD_STATIC_DEFINE is the older spelling, still honoured).
 *   GCC and Clang elsewhere: visibility("default") (the library is built with
 *     -fvisibility=hidden, so only EMBD_API functions are exported).
 *   Other compilers: nothing. */
#if defined(_WIN32) || defined(__CYGWIN__)
#if defined(EMBD_STATIC) || defined(EMBD_STATIC_DEFINE)
#define EMBD_API
#elif defined(EMBD_BUILDING_LIBRARY)
#define EMBD_API __declspec(dllexport)
#else
#define EMBD_API __declspec(dllimport)
#endif
#elif defined(__GNUC__) || defined(__clang__)
#define EMBD_API __attribute__((visibility("default")))
#else
#define EMBD_API
#endif

#endif
