#!/usr/bin/env bash
# bench/run.sh: node-provisioner and plasma-node side by side with the
# tools an operator would otherwise run (dnsmasq, tftpd-hpa, nginx, cat).
# Needs root (network namespaces, ports 67/69). Idempotent: installs the
# peers from Debian when missing, builds into a scratch folder, removes its
# namespaces and processes when it ends. Not part of `make test`.
#
# Usage: sudo bench/run.sh [dhcp] [tftp] [http] [storm] [inventory] [store]   (default: all but store)
# Env: BENCH_WORK (scratch folder, default a new one under /tmp),
#      BENCH_ROUNDS (runs of each side, alternating; default 3),
#      BENCH_HTTP_SIZE_MB (default 1024), BENCH_HTTP_SECONDS (wrk run, default 10),
#      BENCH_NODES (default 10000), BENCH_STORM_CLIENTS (default 1000),
#      BENCH_TFTP_MANY (TFTP clients of the largest load, each from its own address; default 1000),
#      BENCH_DHCP_N (DISCOVERs of a rate run, default 20000),
#      BENCH_OURS_SRC (checkout to build node-provisioner and plasma-node from; default this one),
#      BENCH_BEFORE_SRC (a second checkout) or BENCH_BEFORE_REV (a revision of this repository):
#        build a "before" node-provisioner and plasma-node from it and run them in the same run,
#        alternating with ours against the same peers (a "before" column in the table),
#      BENCH_SERVER_CPU / BENCH_CLIENT_CPU (CPUs the DHCP sides are pinned to, default 0 / 1),
#      BENCH_STORE_CLIENTS (machines of the store section's storm, default 200).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(dirname "$HERE")
WORK=${BENCH_WORK:-$(mktemp -d /tmp/plasma-bench.XXXXXX)}
BIN=$WORK/bin
RESULTS=$WORK/results.tsv
HTTP_MB=${BENCH_HTTP_SIZE_MB:-1024}
NODES=${BENCH_NODES:-10000}
ROUNDS=${BENCH_ROUNDS:-3}
HTTP_SECONDS=${BENCH_HTTP_SECONDS:-10}
STORM_CLIENTS=${BENCH_STORM_CLIENTS:-1000}
STORM_SOURCES=${BENCH_STORM_SOURCES:-10.79.0.0/16}
DHCP_N=${BENCH_DHCP_N:-20000}
SERVER_CPU=${BENCH_SERVER_CPU:-0} CLIENT_CPU=${BENCH_CLIENT_CPU:-1}
SERVER_PIN=()
SECTIONS=${*:-dhcp tftp http storm inventory}
STARTED=$(date +%s)

# Names of this run's own: two runs at once (several sessions on one
# machine) must not delete or share each other's namespaces; with shared
# ones, each load tool counted the other's offers.
RUN_ID=${BENCH_RUN_ID:-$$}
NS_C=pnb-client-$RUN_ID NS_S=pnb-server-$RUN_ID VETH_C=pnb-a$RUN_ID VETH_S=pnb-b$RUN_ID
CLIENT_IP=10.78.0.100 SERVER_IP=10.78.0.2 NET=10.78.0.0
# The store section's second provisioner host, its PostgreSQL host and the
# bridge joining them to the client and the first host (bench/store.sh).
NS_B=pnb-serverb-$RUN_ID NS_DB=pnb-db-$RUN_ID NS_BR=pnb-br-$RUN_ID VETH_B=pnb-c$RUN_ID VETH_DB=pnb-d$RUN_ID
SERVER_B_IP=10.78.0.3 DB_IP=10.78.0.5 PG_DIR=

mkdir -p "$WORK" "$BIN"
: >"$RESULTS"
PIDS=()

log() { printf '== %s\n' "$*" >&2; }

cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	ip netns del "$NS_C" 2>/dev/null || true
	ip netns del "$NS_S" 2>/dev/null || true
	store_cleanup
}
# The store section (PostgreSQL against the folder), in a file of its own.
# shellcheck source=bench/store.sh
. "$HERE/store.sh"
trap cleanup EXIT

# stop_pids kills the processes started so far (one section's servers).
stop_pids() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	PIDS=()
}

# result NAME OURS PEER UNIT HIGHER_IS_BETTER(1|0) [GOAL [BEFORE]]; GOAL is a
# Python expression over ours, peer and ratio (ours/peer), from issues 7
# and 28; PEER is - where no peer does the same work; BEFORE is the
# "before" build's figure of the same run (- or empty without one).
result() { printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" "${6:-}" "${7:--}" >>"$RESULTS"; }

# wait_port NS PROTO PORT: until something listens there (5 s at most).
wait_port() {
	for _ in $(seq 100); do
		if ip netns exec "$1" ss -Hln"${2:0:1}" "sport = :$3" | grep -q .; then return 0; fi
		sleep 0.05
	done
	echo "nothing listens on $2 port $3 in $1" >&2
	return 1
}

jget() { python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }

[ "$(id -u)" = 0 ] || { echo "bench/run.sh needs root (network namespaces, ports 67 and 69)" >&2; exit 1; }

# --- peers from Debian --------------------------------------------------
need=()
command -v dnsmasq >/dev/null || need+=(dnsmasq-base)
command -v in.tftpd >/dev/null || need+=(tftpd-hpa)
command -v nginx >/dev/null || need+=(nginx-light)
command -v wrk >/dev/null || need+=(wrk)
command -v hyperfine >/dev/null || need+=(hyperfine)
command -v ss >/dev/null || need+=(iproute2)
if [ ${#need[@]} -gt 0 ]; then
	log "installing ${need[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
	# Debian's packages may start their own services; these runs use their own.
	if command -v service >/dev/null; then
		service nginx stop >/dev/null 2>&1 || true
		service tftpd-hpa stop >/dev/null 2>&1 || true
	fi
fi

# --- build ---------------------------------------------------------------
# BENCH_OURS_SRC: another checkout to build node-provisioner and
# plasma-node from (a "before" run against the same harness).
OURS_SRC=${BENCH_OURS_SRC:-$REPO}
log "building into $BIN (ours from $OURS_SRC at $(git -C "$OURS_SRC" rev-parse --short HEAD 2>/dev/null || echo '?'))"
(cd "$OURS_SRC" && go build -o "$BIN/" ./cmd/node-provisioner ./cmd/plasma-node)
(cd "$REPO" && go build -o "$BIN/" ./bench/dhcpload ./bench/dhcpnull ./bench/tftpload ./bench/stormload)
# BENCH_BEFORE_SRC / BENCH_BEFORE_REV: a "before" build measured in the
# same run, round by round beside ours, against the same peers.
BEFORE_SRC=${BENCH_BEFORE_SRC:-}
if [ -n "${BENCH_BEFORE_REV:-}" ]; then
	BEFORE_SRC=$WORK/before-src
	rm -rf "$BEFORE_SRC"
	mkdir -p "$BEFORE_SRC"
	git -C "$REPO" archive "$BENCH_BEFORE_REV" | tar -x -C "$BEFORE_SRC"
fi
BEFORE=()
if [ -n "$BEFORE_SRC" ]; then
	log "building the before side into $BIN/before (from ${BENCH_BEFORE_REV:-$BEFORE_SRC})"
	mkdir -p "$BIN/before"
	(cd "$BEFORE_SRC" && go build -o "$BIN/before/" ./cmd/node-provisioner ./cmd/plasma-node)
	BEFORE=(before)
fi
# NP and PN are the node-provisioner and plasma-node a side runs: ours,
# or the before build's inside a before side.
NP=$BIN/node-provisioner PN=$BIN/plasma-node

# --- lab: two namespaces joined by a veth pair ----------------------------
lab() {
	cleanup
	ip netns add "$NS_C"
	ip netns add "$NS_S"
	ip link add "$VETH_C" netns "$NS_C" type veth peer name "$VETH_S" netns "$NS_S"
	for ns in "$NS_C" "$NS_S"; do ip -n "$ns" link set lo up; done
	ip -n "$NS_C" addr add "$CLIENT_IP/24" dev "$VETH_C"
	ip -n "$NS_S" addr add "$SERVER_IP/24" dev "$VETH_S"
	ip -n "$NS_C" link set "$VETH_C" up
	ip -n "$NS_S" link set "$VETH_S" up
	ip -n "$NS_C" route add 255.255.255.255/32 dev "$VETH_C"
}
lab

# A node-provisioner state folder: one registration pinning no MAC (so any
# PXE client is offered), a fake staged release, the iPXE binaries.
STATE=$WORK/state
prepare_state() {
	rm -rf "$STATE"
	mkdir -p "$STATE/assets/9.2-1" "$WORK/secrets" "$WORK/ipxe"
	chmod 0700 "$WORK/secrets"
	# The TFTP benchmark's 1 MiB file is the staged snponly.efi.
	head -c 1048576 /dev/urandom >"$WORK/ipxe/snponly.efi"
	cp "$WORK/ipxe/snponly.efi" "$WORK/ipxe/ipxe.efi"
	cp "$WORK/ipxe/snponly.efi" "$WORK/ipxe/undionly.kpxe"
	echo kernel >"$STATE/assets/9.2-1/linux26"
	echo initrd >"$STATE/assets/9.2-1/initrd-netboot.img"
	"$NP" --state-dir "$STATE" --secrets-dir "$WORK/secrets" register bench --boot-disk any >/dev/null
}

# as_before CMD ARGS: CMD with the before build's binaries.
as_before() { NP=$BIN/before/node-provisioner PN=$BIN/before/plasma-node "$@"; }

# serve_ours: node-provisioner serve in the server namespace, at its
# default bounds.
serve_ours() {
	ip netns exec "$NS_S" "${SERVER_PIN[@]}" "$NP" --state-dir "$STATE" --secrets-dir "$WORK/secrets" --log-format json \
		serve --http "$SERVER_IP:8090" --ttl 1h --dhcp-interface "$VETH_S" --server-ip "$SERVER_IP" \
		--tftp "$SERVER_IP:69" --ipxe-dir "$WORK/ipxe" "$@" >"$WORK/ours.log" 2>&1 &
	PIDS+=($!)
	wait_port "$NS_S" udp 67
	wait_port "$NS_S" tcp 8090
}

# Each side runs ROUNDS times, alternating, and the table shows medians: a
# small machine is noisy.
# med JSON... -- KEY: median of KEY over the JSON lines given.
med() {
	python3 -c '
import json, statistics, sys
key = sys.argv[1]
print(round(statistics.median(json.loads(l)[key] for l in sys.argv[2:]), 3))' "$@"
}

# stage OBJ KEY JSON...: median of JSON[OBJ][KEY] over the JSON lines given.
stage() {
	python3 -c '
import json, statistics, sys
o, k = sys.argv[1], sys.argv[2]
print(round(statistics.median((json.loads(l).get(o) or {}).get(k, 0) for l in sys.argv[3:]), 3))' "$@"
}

# --- 1. proxy-DHCP ---------------------------------------------------------
# Server and client are pinned to a CPU each (SERVER_CPU, CLIENT_CPU), so
# both sides get the same machine. Ours is measured against dnsmasq at its
# best (no per-transaction log: --quiet-dhcp, log to /dev/null), against
# dnsmasq writing its log to a file (how it is usually run, and the row of
# earlier runs), and against bench/dhcpnull, a responder doing no work,
# whose rate is the ceiling of this harness on this machine.
start_dnsmasq() { # [log file]: with a log file, dnsmasq logs every transaction there
	local logging=(--quiet-dhcp --log-facility=/dev/null)
	[ -n "${1:-}" ] && logging=(--log-facility="$1")
	ip netns exec "$NS_S" taskset -c "$SERVER_CPU" dnsmasq --keep-in-foreground --no-daemon --conf-file=/dev/null --no-resolv --no-hosts \
		--port=0 --interface="$VETH_S" --bind-interfaces --dhcp-range="$NET,proxy" --no-ping \
		--pxe-service=x86-64_EFI,"boot",snponly.efi --pxe-service=x86PC,"boot",undionly \
		--dhcp-boot=snponly.efi,,"$SERVER_IP" "${logging[@]}" \
		--pid-file="$WORK/dnsmasq.pid" >"$WORK/dnsmasq.out" 2>&1 &
	PIDS+=($!)
	wait_port "$NS_S" udp 67
}
start_dnsmasq_log() { start_dnsmasq "$WORK/dnsmasq.log"; }

start_null() {
	ip netns exec "$NS_S" taskset -c "$SERVER_CPU" "$BIN/dhcpnull" -iface "$VETH_S" -server-ip "$SERVER_IP" >"$WORK/dhcpnull.log" 2>&1 &
	PIDS+=($!)
	wait_port "$NS_S" udp 67
}

serve_ours_pinned() {
	SERVER_PIN=(taskset -c "$SERVER_CPU")
	serve_ours
	SERVER_PIN=()
}
serve_before_pinned() { as_before serve_ours_pinned; }

dhcpload() { ip netns exec "$NS_C" taskset -c "$CLIENT_CPU" "$BIN/dhcpload" -iface "$VETH_C" "$@"; }

# dhcp_side START ARCH: rate (DHCP_N DISCOVERs, 64 in flight) and latency
# (2 000, one in flight) runs of one side, one JSON line each.
dhcp_side() {
	"$1"
	dhcpload -arch "$2" -n 200 -c 1 -mac-base 900000 >/dev/null # warm-up
	echo "rate $(dhcpload -arch "$2" -n "$DHCP_N" -c 64 -mac-base 0)"
	echo "lat $(dhcpload -arch "$2" -n 2000 -c 1 -mac-base 100000)"
	stop_pids
}

bench_dhcp() {
	log "proxy-DHCP: $DHCP_N PXE DISCOVERs from distinct MACs (UEFI and BIOS), server on CPU $SERVER_CPU, client on CPU $CLIENT_CPU, $ROUNDS rounds"
	prepare_state
	local arch side out sides=(serve_ours_pinned)
	[ ${#BEFORE[@]} -gt 0 ] && sides+=(serve_before_pinned)
	sides+=(start_dnsmasq start_null start_dnsmasq_log)
	for arch in uefi bios; do
		local -A rate=() lat=()
		for _ in $(seq "$ROUNDS"); do
			for side in "${sides[@]}"; do
				out=$(dhcp_side "$side" "$arch")
				rate[$side]+="$(sed -n 's/^rate //p' <<<"$out") "
				lat[$side]+="$(sed -n 's/^lat //p' <<<"$out") "
			done
		done
		for side in "${sides[@]}"; do
			printf '%s %s rate:    %s\n' "$arch" "$side" "${rate[$side]}" >&2
			printf '%s %s latency: %s\n' "$arch" "$side" "${lat[$side]}" >&2
		done
		local A=${arch^^} o q n l b
		# bm KEY JSON...: the before side's median of KEY, or - without one.
		bm() { if [ $# -gt 1 ]; then med "$@"; else echo -; fi; }
		# shellcheck disable=SC2086 # one JSON line per word
		{
			o=(${rate[serve_ours_pinned]}) q=(${rate[start_dnsmasq]}) n=(${rate[start_null]}) l=(${rate[start_dnsmasq_log]})
			b=(${rate[serve_before_pinned]:-})
			result "DHCP $A offers/s vs dnsmasq quiet" "$(med offers_per_second "${o[@]}")" "$(med offers_per_second "${q[@]}")" "offers/s" 1 "ratio >= 2" "$(bm offers_per_second "${b[@]}")"
			result "DHCP $A offers/s vs ceiling" "$(med offers_per_second "${o[@]}")" "$(med offers_per_second "${n[@]}")" "offers/s" 1 "ratio >= 0.9" "$(bm offers_per_second "${b[@]}")"
			result "DHCP $A offers/s vs dnsmasq logging" "$(med offers_per_second "${o[@]}")" "$(med offers_per_second "${l[@]}")" "offers/s" 1 "" "$(bm offers_per_second "${b[@]}")"
			result "DHCP $A offers lost (median run)" "$(med lost "${o[@]}")" "$(med lost "${q[@]}")" "offers" 0 "" "$(bm lost "${b[@]}")"
			result "DHCP $A p50 (64 in flight)" "$(med p50_ms "${o[@]}")" "$(med p50_ms "${q[@]}")" "ms" 0 "" "$(bm p50_ms "${b[@]}")"
			result "DHCP $A p99 (64 in flight)" "$(med p99_ms "${o[@]}")" "$(med p99_ms "${q[@]}")" "ms" 0 "ours < peer" "$(bm p99_ms "${b[@]}")"
			o=(${lat[serve_ours_pinned]}) q=(${lat[start_dnsmasq]}) b=(${lat[serve_before_pinned]:-})
			result "DHCP $A p50 (1 in flight)" "$(med p50_ms "${o[@]}")" "$(med p50_ms "${q[@]}")" "ms" 0 "" "$(bm p50_ms "${b[@]}")"
			result "DHCP $A p99 (1 in flight)" "$(med p99_ms "${o[@]}")" "$(med p99_ms "${q[@]}")" "ms" 0 "ours < 2" "$(bm p99_ms "${b[@]}")"
		}
	done
}

# --- 2. TFTP -------------------------------------------------------------------
# Ours runs at its default bounds (1 024 transfers, 4 per address):
# beyond them a request waits rather than being refused. Three loads, each side
# in turn: 200 clients from one address, then 200 and TFTP_MANY clients
# each from its own address (STORM_SOURCES).
TFTP_LOAD=(-addr "$SERVER_IP:69" -file snponly.efi -size 1048576)
TFTP_MANY=${BENCH_TFTP_MANY:-1000}

start_tftpd() {
	mkdir -p "$WORK/tftproot"
	cp "$WORK/ipxe/snponly.efi" "$WORK/tftproot/snponly.efi"
	chmod 0755 "$WORK/tftproot"
	chmod 0644 "$WORK/tftproot/snponly.efi"
	ip netns exec "$NS_S" in.tftpd -L -s "$WORK/tftproot" -a "$SERVER_IP:69" >"$WORK/tftpd.log" 2>&1 &
	PIDS+=($!)
	wait_port "$NS_S" udp 69
}

# tftp_side START CLIENTS [SOURCES]: one run of CLIENTS fetching at once.
tftp_side() {
	"$1"
	wait_port "$NS_S" udp 69
	ip netns exec "$NS_C" "$BIN/tftpload" "${TFTP_LOAD[@]}" -c 1 >/dev/null # warm-up
	ip netns exec "$NS_C" "$BIN/tftpload" "${TFTP_LOAD[@]}" -c "$2" ${3:+-sources "$3"}
	stop_pids
}

# add_sources N: host addresses 1..N of STORM_SOURCES on the client's
# veth, routed back by the server, one per emulated machine.
add_sources() {
	python3 -c 'import ipaddress,sys; n=ipaddress.ip_network(sys.argv[1]); [print(f"addr add {n.network_address+i+1}/32 dev {sys.argv[3]}") for i in range(int(sys.argv[2]))]' \
		"$STORM_SOURCES" "$1" "$VETH_C" | ip -n "$NS_C" -force -batch - 2>/dev/null || true
	ip -n "$NS_S" route replace "$STORM_SOURCES" dev "$VETH_S"
}

bench_tftp() {
	log "TFTP: 200 clients from one address, 200 and $TFTP_MANY from as many, fetching a 1 MiB file at once, $ROUNDS rounds"
	prepare_state
	add_sources "$TFTP_MANY"
	local load clients src label
	for load in "200 -" "200 $STORM_SOURCES" "$TFTP_MANY $STORM_SOURCES"; do
		read -r clients src <<<"$load"
		[ "$src" = - ] && src=
		local ours=() peer=() before=()
		for _ in $(seq "$ROUNDS"); do
			ours+=("$(tftp_side serve_ours "$clients" "$src")")
			[ ${#BEFORE[@]} -gt 0 ] && before+=("$(as_before tftp_side serve_ours "$clients" "$src")")
			peer+=("$(tftp_side start_tftpd "$clients" "$src")")
		done
		label="$clients from one address"
		[ -n "$src" ] && label="$clients from $clients addresses"
		printf "ours ($label):      %s\n" "${ours[@]}" >&2
		printf "tftpd-hpa ($label): %s\n" "${peer[@]}" >&2
		local of=0 pf=0 bf=- bt=- j
		for j in "${ours[@]}"; do of=$((of + $(jget failures <<<"$j"))); done
		for j in "${peer[@]}"; do pf=$((pf + $(jget failures <<<"$j"))); done
		if [ ${#before[@]} -gt 0 ]; then
			printf "before ($label):    %s\n" "${before[@]}" >&2
			bf=0
			for j in "${before[@]}"; do bf=$((bf + $(jget failures <<<"$j"))); done
			bt=$(med seconds "${before[@]}")
		fi
		result "TFTP ${label}: time" "$(med seconds "${ours[@]}")" "$(med seconds "${peer[@]}")" "s" 0 "ratio <= 1" "$bt"
		result "TFTP ${label}: failures" "$of" "$pf" "clients" 0 "ours == 0" "$bf"
	done
}

# --- 3. HTTP -------------------------------------------------------------------
# wrk_json: wrk's Transfer/sec in MiB/s, as a JSON line.
wrk_json() {
	python3 -c '
import json, re, sys
m = re.search(r"Transfer/sec:\s+([\d.]+)(\w+)", sys.stdin.read())
v, u = float(m.group(1)), m.group(2)
print(json.dumps({"mib_per_second": v * {"B": 1/2**20, "KB": 1/1024, "MB": 1, "GB": 1024}[u]}))'
}

start_nginx() {
	mkdir -p "$WORK/nginx"
	cat >"$WORK/nginx/nginx.conf" <<NGINX
user root;
daemon off;
worker_processes auto;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/error.log;
events { worker_connections 1024; }
http {
	sendfile on;
	tcp_nopush on;
	access_log off;
	default_type application/octet-stream;
	client_body_temp_path $WORK/nginx/body;
	proxy_temp_path $WORK/nginx/proxy;
	fastcgi_temp_path $WORK/nginx/fastcgi;
	uwsgi_temp_path $WORK/nginx/uwsgi;
	scgi_temp_path $WORK/nginx/scgi;
	server {
		listen $SERVER_IP:8090;
		root $STATE;
	}
}
NGINX
	ip netns exec "$NS_S" nginx -c "$WORK/nginx/nginx.conf" -p "$WORK/nginx" >"$WORK/nginx/out.log" 2>&1 &
	PIDS+=($!)
	wait_port "$NS_S" tcp 8090
}

# Both servers serve the same file at the same URL.
HTTP_URL="http://$SERVER_IP:8090/assets/9.2-1/initrd-netboot.img"

# whole_files: 20 curl downloads of the whole file at once, as 20
# installers fetch their initrd; the time until the last one ends, and
# the rate it makes (20 x the file's size over that time), as JSON.
whole_files() {
	ip netns exec "$NS_C" python3 - "$HTTP_URL" "$HTTP_MB" <<'PY'
import json, subprocess, sys, time
url, mb = sys.argv[1], int(sys.argv[2])
t0 = time.monotonic()
ps = [subprocess.Popen(["curl", "-sf", "-o", "/dev/null", url]) for _ in range(20)]
fails = sum(p.wait() != 0 for p in ps)
t = time.monotonic() - t0
print(json.dumps({"seconds": t, "mib_per_second": 20 * mb / t, "failures": fails}))
PY
}

# http_side START: one round of one side, wrk then the whole files, as
# one JSON line {"wrk": MiB/s, "whole": MiB/s, ...}.
http_side() {
	"$1"
	ip netns exec "$NS_C" curl -sf -o /dev/null "$HTTP_URL" # warm-up, and proof the route works
	local w f
	w=$(ip netns exec "$NS_C" wrk -t2 -c20 -d"${HTTP_SECONDS}s" --timeout 120s "$HTTP_URL" | tee -a "$WORK/wrk.log" | wrk_json)
	f=$(whole_files)
	python3 -c 'import json,sys; w,f=json.loads(sys.argv[1]),json.loads(sys.argv[2]); print(json.dumps({"wrk": w["mib_per_second"], "whole": f["mib_per_second"], "whole_seconds": f["seconds"], "whole_failures": f["failures"]}))' "$w" "$f"
	stop_pids
}

# ratios KEY OURS_JSONS -- PEER_JSONS: the lowest of the rounds'
# ours/peer ratios of KEY (round i against round i).
lowest_ratio() {
	python3 -c '
import json, sys
k = sys.argv[1]; a = sys.argv[2:]; i = a.index("--")
o, p = [json.loads(x)[k] for x in a[:i]], [json.loads(x)[k] for x in a[i+1:]]
print(round(min(x / y for x, y in zip(o, p)), 3))' "$@"
}

bench_http() {
	log "HTTP: 20 clients fetching a ${HTTP_MB} MiB file (wrk, ${HTTP_SECONDS} s a run; then 20 whole files with curl), $ROUNDS rounds"
	prepare_state
	local rel="$STATE/assets/9.2-1" ours=() peer=() before=()
	# The big file is the staged initrd, as in a real boot.
	head -c "$((HTTP_MB << 20))" /dev/urandom >"$rel/initrd-netboot.img"
	cat "$rel/initrd-netboot.img" >/dev/null # into the page cache, for both sides
	: >"$WORK/wrk.log"
	# The sides' order turns each round (ours, before, nginx; then before,
	# nginx, ours; ...): with a fixed order, a load that changes during the
	# run favoured whichever side ran at the same point of every round.
	local r i sides=(ours before nginx)
	[ ${#BEFORE[@]} -gt 0 ] || sides=(ours nginx)
	for r in $(seq 0 $((ROUNDS - 1))); do
		for i in $(seq 0 $((${#sides[@]} - 1))); do
			case ${sides[$(((r + i) % ${#sides[@]}))]} in
			ours) ours+=("$(http_side serve_ours)") ;;
			before) before+=("$(as_before http_side serve_ours)") ;;
			nginx) peer+=("$(http_side start_nginx)") ;;
			esac
		done
	done
	printf 'ours:   %s\n' "${ours[@]}" >&2
	[ ${#before[@]} -gt 0 ] && printf 'before: %s\n' "${before[@]}" >&2
	printf 'nginx:  %s\n' "${peer[@]}" >&2
	local k b1=- b2=- b3=-
	for k in wrk whole; do
		if [ ${#before[@]} -gt 0 ]; then b1=$(med "$k" "${before[@]}") b2=$(lowest_ratio "$k" "${before[@]}" -- "${peer[@]}"); fi
		result "HTTP $k 20 x ${HTTP_MB} MiB" "$(med "$k" "${ours[@]}")" "$(med "$k" "${peer[@]}")" "MiB/s" 1 "ratio >= 1.0" "$b1"
		result "HTTP $k: lowest round ours/nginx" "$(lowest_ratio "$k" "${ours[@]}" -- "${peer[@]}")" - "ratio" 1 "ours >= 0.9" "$b2"
	done
	local wf=0 j
	for j in "${ours[@]}"; do wf=$((wf + $(jget whole_failures <<<"$j"))); done
	if [ ${#before[@]} -gt 0 ]; then
		b3=0
		for j in "${before[@]}"; do b3=$((b3 + $(jget whole_failures <<<"$j"))); done
	fi
	result "HTTP whole files failed (all rounds)" "$wf" - "files" 0 "ours == 0" "$b3"
	rm -f "$rel/initrd-netboot.img"
}

# --- 4. boot storm -------------------------------------------------------------
# STORM_CLIENTS emulated machines at once, each with its own registration
# (pinned to its MAC): proxy-DHCP DISCOVER, TFTP of the offered boot file,
# GET of the iPXE script, POST of its system info to /answer. There is no
# peer doing all four; the goal is absolute. The registrations are written
# before the clock starts (their time is its own row): an operator registers
# the machines before powering them on.
bench_storm() {
	log "boot storm: $STORM_CLIENTS clients DHCP -> TFTP -> script -> kernel -> initrd -> answer, $ROUNDS rounds"
	prepare_state
	# The kernel and initrd of 1 MiB each: the bulk transfer is the HTTP
	# section's case.
	head -c 1048576 /dev/urandom >"$STATE/assets/9.2-1/linux26"
	head -c 1048576 /dev/urandom >"$STATE/assets/9.2-1/initrd-netboot.img"
	# The real iPXE binary when Debian's ipxe is there, as a machine would fetch.
	[ -f /usr/lib/ipxe/snponly.efi ] && cp /usr/lib/ipxe/snponly.efi "$WORK/ipxe/snponly.efi"
	mkdir -p "$WORK/home/.ssh"
	# serve puts the operator's key into every answer.
	echo "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGzx6HqSm1mQ3VcLaZ3r0ZKtgtF5wVbUEjS0Xv5R5N5g op@bench" >"$WORK/home/.ssh/id_ed25519.pub"
	# Each machine fetches its script and answer from its own address, as
	# machines with their own leases do (the window bounds connections per
	# client address): host addresses 1..N of STORM_SOURCES on the client's
	# veth, routed back by the server.
	add_sources "$STORM_CLIENTS"
	rm -rf "$WORK/storm-regs" "$WORK/storm-regs.json"
	local runs=() regs=() rss=() bruns=() bregs=() brss=() out
	for _ in $(seq "$ROUNDS"); do
		out=$(storm_round)
		runs+=("$(sed -n 1p <<<"$out")") regs+=("$(sed -n 2p <<<"$out")") rss+=("$(sed -n 3p <<<"$out")")
		if [ ${#BEFORE[@]} -gt 0 ]; then
			out=$(as_before storm_round)
			bruns+=("$(sed -n 1p <<<"$out")") bregs+=("$(sed -n 2p <<<"$out")") brss+=("$(sed -n 3p <<<"$out")")
		fi
	done
	rm -rf "$WORK"/storm-old.*
	printf 'storm:         %s\n' "${runs[@]}" >&2
	printf 'registrations: %s\n' "${regs[@]}" >&2
	[ ${#bruns[@]} -gt 0 ] && printf 'before storm:  %s\n' "${bruns[@]}" >&2
	storm_results
}

# storm_round: one round of one side (NP): registrations, serve, a
# daemon on the same state folder for the API's event stream, the storm.
# Prints the storm's JSON, the registrations' JSON and the peak RSS in
# MiB, a line each.
storm_round() {
	local i t0 t1 regs out pid token fp f
	# The last round's files are moved aside, and removed once the
	# section ends: thousands of files removed just before a round made
	# each file created in it (ext4 skips inodes freed in the last
	# minutes) cost more than the answer around it.
	local old
	old=$(mktemp -d "$WORK/storm-old.XXXXXX")
	for f in "$STATE/registrations" "$STATE/api" "$STATE/events.jsonl" "$STATE/first-boot" "$STATE/installs" "$WORK/secrets"; do
		[ ! -e "$f" ] || mv "$f" "$old/"
	done
	mkdir -m 0700 "$WORK/secrets"
	# The machines are registered with the CLI once (timed, its own
	# row); later rounds, and the before build, start from a copy of
	# those registrations: 1 000 CLI runs took minutes of a loaded
	# machine each round.
	if [ ! -d "$WORK/storm-regs" ]; then
		t0=$(date +%s.%N)
		for i in $(seq 0 $((STORM_CLIENTS - 1))); do
			HOME=$WORK/home "$NP" --state-dir "$STATE" --secrets-dir "$WORK/secrets" register "storm$i" \
				--mac "$(printf '52:54:00:99:%02x:%02x' $((i >> 8 & 255)) $((i & 255)))" --boot-disk any >/dev/null 2>&1
		done
		t1=$(date +%s.%N)
		python3 -c 'import json,sys; print(json.dumps({"seconds": float(sys.argv[2]) - float(sys.argv[1])}))' "$t0" "$t1" >"$WORK/storm-regs.json"
		cp -a "$STATE/registrations" "$WORK/storm-regs"
	else
		cp -a "$WORK/storm-regs" "$STATE/registrations"
	fi
	regs=$(cat "$WORK/storm-regs.json")
	HOME=$WORK/home serve_ours
	pid=${PIDS[-1]}
	# The management API's event stream: a daemon on the same state folder
	# (no window of its own) streams the event log serve writes, as an
	# operator's status --watch against it would see it.
	token=$("$NP" --state-dir "$STATE" --secrets-dir "$WORK/secrets" token create storm --scope read)
	HOME=$WORK/home ip netns exec "$NS_S" "$NP" --state-dir "$STATE" --secrets-dir "$WORK/secrets" daemon \
		--api "$SERVER_IP:8091" --http "$SERVER_IP:8092" >"$WORK/daemon.log" 2>&1 &
	PIDS+=($!)
	wait_port "$NS_S" tcp 8091
	fp=$("$NP" --state-dir "$STATE" --secrets-dir "$WORK/secrets" tls fingerprint)
	out=$(STORMLOAD_TOKEN=$token ip netns exec "$NS_C" "$BIN/stormload" -iface "$VETH_C" -server "$SERVER_IP" -http-port 8090 \
		-c "$STORM_CLIENTS" -sources "$STORM_SOURCES" -events "$STATE/events.jsonl" \
		-api "https://$SERVER_IP:8091" -fingerprint "$fp" \
		-sysinfo "$REPO/answer/testdata/sysinfo/pve-9.2-synthetic.json")
	echo "$out"
	echo "$regs"
	# The peak resident memory of node-provisioner serve over the storm.
	awk '/^VmHWM/ {print $2 / 1024}' "/proc/$pid/status"
	stop_pids
}

# storm_results: the storm's rows from runs, regs, rss (ours) and bruns,
# bregs, brss (before) of bench_storm.
storm_results() {
	local fails=0 bfails=- j b
	for j in "${runs[@]}"; do fails=$((fails + $(jget failures <<<"$j"))); done
	if [ ${#bruns[@]} -gt 0 ]; then
		bfails=0
		for j in "${bruns[@]}"; do bfails=$((bfails + $(jget failures <<<"$j"))); done
	fi
	# bs KEY [OBJ]: the before side's median, or -.
	bs() {
		[ ${#bruns[@]} -gt 0 ] || { echo -; return; }
		if [ $# -gt 1 ]; then stage "$2" "$1" "${bruns[@]}"; else med "$1" "${bruns[@]}"; fi
	}
	result "storm $STORM_CLIENTS clients total" "$(med seconds "${runs[@]}")" - "s" 0 "ours < 10" "$(bs seconds)"
	result "storm failures (all rounds)" "$fails" - "clients" 0 "ours == 0" "$bfails"
	result "storm per-client p50" "$(med p50_s "${runs[@]}")" - "s" 0 "" "$(bs p50_s)"
	result "storm per-client p99" "$(med p99_s "${runs[@]}")" - "s" 0 "" "$(bs p99_s)"
	local st
	for st in dhcp tftp script kernel initrd answer; do
		result "storm stage $st p50" "$(stage stage_p50_ms "$st" "${runs[@]}")" - "ms" 0 "" "$(bs "$st" stage_p50_ms)"
		result "storm stage $st p99" "$(stage stage_p99_ms "$st" "${runs[@]}")" - "ms" 0 "" "$(bs "$st" stage_p99_ms)"
	done
	result "storm event log behind p99" "$(stage events behind_p99_ms "${runs[@]}")" - "ms" 0 "ours < 500" "$(bs behind_p99_ms events)"
	result "storm API event stream behind p99" "$(stage api_events behind_p99_ms "${runs[@]}")" - "ms" 0 "ours < 500" "$(bs behind_p99_ms api_events)"
	result "storm events written (median)" "$(stage events count "${runs[@]}")" - "events" 1 "" "$(bs count events)"
	result "storm API events streamed (median)" "$(stage api_events count "${runs[@]}")" - "events" 1 "" "$(bs count api_events)"
	b=-
	[ ${#brss[@]} -gt 0 ] && b=$(python3 -c 'import statistics,sys; print(statistics.median(float(x) for x in sys.argv[1:]))' "${brss[@]}")
	result "storm node-provisioner peak RSS" "$(python3 -c 'import statistics,sys; print(statistics.median(float(x) for x in sys.argv[1:]))' "${rss[@]}")" - "MiB" 0 "ours < 150" "$b"
	b=-
	result "storm: $STORM_CLIENTS registrations (CLI, once)" "$(med seconds "${regs[@]}")" - "s" 0 "" "$b"
}

# --- 5. inventory -----------------------------------------------------------
bench_inventory() {
	log "inventory: plasma-node list of $NODES nodes against cat of their files"
	local dir="$WORK/project" platforms=10 ours peer
	rm -rf "$dir"
	mkdir -p "$dir"
	for p in $(seq 1 $platforms); do
		"$PN" --dir "$dir" add "p$p" --provider manual >/dev/null 2>&1
	done
	# Node files in the format plasma-node add writes, spread over the platforms.
	python3 - "$dir" "$NODES" "$platforms" <<'PY'
import os, sys
d, n, np = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for i in range(n):
    p = f"p{i % np + 1}"
    h = f"node{i:05d}"
    with open(os.path.join(d, "platforms", p, "nodes", h + ".yaml"), "w") as f:
        f.write(f"hostname: {h}\nzones:\n  - platform.prod\nnetwork:\n  public_ip: 192.0.{i >> 8 & 255}.{i & 255}\n"
                f"  private_ip: 192.168.{i >> 8 & 255}.{i & 255}\nk8s_labels:\n  platform.prod: \"true\"\n")
PY
	local got
	got=$("$PN" --dir "$dir" list | tail -n +2 | wc -l)
	[ "$got" = "$NODES" ] || { echo "plasma-node list printed $got nodes, want $NODES" >&2; return 1; }
	hyperfine -N --warmup 2 --runs 10 --export-json "$WORK/inventory.json" \
		"$PN --dir $dir list" >&2
	ours=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"][0]["mean"]*1000)' "$WORK/inventory.json")
	hyperfine --warmup 2 --runs 10 --export-json "$WORK/inventory-cat.json" \
		"cat $dir/platforms/*/nodes/*.yaml >/dev/null" >&2
	peer=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"][0]["mean"]*1000)' "$WORK/inventory-cat.json")
	local before=-
	if [ ${#BEFORE[@]} -gt 0 ]; then
		hyperfine -N --warmup 2 --runs 10 --export-json "$WORK/inventory-before.json" \
			"$BIN/before/plasma-node --dir $dir list" >&2
		before=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"][0]["mean"]*1000)' "$WORK/inventory-before.json")
	fi
	result "list of $NODES nodes (mean)" "$ours" "$peer" "ms" 0 "ratio <= 2" "$before"

	# IP allocation at scale: one platform holding all $NODES nodes in its
	# private network; each `add --hostname` takes the platform lock, reads
	# every node's address and writes the new node with the lowest free one.
	# `allocate` moves 20 nodes of the same platform to another zone, one run
	# each. No peer does this; the rows show the mean time of one run.
	"$PN" --dir "$dir" add big --provider manual >/dev/null 2>&1
	python3 - "$dir" "$NODES" <<'PY'
import os, sys
d, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    h = f"big{i:05d}"
    with open(os.path.join(d, "platforms", "big", "nodes", h + ".yaml"), "w") as f:
        f.write(f"hostname: {h}\nzones:\n  - platform.prod\nnetwork:\n  private_ip: 192.168.{i >> 8 & 255}.{i & 255}\n")
PY
	hyperfine -N --runs 1 -P i 1 20 --export-json "$WORK/alloc-add.json" \
		"$PN --dir $dir add big --hostname new{i} -z platform.prod" >/dev/null
	got=$("$PN" --dir "$dir" show new20 -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)["network"]["private_ip"])')
	log "new20 got private IP ${got:-?} (the 20th free address after $NODES taken)"
	ours=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"]; print(sum(x["mean"] for x in r)/len(r)*1000)' "$WORK/alloc-add.json")
	result "add with IP, $NODES-node platform" "$ours" - "ms" 0
	hyperfine -N --runs 1 -P i 10 29 --export-json "$WORK/alloc-zones.json" \
		"$PN --dir $dir allocate big000{i} platform.prod/platform.staging" >/dev/null
	ours=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"]; print(sum(x["mean"] for x in r)/len(r)*1000)' "$WORK/alloc-zones.json")
	result "allocate zones, $NODES-node platform" "$ours" - "ms" 0
}

for s in $SECTIONS; do "bench_$s"; done

# --- table -------------------------------------------------------------------
python3 - "$RESULTS" <<'PY'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
with_before = any(r[6] != "-" for r in rows)
fmt = lambda v: f"{v:.0f}" if abs(v) >= 100 else f"{v:.3g}"
head = f"{'benchmark':<38} "
if with_before:
    head += f"{'before':>9} "
print(head + f"{'ours':>9} {'peer':>9} {'unit':<9} {'ours/peer':>9} {'better':>6}  goal")
for name, ours, peer, unit, hib, goal, before in rows:
    o, p = float(ours), (None if peer == "-" else float(peer))
    ratio = o / p if p else None
    if p is None: better = "-"
    elif o == p: better = "="
    elif hib == "1": better = "ours" if o > p else "peer"
    else: better = "ours" if o < p else "peer"
    g = ""
    if goal:
        try:
            ok = eval(goal, {}, {"ours": o, "peer": p, "ratio": ratio})
        except TypeError:
            ok = False
        g = f"{goal}: {'met' if ok else 'MISSED'}"
    rs = f"{ratio:.2f}" if ratio is not None else "-"
    ps = "-" if p is None else fmt(p)
    line = f"{name:<38} "
    if with_before:
        line += f"{'-' if before == '-' else fmt(float(before)):>9} "
    print(line + f"{fmt(o):>9} {ps:>9} {unit:<9} {rs:>9} {better:>6}  {g}")
PY
echo "(run time $(( $(date +%s) - STARTED )) s; scratch folder with logs: $WORK)" >&2
