#!/usr/bin/env bash
# Usage: scripts/cross-sysroot.sh <aarch64|s390x|armhf> <dir>
# Makes a private sysroot with the target's cmocka, zlib, libdeflate and the optional
# parts' libraries for cross builds: downloads the Debian packages (apt-get download,
# into <dir>/debs) and unpacks them into <dir> with dpkg-deb -x. Nothing is installed on
# the host: multiarch-installing them upgrades host packages (arm64) or breaks (s390x),
# and a multiarch libc under `qemu -L` crashes
# (see /work/shared/TOOLCHAIN.md). The only host change is registering the dpkg
# architecture (and apt-get update), done once, only when apt does not know the packages.
# Idempotent: a second run with everything in place does nothing and needs no network.
set -euo pipefail

arch=${1:-}
dir=${2:-}
case "$arch" in
  aarch64 | arm64) debarch=arm64 ;;
  s390x) debarch=s390x ;;
  armhf | arm) debarch=armhf ;;
  *)
    echo "usage: $0 <aarch64|s390x|armhf> <dir>" >&2
    exit 2
    ;;
esac
[[ -n "$dir" ]] || { echo "usage: $0 <aarch64|s390x|armhf> <dir>" >&2; exit 2; }

pkgs=(libcmocka0 libcmocka-dev zlib1g zlib1g-dev)
pkgs+=(libdeflate0 libdeflate-dev)  # compressed EMBD frames (EMBD_WITH_LIBDEFLATE)
pkgs+=(libfast-float-dev)  # embd/openai.h (EMBD_WITH_OPENAI; header-only)
pkgs+=(libmsgpackc2 libmsgpack-dev libprotobuf-c1 libprotobuf-c-dev)  # embd/codec_stream.h tests' oracles (not the library's)
stamp="$dir/.embd-sysroot-$debarch"
if [[ -f "$stamp" ]] && grep -qxF "packages: ${pkgs[*]}" "$stamp"; then
  exit 0  # a sysroot made with a shorter package list is completed below
fi

sudo=()
[[ $(id -u) -eq 0 ]] || sudo=(sudo)

archs="$(dpkg --print-architecture) $(dpkg --print-foreign-architectures | tr '\n' ' ')"
if [[ " $archs " != *" $debarch "* ]]; then
  echo "cross-sysroot: dpkg --add-architecture $debarch" >&2
  "${sudo[@]}" dpkg --add-architecture "$debarch"
fi
known() { # every package has a download candidate for the architecture
  local p out
  for p in "${pkgs[@]}"; do
    out=$(apt-cache policy "$p:$debarch" 2>/dev/null) || return 1
    [[ $out == *"Candidate: "[!\(]* ]] || return 1
  done
}
if ! known; then
  echo "cross-sysroot: apt-get update (package lists for $debarch)" >&2
  # apt-get update exits 100 when any one index fails (for armhf, bookworm-security's
  # list is often out of sync: "File has unexpected size"); the main archive's lists,
  # which have the packages, are still read. known() below decides.
  "${sudo[@]}" apt-get update -qq ||
    echo "cross-sysroot: apt-get update reported errors; checking the package lists anyway" >&2
  known || { echo "cross-sysroot: apt cannot find ${pkgs[*]} for $debarch" >&2; exit 1; }
fi

mkdir -p "$dir/debs"
dir=$(cd "$dir" && pwd)
(
  cd "$dir/debs"
  need=()
  for p in "${pkgs[@]}"; do
    compgen -G "${p}_*_${debarch}.deb" >/dev/null || need+=("$p:$debarch")
  done
  if ((${#need[@]})); then
    # As root, apt warns that the _apt user cannot write here; the download is fine.
    apt-get download -qq "${need[@]}" 2>&1 | grep -v 'unsandboxed as root' >&2 || true
  fi
  for p in "${pkgs[@]}"; do
    compgen -G "${p}_*_${debarch}.deb" >/dev/null ||
      { echo "cross-sysroot: download of $p:$debarch failed" >&2; exit 1; }
  done
  for d in *_"$debarch".deb; do dpkg-deb -x "$d" "$dir"; done
)
{ date -u +%FT%TZ; echo "packages: ${pkgs[*]}"; } >"$stamp"
