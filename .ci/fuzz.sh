#!/usr/bin/env bash
# A short run of every fuzz target of the module (make fuzz): FUZZTIME of
# fuzzing each (5s unless set; FUZZTIME=10m for a long one), FUZZJOBS
# targets at once (2 unless set), GO the go command.
#
# Each package with fuzz targets is built once, into one test binary with
# coverage instrumentation for this module's packages only, and its
# targets run from that binary. `go test -fuzz` instead builds a binary per
# target and instruments every package the test links, the standard library
# and every dependency included: on a machine with an empty build cache
# that second, instrumented compile of everything took 415 s of CPU of the
# step's 548 (two cores, FUZZTIME=1s), and the binaries per target and the
# `go test -list` runs that found the targets were 54 more links. Coverage
# of our own code is what guides the fuzzer to our parsers' branches; the
# libraries they call are fuzzed by their own projects.
#
# A failed run is tried once more: a real crasher is saved under the
# package's testdata/fuzz and fails the second run too, while a worker lost
# to a loaded machine does not. Each run has go test's default limit of
# 10 minutes. The generated corpus is kept where go test
# -fuzz keeps it ($GOCACHE/fuzz/IMPORTPATH), so both share it.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-5s}
FUZZJOBS=${FUZZJOBS:-2}
module=$($GO list -m)
cache=$($GO env GOCACHE)
bins=$(mktemp -d)
trap 'rm -rf "$bins"' EXIT

# The targets: "IMPORTPATH DIR NAME" for each func FuzzNAME(f *testing.F)
# in a package's test files.
targets=$($GO list -f '{{.ImportPath}} {{.Dir}}' ./... | while read -r pkg dir; do
  sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*\*testing\.F) {$/\1/p' "$dir"/*_test.go 2>/dev/null | sort -u | while read -r name; do
    echo "$pkg $dir $name"
  done
done)
if [ -z "$targets" ]; then
  echo "no fuzz targets found" >&2
  exit 1
fi

# One instrumented test binary per package, all built by one go command
# (in parallel, from the build cache for everything not instrumented).
pkgs=$(echo "$targets" | cut -d' ' -f1 | sort -u)
# shellcheck disable=SC2086 # one word per package
$GO test -c -o "$bins/" -gcflags="$module/...=-d=libfuzzer" $pkgs

run() { # IMPORTPATH DIR NAME
  local bin
  bin="$bins/$(basename "$1").test"
  (cd "$2" && "$bin" -test.run='^$' -test.fuzz="^$3\$" -test.fuzztime="$FUZZTIME" \
    -test.fuzzcachedir="$cache/fuzz/$1" -test.paniconexit0 -test.timeout=10m 2>&1)
}
export -f run
export bins cache FUZZTIME
echo "$targets" | xargs -P "$FUZZJOBS" -L 1 bash -c 'echo "fuzz $0 $2"; \
  out=$(run "$0" "$1" "$2") || out=$(run "$0" "$1" "$2") || \
  { echo "fuzz $0 $2 failed:"; echo "$out"; exit 255; }'
