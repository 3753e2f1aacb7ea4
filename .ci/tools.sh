#!/usr/bin/env bash
# Builds the tools the real-binary tests need, from the Go module proxy, into
# a machine-wide cache, ${XDG_CACHE_HOME:-$HOME/.cache}/plasma-node/tools,
# linked from .tools in the checkout (git-ignored):
#
#   .tools/bin/tofu                 OpenTofu $TOFU_VERSION (built without the state
#                                   backends the project never uses: TOFU_SLIM)
#   .tools/src/                     the slimmed copies tofu, weed and the Scaleway
#                                   plugin build from
#   .tools/mirror/<host>/<ns>/<type>/<version>/linux_amd64/terraform-provider-<type>_v<version>
#                                   provider plugins, for both registry hosts
#                                   (ovh/ovh built from ../shared/vendor by its
#                                   build-plugins.sh, into
#                                   .tools/plugins/gcflags-N-l/mirror;
#                                   scaleway/scaleway from the same folder's
#                                   tarballs, slimmed: SCALEWAY_SLIM)
#   .tools/tofurc                   CLI configuration installing only from that mirror
#   .tools/bin/weed                 SeaweedFS $SEAWEEDFS_VERSION, the S3 server the s3
#                                   state backend is tested against (e2e/s3_test.go),
#                                   built without what that server never loads: WEED_SLIM
#   .tools/kernel-v2/vmlinuz        the kernel of Debian's linux-image-amd64 (unpacked,
#   .tools/kernel-v2/modules/       not installed) and the NIC driver and efivarfs
#                                   modules the netboot test's initrd loads
#                                   (e2e/netboot_test.go)
#   .tools/grub-http/grubnetx64.efi.signed
#                                   Debian 13's Debian-signed network grub, which has
#                                   the http module (e2e/secureboot_test.go)
#
# Tests and CI use them with:
#   export PLASMA_TOFU="$PWD/.tools/bin/tofu"
#   export TF_CLI_CONFIG_FILE="$PWD/.tools/tofurc"
#
# Idempotent: a tool already present (tofu at the right version, a plugin at
# its versioned path) is not rebuilt; a tofu or weed of the same version
# built whole, before the slimming, is kept (the tests see no difference).
# SeaweedFS builds beside the others, which run one at a time (2-core
# machines). `go install module@version` is refused for these modules
# (replace directives), so each is built inside its module cache copy, or
# inside its slimmed copy (slimcopy).
#
# With --go it builds only what Go and the network make (tofu, weed, the
# plugins, tofurc) and stops before the kernel and grub, which need the
# Debian packages: .ci/run starts it that way while apt-get installs.
set -euo pipefail
only_go=
if [ "${1:-}" = "--go" ]; then
  only_go=1
elif [ $# -gt 0 ]; then
  echo "usage: .ci/tools.sh [--go]" >&2
  exit 2
fi
cd "$(dirname "$0")/.."
root=$PWD

TOFU_VERSION=1.12.6
LOCAL_VERSION=1.4.0
HCLOUD_VERSION=1.60.1
# SeaweedFS 4.53 (2026-11-09): its S3 gateway makes a conditional PUT
# (If-None-Match: *) atomic (seaweedfs#8800, fixed in March 2026), which
# tofu's use_lockfile locking rests on.
SEAWEEDFS_VERSION=v0.0.0-20261109003541-7506e5f91cd6

# What each of those builds leaves out (slimcopy's SPEC; see slimedit).
# It costs a user of these binaries nothing: they are test tools, and the
# tests never reach what goes. OpenTofu:
# - the state backends the project never writes (it writes local, pg and
#   s3: tofu/backend.go), their imports and their entries in the backend
#   table: a configuration naming one is refused by tofu's own
#   "unsupported backend" error (the project refuses them before that);
# - the cloud KMS key providers of state encryption (aws_kms, gcp_kms,
#   azure_vault, openbao; the project configures no state encryption;
#   pbkdf2 and external stay): such a key_provider is refused as unknown;
# - the GCS module getter, in tofu's getter table and in go-getter itself
#   (GETTER_SLIM: get_gcs.go links cloud.google.com/go/storage, gRPC xDS,
#   envoy, the Google API clients; the project's modules are local): a
#   gcs:: module source is refused;
# - the OpenTelemetry trace exporters (autoexport: OTLP over gRPC and
#   HTTP, Prometheus): OTEL_TRACES_EXPORTER=otlp no longer turns tracing on;
# - the file and remote-exec provisioners, with the SSH and WinRM
#   communicators (the project's configurations have no provisioner;
#   local-exec stays).
# tofu prints the same version. 1175 -> 669 non-std packages, 67 -> 41 MB
# of Go source (`go list -deps ./cmd/tofu`); compile CPU with an empty
# GOCACHE 494 -> 334 s (2 cores, same load; 332 s through this script).
TOFU_SLIM='internal/backend/init/init.go 12 backend(Azure|Consul|Cos|GCS|Kubernetes|OSS)[ .]
internal/encryption/default_registry.go 4 ^[[:space:]]*"github.com/opentofu/opentofu/internal/encryption/keyprovider/(aws_kms|azure_vault|gcp_kms|openbao)"$
internal/encryption/default_registry.go 12 /RegisterKeyProvider[(](aws_kms|gcp_kms|azure_vault|openbao)[.]New[(][)][)]/,/^[[:space:]]}$/
internal/getmodules/getter.go 1 ^[[:space:]]*"gcs":[[:space:]]*new[(]getter[.]GCSGetter[)],$
internal/tracing/init.go 7 ^[[:space:]]*("fmt"|"github.com/go-logr/stdr"|"go.opentelemetry.io/contrib/exporters/autoexport"|"go.opentelemetry.io/otel"|"go.opentelemetry.io/otel/propagation"|sdktrace "go.opentelemetry.io/otel/sdk/trace"|"github.com/opentofu/opentofu/internal/tracing/traceattrs")$
internal/tracing/init.go 60 /^[[:space:]]isTracingEnabled = true$/,/^[[:space:]][}][)][)]$/
internal/command/plugins.go 2 ^[[:space:]]*(fileprovisioner|remoteexec) "github.com/opentofu/opentofu/internal/builtin/provisioners/(file|remote-exec)"$
internal/command/plugins.go 2 ^[[:space:]]*"(file|remote-exec)":[[:space:]]*provisioners[.]FactoryFixed[(](fileprovisioner|remoteexec)[.]New[(][)][)],$'
GETTER_VERSION=v1.8.6
GETTER_SLIM='get_gcs.go 233 *
get.go 1 ^[[:space:]]*"gcs":[[:space:]]*new[(]GCSGetter[)],$'
# SeaweedFS: the tests run one `weed server` with a filer on its default
# store (leveldb2) and the S3 gateway (e2e/s3_test.go). The blank imports
# that register the other filer stores, notification queues, replication
# sinks, remote storages, key managers, the PostgreSQL credential store
# and the Iceberg maintenance worker go. So do the volume server's Azure
# and GCS remote-storage clients (with the Google Cloud and Azure SDKs and
# gRPC's xDS: about 260 packages), the S3 gateway's Iceberg REST catalog
# (Apache Arrow, Iceberg, Substrait: about 70), and the commands that link
# the admin UI, the maintenance worker, FUSE mounts, the Kafka gateway and
# the replication queues (admin, mini, worker, mount, fuse,
# mq.kafka.gateway, filer.replicate, filer.backup). weed server, master,
# volume, filer and s3 stay. About half of weed's packages and source go
# (1269 -> 651 packages, 85 -> 46 MB of Go).
WEED_SLIM='weed/command/imports.go 23 ^[[:space:]]*_ "github.com/seaweedfs/seaweedfs/weed/(remote_storage/(azure|gcs)|replication/sink/(azuresink|b2sink|gcssink|s3sink)|filer/(arangodb|cassandra|elastic/v7|etcd|hbase|mongodb|mysql2?|postgres2?|redis[23]?|sqlite|tarantool|tikv|ydb))"$
weed/server/filer_server.go 22 ^[[:space:]]*_ "github.com/seaweedfs/seaweedfs/weed/(filer/(arangodb|cassandra2?|elastic/v7|etcd|foundationdb|hbase|mongodb|mysql2?|postgres2?|redis[23]?|sqlite|tarantool|ydb)|notification/(aws_sqs|gocdk_pub_sub|google_pub_sub|kafka))"$
weed/s3api/auth_credentials.go 2 ^[[:space:]]*_ "github.com/seaweedfs/seaweedfs/weed/kms/(gcp|openbao)"$
weed/command/filer.go 1 ^[[:space:]]*_ "github.com/seaweedfs/seaweedfs/weed/credential/postgres"$
weed/command/iam.go 1 ^[[:space:]]*_ "github.com/seaweedfs/seaweedfs/weed/credential/postgres"$
weed/plugin/worker/handlers/handlers.go 1 ^[[:space:]]*_ "github.com/seaweedfs/seaweedfs/weed/worker/tasks/iceberg"
weed/server/volume_grpc_remote.go 2 ^[[:space:]]*(azureremote|gcsremote) "github.com/seaweedfs/seaweedfs/weed/remote_storage/(azure|gcs)"$
weed/server/volume_grpc_remote.go 1 ^[[:space:]]*"slices"$
weed/server/volume_grpc_remote.go 5 /remoteConf.Type == "azure" && remoteConf.AzureEndpoint != ""/,/^[[:space:]]}$/
weed/server/volume_grpc_remote.go 9 /remoteConf.Type == "gcs" && remoteConf.GcsGoogleApplicationCredentials != ""/,/^[[:space:]]}$/
weed/server/volume_grpc_remote.go 17 /^func checkGcsCredentials\(/,/^}$/
weed/server/volume_grpc_remote.go 6 /checkGcsCredentials\(remoteConf/,/^[[:space:]]+}$/
weed/command/command.go 8 ^[[:space:]]*cmd(Admin|FilerBackup|FilerReplicate|Fuse|Mini|Mount|MqKafkaGateway|Worker),$
weed/command/filer_replication.go 148 *
weed/command/filer_backup.go 655 *
weed/command/s3.go 1 ^[[:space:]]*"github.com/seaweedfs/seaweedfs/weed/s3api/iceberg"$
weed/command/s3.go 5 /^[[:space:]]if [*]s3opt[.]portIceberg > 0/,/^[[:space:]]}$/
weed/command/s3.go 44 /^func [(]s3opt [*]S3Options[)] startIcebergServer[(]/,/^}$/
weed/command/s3.go 3 /^type icebergCredentialVendor struct/,/^}$/
weed/command/s3.go 12 /^func [(]v icebergCredentialVendor[)] VendTableCredentials[(]/,/^}$/
weed/command/admin.go 920 *
weed/command/mini.go 2563 *
weed/command/worker.go 81 *
weed/command/worker_runtime.go 286 *
weed/command/maintenance_capabilities.go 48 *
weed/command/mq_kafka_gateway.go 143 *
weed/command/mount.go 201 *
weed/command/mount_common.go 340 *
weed/command/mount_linux.go 158 *
weed/command/mount_std.go 271 *
weed/command/fuse.go 1 ^[[:space:]]*cmdFuse.Run = runFuse
weed/command/fuse_std.go 351 *'

# The Scaleway plugin (built here from ../shared/vendor's tarballs, see
# below): the project creates only scaleway_baremetal_server
# (providers/scaleway). The provider registers every Scaleway service in
# two files, provider/sdkv2.go (terraform-plugin-sdk: resources and data
# sources) and provider/framework.go (terraform-plugin-framework:
# resources, ephemeral resources, data sources, actions, list resources);
# the registrations and imports of every service but baremetal go. What is
# left is the real plugin for what the tests run: the same provider block
# (its schema and configure code are untouched), the same code for
# scaleway_baremetal_server and the other baremetal resources, data
# sources and action, the same provider functions. A user of this binary
# loses every other resource and data source (scaleway_instance_server,
# scaleway_object_bucket, ...: tofu says the provider does not support
# it): it is a test tool, never shipped. With them go the AWS SDK (object
# storage, SNS/SQS) and most of scaleway-sdk-go's API packages: 634 -> 338
# packages, 4103 -> 2361 Go files; the binary 54 -> 27 MB. Compile CPU
# (-N -l, 2 cores, user + sys), whole -> slim: with an empty build cache
# 203 -> 112 s; after local and hcloud, as a fresh machine builds it
# (they share part of its dependencies in the build cache) 138 -> 66 s.
SCALEWAY_SLIM='provider/sdkv2.go 42 ^[[:space:]]*"github.com/scaleway/terraform-provider-scaleway/v2/internal/services/(account|annotations|applesilicon|audittrail|autoscaling|az|billing|block|cockpit|container|datalab|datawarehouse|domain|edgeservices|file|flexibleip|function|iam|inference|instance|interlink|iot|ipam|jobs|k8s|kafka|keymanager|lb|marketplace|mnq|mongodb|object|opensearch|rdb|redis|registry|s2svpn|scwconfig|sdb|secret|tem|vpc|vpcgw|webhosting)"$
provider/sdkv2.go 268 ^[[:space:]]*"scaleway_[a-z0-9_]+":[[:space:]]+(account|annotations|applesilicon|audittrail|autoscaling|az|billing|block|cockpit|container|datalab|datawarehouse|domain|edgeservices|file|flexibleip|function|iam|inference|instance|interlink|iot|ipam|jobs|k8s|kafka|keymanager|lb|marketplace|mnq|mongodb|object|opensearch|rdb|redis|registry|s2svpn|scwconfig|sdb|secret|tem|vpc|vpcgw|webhosting)[.][A-Za-z0-9]+[(][)],$
provider/framework.go 24 ^[[:space:]]*"github.com/scaleway/terraform-provider-scaleway/v2/internal/services/(account|annotations|applesilicon|audittrail|autoscaling|az|billing|block|cockpit|container|datalab|datawarehouse|domain|edgeservices|file|flexibleip|function|iam|inference|instance|interlink|iot|ipam|jobs|k8s|kafka|keymanager|lb|marketplace|mnq|mongodb|object|opensearch|rdb|redis|registry|s2svpn|scwconfig|sdb|secret|tem|vpc|vpcgw|webhosting)"$
provider/framework.go 87 ^[[:space:]]*(account|annotations|applesilicon|audittrail|autoscaling|az|billing|block|cockpit|container|datalab|datawarehouse|domain|edgeservices|file|flexibleip|function|iam|inference|instance|interlink|iot|ipam|jobs|k8s|kafka|keymanager|lb|marketplace|mnq|mongodb|object|opensearch|rdb|redis|registry|s2svpn|scwconfig|sdb|secret|tem|vpc|vpcgw|webhosting)[.]New[A-Za-z0-9]+,$'

# The tools live in a machine-wide cache outside the clone, the way Go's
# build cache does (PLASMA_TOOLS_CACHE names another), so a fresh clone on a
# machine that built them once reuses them; .tools in the checkout is a
# symbolic link to it, which is where the tests look. Each tool is checked
# by its version before it is reused. One run at a time builds into the
# cache (flock), so two clones' CI runs do not build the same tool twice.
tools=${PLASMA_TOOLS_CACHE:-"${XDG_CACHE_HOME:-$HOME/.cache}/plasma-node/tools"}
mkdir -p "$tools"
if [ -z "${PLASMA_TOOLS_LOCKED:-}" ] && command -v flock >/dev/null; then
  exec env PLASMA_TOOLS_LOCKED=1 flock "$tools/.lock" "$0" "$@"
fi
if [ -L "$root/.tools" ] || [ ! -e "$root/.tools" ]; then
  ln -sfn "$tools" "$root/.tools"
elif [ "$(cd "$root/.tools" && pwd -P)" != "$(cd "$tools" && pwd -P)" ]; then
  echo "tools: $root/.tools is a folder, not a link to the cache $tools; remove it" >&2
  exit 1
fi
mirror="$tools/mirror"
platform="$(go env GOOS)_$(go env GOARCH)"
mkdir -p "$tools/bin" "$mirror"

# moddir MODULE@VERSION prints the module cache folder of MODULE@VERSION,
# downloading it through the module proxy first.
moddir() {
  go mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'
}

# build MODULE@VERSION PACKAGE OUTPUT [LDFLAGS] [GCFLAGS] [SLIM [DEP@VERSION
# DEPSLIM]...]: builds PACKAGE of the module to OUTPUT, through a temporary
# file so a killed build leaves nothing; with SLIM (see slimcopy), from the
# module's slimmed copy instead of the module cache's, which builds with
# each DEP slimmed by its DEPSLIM too.
#
# GCFLAGS "-N -l" (no optimisation, no inlining) is for a tool the tests
# barely exercise: it compiles in about 70 % of the time (OpenTofu: 270 s
# against 378 s on 2 cores) and runs slower, which only matters for a tool
# the tests run often. tofu runs in most provisioning tests and is built
# optimised; SeaweedFS serves a few S3 requests per test and local and
# hcloud answer a handful of RPCs per tofu run.
build() {
  local mod=$1 pkg=$2 out=$3 ldflags=${4:-"-s -w"} gcflags=${5:-} slim=${6:-} dir
  shift $(($# < 6 ? $# : 6))
  if [ -n "$slim" ]; then
    dir=$(slimcopy "$mod" "$slim" "$@")
  else
    dir=$(moddir "$mod")
  fi
  if [ -z "$dir" ]; then
    echo "tools: cannot download $mod" >&2
    exit 1
  fi
  echo "tools: building $mod ($pkg${slim:+, slimmed})" >&2
  local start=$SECONDS
  mkdir -p "$(dirname "$out")"
  (cd "$dir" && CGO_ENABLED=0 GOFLAGS=-buildvcs=false GOWORK=off \
    go build -trimpath -ldflags "$ldflags" ${gcflags:+-gcflags="all=$gcflags"} -o "$out.tmp" "$pkg")
  mv -f "$out.tmp" "$out"
  echo "tools: built $out in $((SECONDS - start))s" >&2
}

# slimcopy SOURCE SPEC [DEP@VERSION DEPSPEC]... prints the folder of a copy of SOURCE with lines of
# its source removed (slimedit), so that a build compiles less: the state
# backends, filer stores and the like that a tool links for its users' sake
# and the tests never reach. SOURCE is MODULE@VERSION (the module cache's
# copy, downloaded first) or a .tar.gz holding one folder (a plugin's
# upstream source, ../shared/vendor). The copy is made once and kept in the
# tools cache under the module's version or the tarball's name and the
# hash of SPEC ($tools/src/NAME@VERSION-slim-HASH), linked to the module
# cache's files where one file system holds both (a changed file is
# written anew, never through the link). Each DEP is a module the build
# links (go-getter in OpenTofu's): it is slimmed the same way by its
# DEPSPEC into a copy of its own, and SOURCE's copy builds with it (a
# directory replace in the copy's go.mod, `go mod edit -replace`); its
# VERSION must be the one SOURCE's go.mod requires, or the copy is
# refused. The hash then covers every DEP and DEPSPEC too.
slimcopy() {
  local from=$1 spec=$2 dir hash src name dep depdir
  local deps=("${@:3}")
  hash=$(printf '%s\n' "$spec" "${deps[@]}" | sha256sum | cut -c1-12)
  case $from in
    *.tar.gz) name=$(basename "$from" .tar.gz) ;;
    *) name=${from##*/} ;;
  esac
  src="$tools/src/$name-slim-$hash"
  if [ -f "$src/.slim" ]; then
    echo "$src"
    return 0
  fi
  mkdir -p "$tools/src"
  rm -rf "$src.tmp"
  case $from in
    *.tar.gz)
      rm -rf "$src.tmp.tar"
      mkdir "$src.tmp.tar"
      tar -xzf "$from" -C "$src.tmp.tar" || { rm -rf "$src.tmp.tar"; return 0; }
      set -- "$src.tmp.tar"/*
      if [ $# -ne 1 ] || [ ! -d "$1" ]; then
        echo "tools: $from holds $# entries at its top, want one folder" >&2
        rm -rf "$src.tmp.tar"
        return 0
      fi
      mv "$1" "$src.tmp"
      rm -rf "$src.tmp.tar" ;;
    *)
      dir=$(moddir "$from")
      [ -n "$dir" ] || return 0
      cp -al "$dir" "$src.tmp" 2>/dev/null || { rm -rf "$src.tmp"; cp -R "$dir" "$src.tmp"; }
      find "$src.tmp" -type d -exec chmod u+w {} + ;;
  esac
  if ! slimedit "$from" "$src.tmp" "$spec"; then
    rm -rf "$src.tmp"
    exit 1
  fi
  set -- "${deps[@]}"
  while [ $# -ge 2 ]; do
    dep=$1
    if ! grep -qE "^[[:space:]]*(require[[:space:]]+)?${dep%@*} ${dep#*@}([[:space:]]|$)" "$src.tmp/go.mod"; then
      echo "tools: $from: its go.mod does not require ${dep%@*} ${dep#*@}: update the slimming in .ci/tools.sh" >&2
      rm -rf "$src.tmp"
      exit 1
    fi
    depdir=$(slimcopy "$dep" "$2")
    # go.mod may be a link into the module cache: edit a copy of it.
    if [ -z "$depdir" ] || ! cp "$src.tmp/go.mod" "$src.tmp/go.mod.new" || ! chmod u+w "$src.tmp/go.mod.new" ||
      ! mv -f "$src.tmp/go.mod.new" "$src.tmp/go.mod" ||
      ! (cd "$src.tmp" && GOWORK=off go mod edit -replace="$dep=$depdir"); then
      echo "tools: $from: cannot build it with the slimmed $dep" >&2
      rm -rf "$src.tmp"
      exit 1
    fi
    shift 2
  done
  printf '%s\n' "$spec" "${deps[@]}" >"$src.tmp/.slim"
  mv "$src.tmp" "$src"
  echo "$src"
}

# slimedit SOURCE DIR SPEC removes lines from the files of DIR, a copy of
# SOURCE. SPEC has one edit a line, "FILE COUNT WHAT", and exactly COUNT
# lines of FILE go:
#   REGEX          the lines matching the extended REGEX;
#   /START/,/END/  each run of lines from one matching START to the next
#                  one matching END (a block: a function, an if);
#   *              the whole file (COUNT is its line count).
# A count that differs means SOURCE changed: slimedit fails, loudly,
# naming the file, the edit and both counts, rather than leave a copy
# built from a guess.
slimedit() {
  local from=$1 dir=$2 spec=$3 file count re n f start end
  while read -r file count re; do
    [ -n "$file" ] || continue
    f="$dir/$file"
    case $re in
      '*') n=$(wc -l <"$f" 2>/dev/null || echo 0) ;;
      /*/,/*/)
        start=${re#/}; start=${start%%/,/*}; end=${re#*/,/}; end=${end%/}
        n=$(START=$start END=$end OUT=$f.new awk '
          in_run { n++; if ($0 ~ ENVIRON["END"]) in_run = 0; next }
          $0 ~ ENVIRON["START"] { n++; in_run = 1; next }
          { print > ENVIRON["OUT"] }
          END { print n + 0 }' "$f") ;;
      *)
        n=$(grep -cE -- "$re" "$f" || true)
        grep -vE -- "$re" "$f" >"$f.new" || true ;;
    esac
    if [ "$n" != "$count" ]; then
      echo "tools: $from: $n lines of $file match $re, want $count: the source changed; update the slimming in .ci/tools.sh" >&2
      return 1
    fi
    rm -f "$f"
    if [ "$re" != '*' ]; then
      touch "$f.new"
      mv "$f.new" "$f"
    fi
  done <<<"$spec"
}

# SeaweedFS's weed, the longest build (about 7 minutes on 2 cores, once),
# runs beside the others, which it waits for below: one Go build alone
# leaves a core idle while it downloads modules, links, or walks a narrow
# part of its package graph, and two at once fill those gaps.
weed="$tools/bin/weed"
weed_pid=
if [ -x "$weed" ] && [ "$(cat "$weed.version" 2>/dev/null)" = "$SEAWEEDFS_VERSION" ]; then
  echo "tools: weed $SEAWEEDFS_VERSION present" >&2
else
  (
    build "github.com/seaweedfs/seaweedfs@$SEAWEEDFS_VERSION" ./weed "$weed" "-s -w" "-N -l" "$WEED_SLIM"
    echo "$SEAWEEDFS_VERSION" >"$weed.version"
  ) &
  weed_pid=$!
  trap 'kill "$weed_pid" 2>/dev/null || true' EXIT
fi

# OpenTofu.
tofu="$tools/bin/tofu"
# (sed reads all of tofu's output: with pipefail, head's early exit could
# fail tofu with SIGPIPE and rebuild a tool that is there.)
if [ -x "$tofu" ] && [ "$(TF_CLI_CONFIG_FILE=/dev/null "$tofu" version 2>/dev/null | sed -n 1p)" = "OpenTofu v$TOFU_VERSION" ]; then
  echo "tools: tofu v$TOFU_VERSION present" >&2
else
  build "github.com/opentofu/opentofu@v$TOFU_VERSION" ./cmd/tofu "$tofu" \
    "-s -w -X github.com/opentofu/opentofu/version.dev=no" "" "$TOFU_SLIM" \
    "github.com/hashicorp/go-getter@$GETTER_VERSION" "$GETTER_SLIM"
fi


# plugin NAMESPACE TYPE VERSION MODULE: builds a provider plugin once and
# links it under both registry hosts of the mirror.
plugin() {
  local ns=$1 type=$2 version=$3 mod=$4
  local name="terraform-provider-${type}_v$version"
  local primary="$mirror/registry.opentofu.org/$ns/$type/$version/$platform/$name"
  if [ -x "$primary" ]; then
    echo "tools: $ns/$type v$version present" >&2
  else
    build "$mod@v$version" . "$primary" "-s -w" "-N -l"
  fi
  local other="$mirror/registry.terraform.io/$ns/$type/$version/$platform/$name"
  if [ ! -e "$other" ]; then
    mkdir -p "$(dirname "$other")"
    ln -f "$primary" "$other" 2>/dev/null || cp -f "$primary" "$other"
  fi
}

plugin hashicorp local "$LOCAL_VERSION" github.com/hashicorp/terraform-provider-local
plugin hetznercloud hcloud "$HCLOUD_VERSION" github.com/hetznercloud/terraform-provider-hcloud

# The OVH and Scaleway plugins are not served by the module proxy: they are
# built from the upstream sources CI provides beside the checkout
# (../shared/vendor, or $PLASMA_VENDOR). OVH's by that folder's
# build-plugins.sh, which skips a plugin already at its versioned path in
# the mirror; Scaleway's below. Each takes about 2 minutes on 2 cores, once.
#
# They are built without optimisation (PLUGIN_GCFLAGS), like the plugins
# above: 36 % less compile CPU for OVH's (264 -> 168 s), and the tests
# spend no more CPU in them (e2e TestOVHJoinFlow: 25.6 s either way).
# build-plugins.sh sets GOFLAGS itself, so the flags reach its go build
# through a go first on its PATH that adds them ($plugins/bin/go). It
# builds into a mirror of its own, named by the flags ($plugins/mirror),
# and each plugin there is linked into the mirror above unless that holds
# one of the same version already (built before, optimised: it is kept).
vendor=${PLASMA_VENDOR:-"$root/../shared/vendor"}
if [ -d "$root/.git" ] || [ -f "$root/.git" ]; then
  # A git worktree's root may sit elsewhere than the main checkout: look
  # beside the main checkout too.
  common=$(git -C "$root" rev-parse --path-format=absolute --git-common-dir 2>/dev/null || true)
  if [ ! -x "$vendor/build-plugins.sh" ] && [ -n "$common" ]; then
    vendor="$(dirname "$common")/../shared/vendor"
  fi
fi
if [ ! -x "$vendor/build-plugins.sh" ]; then
  echo "tools: no build-plugins.sh in $vendor (set PLASMA_VENDOR to the folder of the OVH and Scaleway plugin sources)" >&2
  exit 1
fi
PLUGIN_GCFLAGS="-N -l"
plugins="$tools/plugins/gcflags$(printf '%s' "$PLUGIN_GCFLAGS" | tr -cs 'A-Za-z0-9' '-')"
mkdir -p "$plugins/bin" "$plugins/mirror"
gobin=$(command -v go)
shim=$(cat <<EOF
#!/bin/sh
# Generated by .ci/tools.sh: go, adding -gcflags=all=$PLUGIN_GCFLAGS to go build.
if [ "\$1" = build ]; then
  shift
  exec "$gobin" build -gcflags="all=$PLUGIN_GCFLAGS" "\$@"
fi
exec "$gobin" "\$@"
EOF
)
if [ ! -x "$plugins/bin/go" ] || [ "$(cat "$plugins/bin/go")" != "$shim" ]; then
  printf '%s\n' "$shim" >"$plugins/bin/go.tmp"
  chmod +x "$plugins/bin/go.tmp"
  mv -f "$plugins/bin/go.tmp" "$plugins/bin/go"
fi
start=$SECONDS
PATH="$plugins/bin:$PATH" "$vendor/build-plugins.sh" "$plugins/mirror" ovh
(cd "$plugins/mirror" && find . -type f -name 'terraform-provider-*') | while read -r f; do
  if [ ! -e "$mirror/$f" ]; then
    mkdir -p "$(dirname "$mirror/$f")"
    ln -f "$plugins/mirror/$f" "$mirror/$f" 2>/dev/null || cp -f "$plugins/mirror/$f" "$mirror/$f"
  fi
done
echo "tools: ovh plugin ready in $((SECONDS - start))s" >&2

# The Scaleway plugin is built here, from the tarballs build-plugins.sh
# builds it from (the same source, version and output paths, and the same
# replace of scaleway-sdk-go by the tarball's copy), slimmed to the
# baremetal service (SCALEWAY_SLIM) and unoptimised (PLUGIN_GCFLAGS).
# A plugin already at its versioned path in the mirror is kept, whole or
# slim, optimised or not (the tests see no difference).
SCALEWAY_VERSION=2.81.0
scw_name="terraform-provider-scaleway_v$SCALEWAY_VERSION"
scw_tofu="$mirror/registry.opentofu.org/scaleway/scaleway/$SCALEWAY_VERSION/$platform/$scw_name"
scw_tf="$mirror/registry.terraform.io/scaleway/scaleway/$SCALEWAY_VERSION/$platform/$scw_name"
if [ -x "$scw_tofu" ] && [ -x "$scw_tf" ]; then
  echo "tools: scaleway/scaleway v$SCALEWAY_VERSION present" >&2
else
  start=$SECONDS
  scw_src=$(slimcopy "$vendor/terraform-provider-scaleway-b2d45ed4b.tar.gz" "$SCALEWAY_SLIM")
  scw_sdk=$(slimcopy "$vendor/scaleway-sdk-go-2c5cd81b.tar.gz" "")
  if [ -z "$scw_src" ] || [ -z "$scw_sdk" ]; then
    echo "tools: cannot unpack the Scaleway plugin's sources from $vendor" >&2
    exit 1
  fi
  echo "tools: building terraform-provider-scaleway $SCALEWAY_VERSION (b2d45ed4b, slimmed)" >&2
  mkdir -p "$(dirname "$scw_tofu")" "$(dirname "$scw_tf")"
  (cd "$scw_src" && GOWORK=off go mod edit -replace "github.com/scaleway/scaleway-sdk-go=$scw_sdk" &&
    CGO_ENABLED=0 GOFLAGS="-mod=mod -buildvcs=false" GOWORK=off \
      go build -trimpath -ldflags "-s -w" -gcflags="all=$PLUGIN_GCFLAGS" -o "$scw_tofu.tmp" .)
  mv -f "$scw_tofu.tmp" "$scw_tofu"
  ln -f "$scw_tofu" "$scw_tf.tmp" 2>/dev/null || cp -f "$scw_tofu" "$scw_tf.tmp"
  mv -f "$scw_tf.tmp" "$scw_tf"
  echo "tools: built $scw_tofu in $((SECONDS - start))s" >&2
fi
if [ -n "$weed_pid" ]; then
  weed_rc=0
  wait "$weed_pid" || weed_rc=$?
  trap - EXIT
  if [ "$weed_rc" -ne 0 ]; then
    echo "tools: building weed failed (exit $weed_rc)" >&2
    exit 1
  fi
fi

# CLI configuration: install providers only from the mirror, never the network.
rc="$tools/tofurc"
want=$(cat <<EOF
# Generated by .ci/tools.sh: install providers from the local mirror only.
provider_installation {
  filesystem_mirror {
    path    = "$mirror"
    include = ["registry.opentofu.org/*/*", "registry.terraform.io/*/*"]
  }
}
EOF
)
if [ ! -f "$rc" ] || [ "$(cat "$rc")" != "$want" ]; then
  printf '%s\n' "$want" >"$rc.tmp"
  mv -f "$rc.tmp" "$rc"
fi

if [ -n "$only_go" ]; then
  echo "tools: Go tools ready" >&2
  exit 0
fi

# The kernel for the netboot test's installer emulator: the package
# linux-image-amd64 depends on, downloaded with apt-get (the mirror CI
# installs from) and unpacked, never installed. Only vmlinuz and the
# virtio-net, e1000 and efivarfs modules are kept (about 12 MB), with the
# virtio-blk and NVMe ones (with NVMe's t10-pi and its CRCs) and depmod's
# modules.alias and modules.dep for them, which the e2e fake ISO's squashfs carries for the discovery
# initrd (e2e/discovery_test.go), and the IPMI ones (ipmi_msghandler,
# ipmi_si, ipmi_devintf: the discovery agent reads the BMC's LAN address
# through /dev/ipmi0); the kernel and its modules are signed
# by Debian, so the Secure Boot netboot test runs them with Secure Boot
# enforcing. The folder's name is its cache key: a change to the modules
# kept names a new folder (kernel-v2: the IPMI modules), so a shared tools
# cache keeps the old one for trees that still read it.
kdir="$tools/kernel-v2"
if [ -f "$kdir/vmlinuz" ] && [ -f "$kdir/release" ] && [ -f "$kdir/modules/efivarfs.ko" ] && [ -f "$kdir/modules/modules.dep" ] && [ -f "$kdir/modules/t10-pi.ko" ] && [ -f "$kdir/modules/ipmi_devintf.ko" ]; then
  echo "tools: kernel $(cat "$kdir/release") present" >&2
else
  kpkg=$(apt-cache depends linux-image-amd64 | sed -n 's/^ *Depends: \(linux-image-[0-9].*\)$/\1/p' | head -n1)
  if [ -z "$kpkg" ]; then
    apt-get update -qq
    kpkg=$(apt-cache depends linux-image-amd64 | sed -n 's/^ *Depends: \(linux-image-[0-9].*\)$/\1/p' | head -n1)
  fi
  if [ -z "$kpkg" ]; then
    echo "tools: apt-cache knows no linux-image-amd64 after apt-get update" >&2
    exit 1
  fi
  work=$(mktemp -d)
  (cd "$work" && apt-get download -qq "$kpkg" >&2)
  mkdir -p "$work/x"
  dpkg-deb --fsys-tarfile "$work"/"$kpkg"_*.deb | tar -x -C "$work/x" --wildcards './boot/vmlinuz-*' \
    './lib/modules/*/kernel/drivers/net/virtio_net.ko*' './lib/modules/*/kernel/drivers/net/net_failover.ko*' \
    './lib/modules/*/kernel/net/core/failover.ko*' './lib/modules/*/kernel/drivers/virtio/*' \
    './lib/modules/*/kernel/drivers/net/ethernet/intel/e1000/*' './lib/modules/*/kernel/fs/efivarfs/*' \
    './lib/modules/*/kernel/drivers/block/virtio_blk.ko*' './lib/modules/*/kernel/drivers/nvme/host/*' \
    './lib/modules/*/kernel/block/t10-pi.ko*' './lib/modules/*/kernel/lib/crc-t10dif.ko*' './lib/modules/*/kernel/lib/crc64*.ko*' \
    './lib/modules/*/kernel/crypto/crct10dif_*.ko*' './lib/modules/*/kernel/crypto/crc64_rocksoft_generic.ko*' \
    './lib/modules/*/kernel/drivers/char/ipmi/*'
  rm -rf "$kdir.tmp"
  mkdir -p "$kdir.tmp/modules"
  cp "$work"/x/boot/vmlinuz-* "$kdir.tmp/vmlinuz"
  find "$work/x/lib/modules" -name '*.ko*' -exec cp {} "$kdir.tmp/modules/" \;
  # The package has no modules.alias or modules.dep (its postinst runs
  # depmod): depmod (Debian package kmod) makes them for the modules kept.
  krel=$(basename "$(ls -d "$work"/x/lib/modules/*)")
  depmod -b "$work/x" "$krel"
  cp "$work/x/lib/modules/$krel/modules.alias" "$work/x/lib/modules/$krel/modules.dep" "$kdir.tmp/modules/"
  echo "$krel" >"$kdir.tmp/release"
  rm -rf "$work" "$kdir"
  mv "$kdir.tmp" "$kdir"
  echo "tools: kernel $(cat "$kdir/release") unpacked into $kdir" >&2
fi

# A signed network grub with the http module, for the Secure Boot netboot
# test's install by UEFI HTTP boot (e2e/secureboot_test.go). Debian 12's
# grub-efi-amd64-signed (2.06) carries no http module; bookworm-backports'
# (2.12-1~bpo12+1) does but is SBAT generation grub,4, which Debian 12's
# shim 16.1 revokes (it wants grub,5: "Verification failed: (0x1A)
# Security Violation"); Debian 13's (trixie, 2.12-9+deb13u4, grub,7) has
# http and boots under that shim, signed by the same Debian Secure Boot CA.
# Downloaded with a throwaway apt configuration naming $GRUB_HTTP_SUITE
# (the system's sources and lists are left alone), unpacked, never
# installed; only grubnetx64.efi.signed is kept, with its package version.
GRUB_HTTP_SUITE=trixie
gdir="$tools/grub-http"
if [ -f "$gdir/grubnetx64.efi.signed" ] && [ -f "$gdir/version" ]; then
  echo "tools: grub-efi-amd64-signed $(cat "$gdir/version") present" >&2
else
  work=$(mktemp -d)
  mkdir -p "$work/lists/partial" "$work/cache/archives/partial"
  # The archive the system already installs from (its first URI that is not
  # the security archive), unless PLASMA_DEBIAN_MIRROR names another.
  uri=${PLASMA_DEBIAN_MIRROR:-$(apt-get indextargets --format '$(REPO_URI)' 2>/dev/null | grep -v -- -security | head -n1)}
  if [ -z "$uri" ]; then
    echo "tools: no Debian archive in the system's apt sources; set PLASMA_DEBIAN_MIRROR" >&2
    exit 1
  fi
  echo "deb $uri $GRUB_HTTP_SUITE main" >"$work/sources.list"
  apt=(-o Dir::Etc::SourceList="$work/sources.list" -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists="$work/lists"
    -o Dir::Cache="$work/cache" -o APT::Sandbox::User=root)
  apt-get "${apt[@]}" update -qq >&2
  gver=$(apt-cache "${apt[@]}" madison grub-efi-amd64-signed | awk -F' *[|] *' '{print $2; exit}')
  if [ -z "$gver" ]; then
    echo "tools: $GRUB_HTTP_SUITE has no grub-efi-amd64-signed" >&2
    exit 1
  fi
  (cd "$work" && apt-get "${apt[@]}" download -qq "grub-efi-amd64-signed=$gver" >&2)
  mkdir -p "$work/x"
  dpkg-deb -x "$work"/grub-efi-amd64-signed_*.deb "$work/x"
  rm -rf "$gdir.tmp"
  mkdir -p "$gdir.tmp"
  cp "$work/x/usr/lib/grub/x86_64-efi-signed/grubnetx64.efi.signed" "$gdir.tmp/"
  echo "$gver" >"$gdir.tmp/version"
  rm -rf "$work" "$gdir"
  mv "$gdir.tmp" "$gdir"
  echo "tools: grub-efi-amd64-signed $gver unpacked into $gdir" >&2
fi

echo "tools: ready; export PLASMA_TOFU=$tofu TF_CLI_CONFIG_FILE=$rc" >&2
