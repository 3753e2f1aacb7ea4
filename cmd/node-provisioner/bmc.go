package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/plasmactl/plasma-node/pxe/bmc"
	"github.com/plasmactl/plasma-node/pxe/power"
	"github.com/plasmactl/plasma-node/pxe/registrar"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/secret"
)

// bmcPasswordEnv holds a BMC password for register (never a flag value:
// a process's arguments are public).
const bmcPasswordEnv = registrar.EnvBMCPassword

// bmcFlags are register's BMC flags.
type bmcFlags struct {
	url, user, passwordFile, suite, privilege, fingerprint, mode string
	session, mediaTLS                                            bool
}

func (b *bmcFlags) bind(f *pflag.FlagSet) {
	f.StringVar(&b.url, "bmc", "", "the machine's BMC: ipmi://HOST[:PORT] or redfish://HOST[:PORT][/SYSTEM-ID]")
	f.StringVar(&b.user, "bmc-user", "", "BMC user")
	f.StringVar(&b.passwordFile, "bmc-password-file", "", "file whose first line is the BMC password (or env "+bmcPasswordEnv+")")
	f.StringVar(&b.suite, "bmc-cipher-suite", "", "IPMI cipher suite (default 3; 0 is refused)")
	f.StringVar(&b.privilege, "bmc-privilege", "", "IPMI privilege: operator (default) or administrator")
	f.StringVar(&b.fingerprint, "bmc-fingerprint", "", "Redfish: pin the BMC's TLS certificate by its SHA-256 fingerprint")
	f.BoolVar(&b.session, "bmc-session", false, "Redfish: log in with a session instead of HTTP Basic")
	f.StringVar(&b.mode, "bmc-boot-mode", "", "firmware mode of the one-time PXE boot: uefi (default) or legacy")
	f.BoolVar(&b.mediaTLS, "bmc-media-tls", false, "Redfish: the BMC fetches virtual media over the window's HTTPS (it trusts the window's certificate)")
}

// registration returns the BMC and its password, nil when --bmc is not
// given (then no other BMC flag may be).
func (b *bmcFlags) registration(f *pflag.FlagSet) (*registry.BMC, string, error) {
	if b.url == "" {
		for _, n := range []string{"bmc-user", "bmc-password-file", "bmc-cipher-suite", "bmc-privilege", "bmc-fingerprint", "bmc-session", "bmc-boot-mode", "bmc-media-tls"} {
			if f.Changed(n) {
				return nil, "", usageError(fmt.Errorf("--%s needs --bmc", n))
			}
		}
		return nil, "", nil
	}
	r := &registry.BMC{URL: b.url, User: b.user, Privilege: b.privilege, Fingerprint: b.fingerprint, Session: b.session, BootMode: b.mode, MediaTLS: b.mediaTLS}
	if b.suite != "" {
		n, err := bmc.ParseCipherSuite(b.suite)
		if err != nil {
			return nil, "", usageError(fmt.Errorf("--bmc-cipher-suite: %w", err))
		}
		r.CipherSuite = n
	}
	if b.user == "" {
		return nil, "", usageError(errors.New("--bmc needs --bmc-user"))
	}
	if err := r.Validate(); err != nil {
		return nil, "", usageError(fmt.Errorf("--bmc: %w", err))
	}
	var pw string
	switch env := os.Getenv(bmcPasswordEnv); {
	case b.passwordFile != "":
		var err error
		if pw, err = secret.ReadBMCPasswordFile(b.passwordFile); err != nil {
			return nil, "", usageError(fmt.Errorf("--bmc-password-file: %w", err))
		}
	case env != "":
		pw = env
	default:
		return nil, "", usageError(fmt.Errorf("--bmc needs a password: --bmc-password-file FILE or env %s", bmcPasswordEnv))
	}
	return r, pw, nil
}

func (a *app) powerCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "power status|on|off|cycle NAME",
		Short: "Show or change a registered machine's power through its BMC",
		Example: `  node-provisioner power status pve3
  node-provisioner power off pve3`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			action := power.Action(args[0])
			switch action {
			case power.Status, power.On, power.Off, power.Cycle:
			default:
				return usageError(fmt.Errorf("power %q: want status, on, off or cycle", args[0]))
			}
			if err := registry.ValidateName(args[1]); err != nil {
				return err
			}
			n, err := a.node()
			if err != nil {
				return err
			}
			p, err := n.Power(cmd.Context(), args[1], string(action))
			if err != nil {
				return localNotFound(n, err)
			}
			fmt.Fprintf(a.out, "%s: power %s\n", args[1], p)
			return nil
		},
	}
	return c
}

func (a *app) bootCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "boot NAME",
		Short: "Boot a pending machine into the installer: next boot PXE (once), then power on (or cycle when on)",
		Long: `Boot a pending machine into the installer through its BMC: set its next
boot, and only that one, to PXE, then power it on, or power-cycle it when it
is on. Refused unless the provisioning window is open and the registration is
pending, so an installed machine is never reinstalled by accident.`,
		Example: `  node-provisioner enable --ttl 2h --dhcp-interface eth0
  node-provisioner boot pve3`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := registry.ValidateName(args[0]); err != nil {
				return err
			}
			n, err := a.node()
			if err != nil {
				return err
			}
			res, err := n.Boot(cmd.Context(), args[0])
			if err != nil {
				return localNotFound(n, err)
			}
			how := "powered on"
			if res.Cycled {
				how = "power-cycled"
			}
			fmt.Fprintf(a.out, "%s: next boot %s (%s, once) and %s via %s\n", args[0], res.Next(), res.Mode, how, res.Protocol)
			return nil
		},
	}
}
