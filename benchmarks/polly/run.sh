#!/usr/bin/env bash
# Polly on the naive gemm loops (the issue's reference), with the threads polyc gets.
# Needs clang built with Polly (Debian: `apt-get install clang-14`). Usage: run.sh [clang]
set -euo pipefail
cc="${1:-$(command -v clang || command -v clang-14 || true)}"
if [ -z "$cc" ]; then
  echo "no clang found: install one built with Polly (Debian: apt-get install clang-14)" >&2
  exit 1
fi
here="$(cd "$(dirname "$0")" && pwd)"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
"$cc" -O3 -march=native -mllvm -polly -mllvm -polly-parallel "$here/gemm.c" -lgomp -o "$out/gemm"
threads="${OMP_NUM_THREADS:-$(nproc)}"
echo "$("$cc" --version | head -1), OMP_NUM_THREADS=$threads"
OMP_NUM_THREADS="$threads" "$out/gemm"
