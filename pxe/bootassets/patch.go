package bootassets

import (
	"context"
	"errors"
	"os"
	"strings"
)

// initPatchMarker starts the block [patchInit] inserts, so that an init
// patched once is not patched again.
const initPatchMarker = "# --- plasma-node boot-disk prompt: begin"

// initPatchBlock is inserted after [InitPatchAnchor] in the installer's
// /init (busybox sh). As TAPPaaS's prepare does, it gives the installer's
// DHCP client 60 s instead of 10 and, when the kernel command line holds
// plasma.askdisk=1, lists the disks on the console, reads the choice, and
// bind-mounts over the ISO's /auto-installer-mode.toml a copy whose answer
// URL carries bootdisk=<disk>. The plasma_root, plasma_in, plasma_out and
// plasma_mount variables are unset at boot; tests set them to run the block
// in a scratch folder.
const initPatchBlock = initPatchMarker + ` (node-provisioner prepare) ---
plasma_dhc="${plasma_root:-}/mnt/.installer-mp/etc/dhcp/dhclient.conf"
if [ -f "$plasma_dhc" ]; then
    sed -i 's/timeout 10;/timeout 60;/' "$plasma_dhc"
fi
plasma_ask=0
for plasma_par in $(cat "${plasma_root:-}/proc/cmdline"); do
    if [ "$plasma_par" = "plasma.askdisk=1" ]; then
        plasma_ask=1
    fi
done
plasma_mode="${plasma_root:-}/mnt/auto-installer-mode.toml"
if [ "$plasma_ask" = 1 ] && [ ! -f "$plasma_mode" ]; then
    echo "[WARN] plasma-node: the ISO has no auto-installer-mode.toml, not asking for a boot disk"
elif [ "$plasma_ask" = 1 ]; then
    plasma_in="${plasma_in:-/dev/${console:-console}}"
    plasma_out="${plasma_out:-/dev/${console:-console}}"
    plasma_disk=""
    exec 9<"$plasma_in"
    while [ -z "$plasma_disk" ]; do
        echo "" >>"$plasma_out"
        echo "plasma-node: choose the disk to install Proxmox VE on (it is wiped):" >>"$plasma_out"
        plasma_disks=""
        plasma_n=0
        for plasma_d in "${plasma_root:-}"/sys/block/*; do
            plasma_name="${plasma_d##*/}"
            case "$plasma_name" in
                loop*|ram*|sr*|dm-*|zram*|fd*|md*|nbd*) continue ;;
            esac
            [ -f "$plasma_d/size" ] || continue
            plasma_n=$((plasma_n + 1))
            plasma_gb=$(( $(cat "$plasma_d/size") * 512 / 1000000000 ))
            plasma_model="$(cat "$plasma_d/device/model" 2>/dev/null)"
            echo "  $plasma_n) $plasma_name  ${plasma_gb} GB  $plasma_model" >>"$plasma_out"
            plasma_disks="$plasma_disks $plasma_name"
        done
        if [ "$plasma_n" = 0 ]; then
            echo "no disks found; press Enter to look again" >>"$plasma_out"
        else
            printf "disk number or name: " >>"$plasma_out"
        fi
        plasma_choice=""
        read -r plasma_choice <&9 || sleep 1
        plasma_i=0
        for plasma_name in $plasma_disks; do
            plasma_i=$((plasma_i + 1))
            if [ "$plasma_choice" = "$plasma_i" ] || [ "$plasma_choice" = "$plasma_name" ]; then
                plasma_disk="$plasma_name"
            fi
        done
        if [ -z "$plasma_disk" ] && [ -n "$plasma_choice" ]; then
            echo "not a disk listed: $plasma_choice" >>"$plasma_out"
        fi
    done
    exec 9<&-
    echo "plasma-node: installing on $plasma_disk" >>"$plasma_out"
    plasma_new="${plasma_root:-}/mnt/.workdir/auto-installer-mode.toml"
    : >"$plasma_new"
    while IFS= read -r plasma_line || [ -n "$plasma_line" ]; do
        case "$plasma_line" in
            'url = "'*'"')
                plasma_url="${plasma_line#url = \"}"
                plasma_url="${plasma_url%\"}"
                case "$plasma_url" in
                    *\?*) plasma_url="${plasma_url}&bootdisk=${plasma_disk}" ;;
                    *) plasma_url="${plasma_url}?bootdisk=${plasma_disk}" ;;
                esac
                printf 'url = "%s"\n' "$plasma_url" >>"$plasma_new"
                ;;
            *) printf '%s\n' "$plasma_line" >>"$plasma_new" ;;
        esac
    done <"$plasma_mode"
    if ! ${plasma_mount:-mount} --bind "$plasma_new" "${plasma_root:-}/mnt/.installer-mp/cdrom/auto-installer-mode.toml"; then
        echo "[WARN] plasma-node: could not put the chosen boot disk into the answer URL"
    fi
fi
# --- plasma-node boot-disk prompt: end ---
`

// errNoAnchor is returned by patchInit when the anchor line is missing.
var errNoAnchor = errors.New("anchor line not found")

// patchInit inserts [initPatchBlock] after the first line of init that
// reads [InitPatchAnchor] (surrounding blanks ignored). An init that
// already carries the block is returned unchanged.
func patchInit(init []byte) ([]byte, error) {
	s := string(init)
	if strings.Contains(s, initPatchMarker) {
		return init, nil
	}
	off := 0
	for off < len(s) {
		end := strings.IndexByte(s[off:], '\n')
		next := len(s)
		if end >= 0 {
			next = off + end + 1
		}
		if strings.TrimSpace(s[off:next]) == InitPatchAnchor {
			head := s[:next]
			if !strings.HasSuffix(head, "\n") {
				head += "\n"
			}
			return []byte(head + initPatchBlock + s[next:]), nil
		}
		off = next
	}
	return nil, errNoAnchor
}

// patchedInit returns the patched /init of the initrd at path, or nil after
// a warning when it cannot be read or patched.
func (p *preparer) patchedInit(ctx context.Context, path string) []byte {
	f, err := os.Open(path)
	if err != nil {
		p.warn("boot-disk prompt left out: cannot open the initrd", "err", err)
		return nil
	}
	defer f.Close()
	init, err := findInitrdFile(ctx, initrdScanner{zstd: p.zstd}, f, "init")
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		p.warn("boot-disk prompt left out: cannot read /init from the initrd", "err", err)
		return nil
	}
	out, err := patchInit(init)
	if err != nil {
		p.warn("boot-disk prompt left out: the installer's /init has no line "+InitPatchAnchor, "err", err)
		return nil
	}
	p.log.Info("boot-disk prompt patched into /init", "kernel_arg", AskDiskKernelArg)
	return out
}
