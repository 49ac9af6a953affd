#!/usr/bin/env bash
# Packs amn and the perf tools of perf/thread_scaling.sh, with every shared
# library `ldd` lists and glibc's loader, into one directory that runs on a
# bare x86-64 Linux (no compiler, any glibc): the binaries are started through
# the bundled loader, so the machine's own libraries are never used.
#
#   perf/bundle.sh DEST [BUILD_DIR]      (BUILD_DIR default build/gcc)
#
# DEST gets amn, synthetic_model, bandwidth_mt, timed_run, kernel_scaling (the
# kernels alone against the floor, docs/performance/multi-thread.md), thread_scaling.sh,
# ld-linux-x86-64.so.2 and lib/ (all stripped copies); the last lines printed
# are the invocation prefix and the scaling command. thread_scaling.sh run
# from DEST finds the bundle by itself. Needs ldd; strip is used when present.
set -euo pipefail
dest=${1:?usage: perf/bundle.sh DEST [BUILD_DIR]}
build=${2:-build/gcc}
here=$(cd "$(dirname "$0")" && pwd)
bins=("$build/cli/amn" "$build/perf/synthetic_model" "$build/perf/bandwidth_mt" "$build/perf/timed_run"
      "$build/perf/kernel_scaling")
for b in "${bins[@]}"; do
  [ -x "$b" ] || { echo "missing $b: cmake --build $build --target amn_cli synthetic_model bandwidth_mt timed_run kernel_scaling" >&2; exit 1; }
done
mkdir -p "$dest/lib"
dest=$(cd "$dest" && pwd)
strip_copy() {  # strip_copy FILE: strips the copy in the bundle, if strip is here
  if command -v strip >/dev/null; then strip --strip-unneeded "$1" 2>/dev/null || true; fi
}
loader=""
for b in "${bins[@]}"; do
  cp -L "$b" "$dest/"
  chmod u+w "$dest/$(basename "$b")"
  strip_copy "$dest/$(basename "$b")"
  # "name => /path (addr)" for libraries, "/path/ld-linux... (addr)" for the loader.
  while read -r first arrow path _; do
    if [ "$arrow" = "=>" ] && [ -f "$path" ]; then
      if [ ! -f "$dest/lib/$first" ]; then
        cp -L "$path" "$dest/lib/$first"
        chmod u+w "$dest/lib/$first"
        strip_copy "$dest/lib/$first"
      fi
    elif [ "$arrow" = "=>" ] && [ "$path" = "not" ]; then
      echo "ldd: $b needs $first, which is not found" >&2; exit 1
    else
      case "$first" in /*/ld-linux*) loader=$first ;; esac
    fi
  done < <(ldd "$b")
done
[ -n "$loader" ] || { echo "ldd named no ld-linux loader (static or non-x86-64 binaries?)" >&2; exit 1; }
cp -L "$loader" "$dest/ld-linux-x86-64.so.2"
chmod 755 "$dest/ld-linux-x86-64.so.2"
cp "$here/thread_scaling.sh" "$dest/"
prefix="$dest/ld-linux-x86-64.so.2 --library-path $dest/lib"
echo "$dest: $(du -sh "$dest" | cut -f1) ($(ls "$dest/lib" | wc -l) libraries)"
echo "glibc: $("$dest/ld-linux-x86-64.so.2" --version 2>/dev/null | head -1)"
echo "invocation prefix (the bundle may be moved; use its new path):"
echo "  $prefix"
echo "amn:     $prefix $dest/amn --version"
echo "kernels: $prefix $dest/kernel_scaling"
echo "scaling: OUT=/tmp/amn-scaling-results $dest/thread_scaling.sh /dev/shm/amn-scaling --gib 4"
