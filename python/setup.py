"""Builds embd's extension module (embd._embd) over libembd.

Two ways to get libembd, chosen by the environment variable EMBD_PYTHON_LIBEMBD:

  (unset) or "bundled"  the library is built from this checkout's own sources by its own
                        CMake build (the same per-ISA files and flags, runtime dispatch
                        included) as a static library, and linked into the extension with
                        its symbols hidden: the module runs on any CPU of the architecture.
  "system"              an installed libembd is linked (pkg-config embd, e.g. after
                        `cmake --install`): for distributions. PKG_CONFIG_PATH finds it.

EMBD_PYTHON_CMAKE_ARGS adds arguments to the bundled CMake configure (e.g.
"-DEMBD_WITH_TOKMAP=OFF"). The bundled build tree is kept under build/ and reused.
"""
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent  # the embd checkout: CMakeLists.txt, include/, src/


def library_version():
    # One place holds the version: include/embd/common.h (as CMake reads it).
    text = (ROOT / "include" / "embd" / "common.h").read_text()
    parts = [re.search(r"#define EMBD_VERSION_%s (\d+)" % k, text).group(1)
             for k in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(parts)


def pkg_config(args, env=None):
    out = subprocess.run(["pkg-config"] + args + ["embd"], check=True, env=env,
                         stdout=subprocess.PIPE, universal_newlines=True).stdout
    return shlex.split(out)


class BuildExt(build_ext):
    def finalize_options(self):
        super().finalize_options()
        # The bundled and the system builds compile the module with different flags into
        # the same build/ tree: always compile and link anew (five small files), so a wheel
        # never packs the other mode's module.
        self.force = True

    def build_extensions(self):
        mode = os.environ.get("EMBD_PYTHON_LIBEMBD", "bundled")
        if mode == "system":
            cflags, libs = pkg_config(["--cflags"]), pkg_config(["--libs"])
        elif mode == "bundled":
            cflags, libs = self.build_bundled()
        else:
            raise SystemExit("EMBD_PYTHON_LIBEMBD must be 'bundled' or 'system', not %r" % mode)
        for ext in self.extensions:
            ext.extra_compile_args += cflags
            ext.extra_link_args += libs
        super().build_extensions()

    def build_bundled(self):
        if not (ROOT / "CMakeLists.txt").exists():
            raise SystemExit("embd: the bundled build needs the embd checkout around python/ "
                             "(%s has no CMakeLists.txt); or set EMBD_PYTHON_LIBEMBD=system" % ROOT)
        cmake = shutil.which("cmake")
        if not cmake:
            raise SystemExit("embd: cmake not found (Debian: cmake; scripts/install-deps.sh)")
        tree = Path(self.build_temp).resolve() / "libembd"
        prefix = tree / "prefix"
        configure = [cmake, "-S", str(ROOT), "-B", str(tree / "build"),
                     "-DCMAKE_BUILD_TYPE=Release", "-DEMBD_BUILD_TESTS=OFF",
                     "-DEMBD_BUILD_BENCH=OFF", "-DEMBD_BUILD_FUZZ=OFF", "-DEMBD_BUILD_CLI=OFF",
                     "-DEMBD_INSTALL=ON", "-DCMAKE_INSTALL_PREFIX=" + str(prefix),
                     "-DCMAKE_INSTALL_LIBDIR=lib"]
        if shutil.which("ninja") and not (tree / "build" / "CMakeCache.txt").exists():
            configure += ["-G", "Ninja"]
        configure += shlex.split(os.environ.get("EMBD_PYTHON_CMAKE_ARGS", ""))
        subprocess.run(configure, check=True)
        jobs = str(os.cpu_count() or 2)
        subprocess.run([cmake, "--build", str(tree / "build"), "-j", jobs], check=True)
        subprocess.run([cmake, "--install", str(tree / "build")], check=True,
                       stdout=subprocess.DEVNULL)
        env = dict(os.environ, PKG_CONFIG_PATH=str(prefix / "lib" / "pkgconfig"))
        cflags = pkg_config(["--cflags", "--static"], env)
        libs = pkg_config(["--libs", "--static"], env)
        # The static archive by path (the linker would take libembd.so for -lembd), and its
        # symbols (and those of what it links statically) kept out of the module's exports.
        archive = str(prefix / "lib" / "libembd.a")
        libs = [archive if a == "-lembd" else a for a in libs]
        return cflags, libs + ["-Wl,--exclude-libs,ALL"]


ext = Extension(
    "embd._embd",
    sources=sorted(str(p.relative_to(HERE)) for p in (HERE / "src" / "_embd").glob("*.c")),
    depends=sorted(str(p.relative_to(HERE)) for p in (HERE / "src" / "_embd").glob("*.h")),
    extra_compile_args=["-std=c11", "-Wall", "-Wextra", "-Wno-missing-field-initializers",
                        "-fvisibility=hidden"],
)

setup(version=library_version(), ext_modules=[ext], cmdclass={"build_ext": BuildExt})
