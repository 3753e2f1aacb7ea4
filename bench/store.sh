# bench/store.sh: the "store" section of bench/run.sh (issue 24), sourced
# by it: node-provisioner on a PostgreSQL store side by side with the
# state folder, in one run. Three sides, alternating round by round:
#   folder  one host (serve) on its state folder;
#   pg1     one host on a PostgreSQL store;
#   pg2     two hosts (two serve windows in two namespaces) sharing one
#           PostgreSQL store: both offer proxy-DHCP, each machine boots
#           from the host whose offer it took.
# Each round registers STORE_CLIENTS machines with `node-provisioner
# register` (registrations per second through the real binary), then boots
# them at once with bench/stormload (the storm's time, and the p50/p99 of
# POST /answer on registrations made beforehand).
#
# Lab: a bridge in its own namespace joins the client (10.78.0.100), host A
# (10.78.0.2), host B (10.78.0.3) and the PostgreSQL host (10.78.0.5), each
# in a namespace of its own; PostgreSQL (Debian's, as internal/pgtest
# starts it: initdb, pg_ctl, run as the postgres user, trust
# authentication on the lab's subnet) keeps its default durability
# (fsync on, unless BENCH_PG_FSYNC=off), as a site's would.

STORE_CLIENTS=${BENCH_STORE_CLIENTS:-200}
# BENCH_API_N: registrations through the API (bench/apiload) per round;
# BENCH_STORE_API=0 leaves the API rounds out.
API_N=${BENCH_API_N:-500}
STORE_API=${BENCH_STORE_API:-1}
# BENCH_STORE_PIN=1 pins host A to BENCH_SERVER_CPU and host B to
# BENCH_CLIENT_CPU (the client and PostgreSQL unpinned): one host gets
# one CPU, two hosts two, as two machines would.
STORE_PIN=${BENCH_STORE_PIN:-}
# BENCH_PG_FSYNC=off runs PostgreSQL without fsync (as internal/pgtest
# does), to see what the disk's flushes cost.
PG_FSYNC=${BENCH_PG_FSYNC:-on}

# store_cleanup stops the section's PostgreSQL and removes its namespaces.
store_cleanup() {
	if [ -n "${PG_DIR:-}" ] && [ -d "$PG_DIR/data" ]; then
		runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate -w stop >/dev/null 2>&1 || true
		rm -rf "$PG_DIR"
		PG_DIR=
	fi
	for ns in "$NS_B" "$NS_DB" "$NS_BR"; do ip netns del "$ns" 2>/dev/null || true; done
}

# lab_store: client, host A, host B and the database on one bridge.
lab_store() {
	cleanup
	local x ns veth ip
	ip netns add "$NS_BR"
	ip -n "$NS_BR" link add br0 type bridge
	ip -n "$NS_BR" link set br0 up
	for x in "$NS_C:$VETH_C:$CLIENT_IP" "$NS_S:$VETH_S:$SERVER_IP" "$NS_B:$VETH_B:$SERVER_B_IP" "$NS_DB:$VETH_DB:$DB_IP"; do
		IFS=: read -r ns veth ip <<<"$x"
		ip netns add "$ns"
		ip link add "$veth" netns "$ns" type veth peer name "x$veth" netns "$NS_BR"
		ip -n "$NS_BR" link set "x$veth" master br0
		ip -n "$NS_BR" link set "x$veth" up
		ip -n "$ns" link set lo up
		ip -n "$ns" addr add "$ip/24" dev "$veth"
		ip -n "$ns" link set "$veth" up
	done
	ip -n "$NS_C" route add 255.255.255.255/32 dev "$VETH_C"
	# Each machine's own address (STORM_SOURCES on the client), reached
	# from both hosts across the bridge.
	python3 -c 'import ipaddress,sys; n=ipaddress.ip_network(sys.argv[1]); [print(f"addr add {n.network_address+i+1}/32 dev {sys.argv[3]}") for i in range(int(sys.argv[2]))]' \
		"$STORM_SOURCES" "$STORE_CLIENTS" "$VETH_C" | ip -n "$NS_C" -force -batch - 2>/dev/null || true
	ip -n "$NS_S" route replace "$STORM_SOURCES" dev "$VETH_S"
	ip -n "$NS_B" route replace "$STORM_SOURCES" dev "$VETH_B"
}

# start_pg: a PostgreSQL cluster in the database namespace on DB_IP:5432.
start_pg() {
	# initdb, pg_ctl and psql: pg_ctl's folder (PATH's, links followed),
	# else Debian's newest /usr/lib/postgresql/<version>/bin.
	PG_BIN=$(dirname "$(readlink -f "$(command -v pg_ctl 2>/dev/null || ls -d /usr/lib/postgresql/*/bin/pg_ctl | sort -V | tail -n 1)")")
	[ -x "$PG_BIN/initdb" ] || { echo "bench/run.sh store needs PostgreSQL's server (Debian package postgresql)" >&2; return 1; }
	# Not under WORK: the postgres user cannot enter a 0700 folder of root's.
	PG_DIR=$(mktemp -d /tmp/pnb-pg.XXXXXX)
	chown postgres: "$PG_DIR"
	runuser -u postgres -- "$PG_BIN/initdb" -D "$PG_DIR/data" -U postgres --auth=trust -E UTF8 >"$WORK/pg-initdb.log"
	echo "host all all $NET/24 trust" >>"$PG_DIR/data/pg_hba.conf"
	ip netns exec "$NS_DB" runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/log" \
		-o "-c listen_addresses=$DB_IP -p 5432 -k $PG_DIR -c max_connections=300 -c fsync=$PG_FSYNC" -w -t 30 start >/dev/null
}

# pg_url N: the store of round N, a database of its own.
pg_url() { echo "postgres://postgres@$DB_IP:5432/np$1?sslmode=disable"; }

# serve_host NS VETH IP STATE LOG [CPU]: node-provisioner serve as
# serve_ours runs it, on that host (NODE_PROVISIONER_STORE from the
# environment), pinned to CPU when given.
serve_host() {
	local pin=()
	[ -n "${6:-}" ] && pin=(taskset -c "$6")
	HOME=$WORK/home ip netns exec "$1" "${pin[@]}" "$NP" --state-dir "$4" --secrets-dir "$WORK/secrets" --log-format json \
		serve --http "$3:8090" --ttl 1h --dhcp-interface "$2" --server-ip "$3" \
		--tftp "$3:69" --ipxe-dir "$WORK/ipxe" >"$5" 2>&1 &
	PIDS+=($!)
	wait_port "$1" udp 67
	wait_port "$1" tcp 8090
}

# store_round SIDE N: one round of one side (folder, pg1, pg2), on the
# fresh database np<N> for pg. Prints the storm's JSON and the
# registrations' JSON, a line each.
store_round() {
	local side=$1 n=$2 i t0 t1 out
	rm -rf "$STATE/registrations" "$STATE/api" "$STATE/events.jsonl" "$STATE/store.key" "$WORK/secrets" "$WORK/stateb"
	mkdir -m 0700 "$WORK/secrets"
	if [ "$side" = folder ]; then
		unset NODE_PROVISIONER_STORE
	else
		runuser -u postgres -- "$PG_BIN/psql" -X -q -h "$PG_DIR" -U postgres -d postgres -c "CREATE DATABASE np$n" >/dev/null
		export NODE_PROVISIONER_STORE
		NODE_PROVISIONER_STORE=$(pg_url "$n")
	fi
	# Registrations through the real binary, from host A, one process each.
	t0=$(date +%s.%N)
	for i in $(seq 0 $((STORE_CLIENTS - 1))); do
		HOME=$WORK/home ip netns exec "$NS_S" "$NP" --state-dir "$STATE" --secrets-dir "$WORK/secrets" register "storm$i" \
			--mac "$(printf '52:54:00:99:%02x:%02x' $((i >> 8 & 255)) $((i & 255)))" --boot-disk any >/dev/null 2>>"$WORK/store-register.log"
	done
	t1=$(date +%s.%N)
	if [ "$side" = pg2 ]; then
		# Host B: its own state folder (assets, certificate, window), the
		# same store.
		cp -a "$STATE" "$WORK/stateb"
		rm -rf "$WORK/stateb/registrations"
	fi
	local cpu_a= cpu_b=
	[ -n "$STORE_PIN" ] && cpu_a=$SERVER_CPU cpu_b=$CLIENT_CPU
	serve_host "$NS_S" "$VETH_S" "$SERVER_IP" "$STATE" "$WORK/store-a.log" "$cpu_a"
	if [ "$side" = pg2 ]; then
		# The store's key, made by its first host (A) when it opened the
		# secrets.
		install -m 0600 "$STATE/store.key" "$WORK/stateb/store.key"
		serve_host "$NS_B" "$VETH_B" "$SERVER_B_IP" "$WORK/stateb" "$WORK/store-b.log" "$cpu_b"
	fi
	# With two hosts, machine i boots from host A when i is even, from B
	# when odd (-prefer), as machines behind relays pointing at either
	# host do: the first offer on this bridge is always A's.
	local prefer=()
	[ "$side" = pg2 ] && prefer=(-prefer "$SERVER_IP,$SERVER_B_IP")
	out=$(ip netns exec "$NS_C" "$BIN/stormload" -iface "$VETH_C" -server "$SERVER_IP" -http-port 8090 \
		-c "$STORE_CLIENTS" -sources "$STORM_SOURCES" "${prefer[@]}" \
		-sysinfo "$REPO/answer/testdata/sysinfo/pve-9.2-synthetic.json")
	echo "$out"
	python3 -c 'import json,sys; s=float(sys.argv[2])-float(sys.argv[1]); print(json.dumps({"seconds": s, "per_second": int(sys.argv[3])/s}))' "$t0" "$t1" "$STORE_CLIENTS"
	stop_pids
	unset NODE_PROVISIONER_STORE
}

# api_round SIDE N: bench/apiload on host A (its daemon in-process, the
# storm on loopback) on the folder or on the fresh database np<N>: one
# compact JSON line.
api_round() {
	if [ "$1" = pg ]; then
		runuser -u postgres -- "$PG_BIN/psql" -X -q -h "$PG_DIR" -U postgres -d postgres -c "CREATE DATABASE np$2" >/dev/null
		export NODE_PROVISIONER_STORE
		NODE_PROVISIONER_STORE=$(pg_url "$2")
	fi
	ip netns exec "$NS_S" "$BIN/apiload" -n "$API_N" -c 16 -storm "$STORE_CLIENTS" \
		-sysinfo "$REPO/answer/testdata/sysinfo/pve-9.2-synthetic.json" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin), separators=(",", ":")))'
	unset NODE_PROVISIONER_STORE
}

bench_store() {
	log "store: $STORE_CLIENTS registrations (CLI) and a $STORE_CLIENTS-machine storm: folder, PostgreSQL on one host, PostgreSQL shared by two hosts; $ROUNDS rounds"
	prepare_state
	rm -rf "$STATE/registrations"
	head -c 1048576 /dev/urandom >"$STATE/assets/9.2-1/linux26"
	head -c 1048576 /dev/urandom >"$STATE/assets/9.2-1/initrd-netboot.img"
	[ -f /usr/lib/ipxe/snponly.efi ] && cp /usr/lib/ipxe/snponly.efi "$WORK/ipxe/snponly.efi"
	mkdir -p "$WORK/home/.ssh"
	echo "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGzx6HqSm1mQ3VcLaZ3r0ZKtgtF5wVbUEjS0Xv5R5N5g op@bench" >"$WORK/home/.ssh/id_ed25519.pub"
	(cd "$REPO" && go build -o "$BIN/" ./bench/apiload)
	lab_store
	start_pg
	local -A storm=() regs=() api=()
	local r side out db=0
	for r in $(seq "$ROUNDS"); do
		for side in folder pg1 pg2; do
			db=$((db + 1))
			out=$(store_round "$side" "$db")
			storm[$side]+="$(sed -n 1p <<<"$out" | tr -d ' ') "
			regs[$side]+="$(sed -n 2p <<<"$out" | tr -d ' ') "
		done
		for side in folder pg; do
			[ "$STORE_API" = 0 ] && continue
			db=$((db + 1))
			api[$side]+="$(api_round "$side" "$db" | tr -d ' ') "
		done
	done
	for side in folder pg1 pg2; do
		printf 'store %-6s storm: %s\n' "$side" "${storm[$side]}" >&2
		printf 'store %-6s registrations: %s\n' "$side" "${regs[$side]}" >&2
	done
	local f p q j ff pf qf
	# shellcheck disable=SC2086 # one JSON line per word
	[ "$STORE_API" = 0 ] || {
		printf 'store API %-6s %s\n' folder "${api[folder]}" pg "${api[pg]}" >&2
		f=(${api[folder]}) p=(${api[pg]})
		result "store: API registrations/s pg/folder" "$(med per_second "${p[@]}")" "$(med per_second "${f[@]}")" "reg/s" 1
		result "store: API register p99 pg/folder" "$(stage register p99_ms "${p[@]}")" "$(stage register p99_ms "${f[@]}")" "ms" 0
		result "store: direct registrations/s pg/folder" "$(med direct_per_second "${p[@]}")" "$(med direct_per_second "${f[@]}")" "reg/s" 1
		result "store: API storm answer p50 pg/folder" "$(stage storm_answer p50_ms "${p[@]}")" "$(stage storm_answer p50_ms "${f[@]}")" "ms" 0
		result "store: API storm answer p99 pg/folder" "$(stage storm_answer p99_ms "${p[@]}")" "$(stage storm_answer p99_ms "${f[@]}")" "ms" 0
	}
	# shellcheck disable=SC2086 # one JSON line per word
	{
		f=(${storm[folder]}) p=(${storm[pg1]}) q=(${storm[pg2]})
		result "store: registrations/s (CLI) pg/folder" "$(med per_second ${regs[pg1]})" "$(med per_second ${regs[folder]})" "reg/s" 1
		result "store: answer p50 (storm) pg/folder" "$(stage stage_p50_ms answer "${p[@]}")" "$(stage stage_p50_ms answer "${f[@]}")" "ms" 0
		result "store: answer p99 (storm) pg/folder" "$(stage stage_p99_ms answer "${p[@]}")" "$(stage stage_p99_ms answer "${f[@]}")" "ms" 0
		result "store: answer p99 pg 2 hosts/folder" "$(stage stage_p99_ms answer "${q[@]}")" "$(stage stage_p99_ms answer "${f[@]}")" "ms" 0
		result "store: storm $STORE_CLIENTS pg/folder" "$(med seconds "${p[@]}")" "$(med seconds "${f[@]}")" "s" 0
		result "store: storm $STORE_CLIENTS pg 2 hosts/1" "$(med seconds "${q[@]}")" "$(med seconds "${p[@]}")" "s" 0
		result "store: storm $STORE_CLIENTS pg 2 hosts/folder" "$(med seconds "${q[@]}")" "$(med seconds "${f[@]}")" "s" 0
		result "store: storm p99 pg 2 hosts/1" "$(med p99_s "${q[@]}")" "$(med p99_s "${p[@]}")" "s" 0
	}
	ff=0 pf=0 qf=0
	for j in "${f[@]}"; do ff=$((ff + $(jget failures <<<"$j"))); done
	for j in "${p[@]}"; do pf=$((pf + $(jget failures <<<"$j"))); done
	for j in "${q[@]}"; do qf=$((qf + $(jget failures <<<"$j"))); done
	result "store: storm failures pg/folder" "$pf" "$ff" "clients" 0 "ours == 0"
	result "store: storm failures pg 2 hosts" "$qf" - "clients" 0 "ours == 0"
	# How the two hosts shared the storm: host B's part of the machines.
	result "store: 2 hosts: booted by host B" "$(python3 -c '
import json, statistics, sys
b = sys.argv[1]
print(round(statistics.median(json.loads(l).get("by_server", {}).get(b, 0) / max(1, json.loads(l)["ok"]) for l in sys.argv[2:]), 3))' "$SERVER_B_IP" "${q[@]}")" - "share" 1
	store_cleanup
	lab
}
