#!/usr/bin/env bash
# bench/profile.sh: CPU and allocation profiles of the hot paths, from
# their Go benchmarks (no root, no network namespaces): where an offer's,
# a TFTP block's, a timeline event's or an answer's time and allocations
# go.
#
# Usage: bench/profile.sh [dhcp] [event] [tftp] [answer]   (default: all)
# Env: BENCH_WORK (folder for the profiles; default a new one under /tmp),
#      BENCH_PROFILE_TOP (lines of each top listing, default 25).
# Each profile is kept; open one with `go tool pprof -http=: FILE`.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(dirname "$HERE")
WORK=${BENCH_WORK:-$(mktemp -d /tmp/plasma-profile.XXXXXX)}
TOP=${BENCH_PROFILE_TOP:-25}
SECTIONS=${*:-dhcp event tftp answer}
mkdir -p "$WORK"

# profile NAME PACKAGE BENCHMARK: CPU and allocation profiles of one benchmark.
profile() {
	local name=$1 pkg=$2 bench=$3
	echo "== $name: $bench in $pkg"
	(cd "$REPO" && go test -run '^$' -bench "^${bench}\$" -benchtime 2s -benchmem \
		-cpuprofile "$WORK/$name.cpu" -memprofile "$WORK/$name.mem" -o "$WORK/$name.test" "$pkg")
	echo "-- CPU (flat, top $TOP)"
	go tool pprof -top -nodecount "$TOP" "$WORK/$name.test" "$WORK/$name.cpu" 2>/dev/null | tail -n +6
	echo "-- allocations (objects, top $TOP)"
	go tool pprof -top -nodecount "$TOP" -sample_index=alloc_objects "$WORK/$name.test" "$WORK/$name.mem" 2>/dev/null | tail -n +6
}

for s in $SECTIONS; do
	case $s in
	dhcp) profile dhcp ./pxe/dhcpserver 'BenchmarkHandleDiscover/budget' ;;
	event) profile event ./pxe 'BenchmarkDHCPEvent' ;;
	tftp) profile tftp ./pxe/tftp 'BenchmarkBlockLoop' ;;
	answer) profile answer ./pxe/netboot 'BenchmarkAnswer' ;;
	*) echo "unknown section $s: want dhcp, event, tftp or answer" >&2; exit 2 ;;
	esac
done
echo "(profiles in $WORK)" >&2
