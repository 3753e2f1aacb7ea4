package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/plasmactl/plasma-node/pxe/registry"
)

func (a *app) registerCmd() *cobra.Command {
	var (
		macs, pools, keys   []string
		serial, uuid, disk  string
		fromDiscovered      string
		bootMethod, media   string
		replace, secureBoot bool
		bf                  bmcFlags
		sf                  staticFlags
		nf                  nicFlags
	)
	c := &cobra.Command{
		Use:   "register NAME [--mac M]... [--serial S] [--uuid U] [--from-discovered MAC|SERIAL] [--boot-disk SERIAL|NAME|any] [--pool SPEC]... [--ssh-key FILE]... [--bmc URL --bmc-user U --bmc-password-file F] [--address CIDR --gateway IP --dns IP [--management-mac M]] [--pin-nic-names] [--nic-name MAC=NAME]... [--secure-boot] [--boot-method network|virtual-media [--media-answer iso|http|partition]] [--replace]",
		Short: "Register a node: the allowlist entry its installer's request must match",
		Example: `  node-provisioner register pve3 --mac aa:bb:cc:dd:ee:ff --boot-disk 25414A800205 \
      --pool 'tanka1=single:50026B73842AD86F'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if fromDiscovered != "" {
				var err error
				flagPins := len(macs) > 0 || serial != "" || uuid != ""
				if macs, serial, uuid, err = a.discoveredPins(cmd.Context(), fromDiscovered, disk, flagPins); err != nil {
					return err
				}
			}
			r := registry.Registration{Name: args[0], Serial: serial, UUID: uuid, SecureBoot: secureBoot, Created: time.Now().UTC(), FromDiscovery: fromDiscovered != ""}
			// A new registration's name is its host name: the one rule
			// (the looser ValidateName is for TAPPaaS's files).
			if err := registry.ValidateHostname(r.Name); err != nil {
				return err
			}
			for _, m := range macs {
				n, err := registry.NormalizeMAC(m)
				if err != nil && fromDiscovered != "" {
					return fmt.Errorf("--from-discovered %s: a NIC the machine reported cannot be pinned: %w", fromDiscovered, err)
				}
				if err != nil {
					return fmt.Errorf("--mac: %w", err)
				}
				r.MACs = append(r.MACs, n)
			}
			bd, err := registry.ParseBootDisk(disk)
			if err != nil {
				return fmt.Errorf("--boot-disk: %w", err)
			}
			r.BootDisk = bd
			for _, p := range pools {
				dp, err := registry.ParsePoolSpec(p)
				if err != nil {
					return fmt.Errorf("--pool: %w", err)
				}
				r.Pools = append(r.Pools, dp)
			}
			if len(keys) > 0 {
				if r.SSHKeys, err = registry.LoadSSHKeys(keys); err != nil {
					return usageError(fmt.Errorf("--ssh-key: %w", err))
				}
			}
			if r.Network, err = sf.network(cmd.Flags()); err != nil {
				return err
			}
			if err := nf.apply(&r); err != nil {
				return err
			}
			bmcPassword := ""
			if r.BMC, bmcPassword, err = bf.registration(cmd.Flags()); err != nil {
				return err
			}
			if r.BootMethod, err = registry.ParseBootMethod(bootMethod); err != nil {
				return fmt.Errorf("--boot-method: %w", err)
			}
			if r.MediaAnswer, err = registry.ParseMediaAnswer(media); err != nil {
				return fmt.Errorf("--media-answer: %w", err)
			}
			if err := r.Validate(); err != nil {
				return err
			}
			// The command says what a re-registration changed
			// (warnChanges): the store's own warnings would say it twice.
			regs, err := a.registrarWith(a.logging.Reported(a.log))
			if err != nil {
				return err
			}
			var res registry.RegisterResult
			if r.BMC != nil {
				// Kept 0600 beside the node secrets (the server's, with
				// --server) once the registration is accepted.
				res, err = regs.RegisterWithBMCPassword(cmd.Context(), r, registry.RegisterOptions{Replace: replace}, bmcPassword)
			} else {
				res, err = regs.Register(cmd.Context(), r, registry.RegisterOptions{Replace: replace})
			}
			if errors.Is(err, registry.ErrPinTaken) {
				return fmt.Errorf("%w; --replace moves it", err)
			}
			if err != nil {
				return err
			}
			a.warnChanges(r, res)
			verb := "Registered"
			if res.Previous != nil {
				verb = "Re-registered (replacing the earlier registration)"
			}
			fmt.Fprintf(a.out, "%s %s: boot disk %s", verb, r.Name, r.BootDisk)
			if r.Network != nil {
				fmt.Fprintf(a.out, "; static address %s on %s", r.Network.CIDR, r.ManagementMAC())
			}
			fmt.Fprint(a.out, nicNames(r))
			if len(r.MACs) == 0 && r.Serial == "" && r.UUID == "" {
				fmt.Fprint(a.out, "; pins nothing, so it only answers while it is the only pending registration")
			}
			fmt.Fprintln(a.out)
			return nil
		},
	}
	f := c.Flags()
	f.StringArrayVar(&macs, "mac", nil, "MAC address the node's installer posts (repeatable)")
	f.StringVar(&serial, "serial", "", "pin the node's DMI system serial")
	f.StringVar(&uuid, "uuid", "", "pin the node's DMI system UUID")
	f.StringVar(&fromDiscovered, "from-discovered", "", "take the pins (MACs, DMI serial and UUID) from the discovered machine of this MAC or serial (see discovered); --boot-disk must then be one of its disks' serials")
	f.StringVar(&disk, "boot-disk", "", "disk for the system: a serial (lsblk -o NAME,SERIAL), a kernel name (sda), or any; omitted: chosen on the console")
	f.StringArrayVar(&pools, "pool", nil, "data pool NAME=LAYOUT:DISK[,DISK...], layouts single, stripe, mirror, raidz, raidz2 (repeatable)")
	f.StringArrayVar(&keys, "ssh-key", nil, "public key file for root's authorized_keys on this node (repeatable)")
	bf.bind(f)
	sf.bind(f)
	nf.bind(f)
	f.BoolVar(&secureBoot, "secure-boot", false, "boot this machine through the Secure Boot chain (signed shim, grub and kernel) even when the window offers others iPXE: its firmware has Secure Boot on")
	f.StringVar(&bootMethod, "boot-method", "", "how the machine reaches the installer: network (PXE) or virtual-media (a CD through its Redfish BMC, no PXE needed); omitted: the site's (site.json boot_method), else network")
	f.StringVar(&media, "media-answer", "", "with virtual-media, how the installer gets its answer: iso (on the node's own medium, no DHCP needed), http (fetched from the window; needs DHCP) or partition (on a second, small medium; needs a BMC with two media and an 8.3+ installer); omitted: the site's, else iso")
	f.BoolVar(&replace, "replace", false, "move a MAC, serial or UUID pin another pending registration holds to this one")
	return c
}

// warnChanges says on stderr what a re-registration changed and which
// pins it took from other registrations, so that a dropped --boot-disk or
// a moved MAC is seen.
func (a *app) warnChanges(r registry.Registration, res registry.RegisterResult) {
	if res.Previous != nil {
		var parts []string
		for _, c := range registry.Changes(*res.Previous, r) {
			parts = append(parts, fmt.Sprintf("%s %s -> %s", c.Field, c.Old, c.New))
		}
		if len(parts) == 0 {
			parts = []string{"nothing changed"}
		}
		fmt.Fprintf(a.errw, "node-provisioner: warning: %s was registered already and is replaced: %s\n", r.Name, strings.Join(parts, "; "))
	}
	for _, m := range res.Moved {
		if m.Removed {
			fmt.Fprintf(a.errw, "node-provisioner: warning: %s moved from %s to %s; %s pinned nothing else and was removed\n", m.Pin, m.From, r.Name, m.From)
			continue
		}
		fmt.Fprintf(a.errw, "node-provisioner: warning: %s moved from %s to %s\n", m.Pin, m.From, r.Name)
	}
}
