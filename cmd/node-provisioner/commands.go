package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe"
)

func (a *app) registerCmd() *cobra.Command {
	var (
		macs, pools, keys  []string
		serial, uuid, disk string
	)
	c := &cobra.Command{
		Use:   "register NAME [--mac M]... [--serial S] [--uuid U] [--boot-disk SERIAL|NAME|any] [--pool SPEC]... [--ssh-key FILE]...",
		Short: "Register a node: the allowlist entry its installer's request must match",
		Example: `  node-provisioner register pve3 --mac aa:bb:cc:dd:ee:ff --boot-disk 25414A800205 \
      --pool 'tanka1=single:50026B73842AD86F'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r := answer.Registration{Name: args[0], Serial: serial, UUID: uuid, Created: time.Now().UTC()}
			if err := answer.ValidateName(r.Name); err != nil {
				return err
			}
			for _, m := range macs {
				n, err := answer.NormalizeMAC(m)
				if err != nil {
					return fmt.Errorf("--mac: %w", err)
				}
				r.MACs = append(r.MACs, n)
			}
			bd, err := answer.ParseBootDisk(disk)
			if err != nil {
				return fmt.Errorf("--boot-disk: %w", err)
			}
			r.BootDisk = bd
			for _, p := range pools {
				dp, err := answer.ParsePoolSpec(p)
				if err != nil {
					return fmt.Errorf("--pool: %w", err)
				}
				r.Pools = append(r.Pools, dp)
			}
			if len(keys) > 0 {
				if r.SSHKeys, err = answer.LoadSSHKeys(keys); err != nil {
					return usageError(fmt.Errorf("--ssh-key: %w", err))
				}
			}
			if err := r.Validate(); err != nil {
				return err
			}
			reg, err := answer.OpenRegistry(a.stateDir, a.log)
			if err != nil {
				return err
			}
			replaced, err := reg.Put(cmd.Context(), r)
			if err != nil {
				return err
			}
			verb := "Registered"
			if replaced {
				verb = "Re-registered (replacing the earlier registration)"
			}
			fmt.Fprintf(a.out, "%s %s: boot disk %s", verb, r.Name, r.BootDisk)
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
	f.StringVar(&disk, "boot-disk", "", "disk for the system: a serial (lsblk -o NAME,SERIAL), a kernel name (sda), or any; omitted: chosen on the console")
	f.StringArrayVar(&pools, "pool", nil, "data pool NAME=LAYOUT:DISK[,DISK...], layouts single, stripe, mirror, raidz, raidz2 (repeatable)")
	f.StringArrayVar(&keys, "ssh-key", nil, "public key file for root's authorized_keys on this node (repeatable)")
	return c
}

func (a *app) unregisterCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "unregister NAME",
		Short: "Remove a pending registration",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := answer.ValidateName(args[0]); err != nil {
				return err
			}
			reg, err := answer.OpenRegistry(a.stateDir, a.log)
			if err != nil {
				return err
			}
			if err := reg.Delete(cmd.Context(), args[0]); err != nil {
				return err
			}
			fmt.Fprintf(a.out, "Unregistered %s\n", args[0])
			return nil
		},
	}
}

func (a *app) listCmd() *cobra.Command {
	var output string
	c := &cobra.Command{
		Use:   "list",
		Short: "List registrations: pending, consumed and installed",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "table" && output != "json" {
				return usageError(fmt.Errorf("--output %q: want table or json", output))
			}
			reg, err := answer.OpenRegistry(a.stateDir, a.log)
			if err != nil {
				return err
			}
			st, err := answer.Status(cmd.Context(), reg, a.stateDir)
			if err != nil {
				return err
			}
			if output == "json" {
				enc := json.NewEncoder(a.out)
				enc.SetIndent("", "  ")
				return enc.Encode(st)
			}
			if len(st) == 0 {
				fmt.Fprintln(a.out, "No registrations.")
				return nil
			}
			tw := tabwriter.NewWriter(a.out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tSTATE\tMACS\tBOOT DISK\tPOOLS")
			for _, s := range st {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.Name, s.State, dash(strings.Join(s.MACs, ",")), s.BootDisk, dash(strings.Join(s.Pools, " ")))
			}
			return tw.Flush()
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "table", "output format: table or json")
	return c
}

func (a *app) serveCmd() *cobra.Command {
	var (
		addr, baseURL string
		ttl           time.Duration
		keys          []string
		flagSite      answer.Site
	)
	c := &cobra.Command{
		Use:   "serve [--http ADDR] [--ttl DURATION] [--domain D] [--keyboard K] [--country C] [--timezone TZ] [--mailto M]",
		Short: "Open a provisioning window: serve answers until the TTL runs out",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if ttl < 0 {
				return usageError(fmt.Errorf("--ttl %s: want a positive duration such as 2h or 30m", ttl))
			}
			reg, err := answer.OpenRegistry(a.stateDir, a.log)
			if err != nil {
				return err
			}
			sec, err := answer.OpenSecretStore(a.secretsDir)
			if err != nil {
				return err
			}
			site, err := a.siteKeys(keys)
			if err != nil {
				return err
			}
			sitePath := filepath.Join(a.stateDir, answer.SiteFileName)
			h, err := answer.NewHandler(answer.HandlerConfig{
				Registry: reg, Secrets: sec, StateDir: a.stateDir, BaseURL: baseURL, Logger: a.log,
				Site: func() (answer.Site, error) {
					s, err := answer.LoadSiteIfExists(sitePath)
					return flagSite.Merge(site).Merge(s), err
				},
			})
			if err != nil {
				return err
			}
			defer h.Close()
			routes := map[string]http.Handler{}
			for _, p := range h.Patterns() {
				routes[p] = h
			}
			srv, err := pxe.New(pxe.Config{HTTPAddr: addr, TTL: ttl, Routes: routes, Logger: a.log})
			if err != nil {
				return err
			}
			if _, err := os.Stat(filepath.Join(a.stateDir, "assets")); err != nil {
				a.log.Warn("no boot assets staged: only the answer endpoint works (network boot needs prepare, which is not available yet)", "missing", filepath.Join(a.stateDir, "assets"))
			}
			if pending, err := reg.Pending(cmd.Context()); err == nil && len(pending) == 0 {
				a.log.Warn("no pending registrations: every request will be refused; add one with node-provisioner register")
			}
			go func() {
				<-srv.Ready()
				fmt.Fprintf(a.out, "Serving answers on http://%s/answer until %s\n", srv.Addr(), time.Now().Add(ttl).Format(time.RFC3339))
			}()
			err = srv.Serve(cmd.Context())
			if errors.Is(err, pxe.ErrWindowExpired) || errors.Is(err, context.Canceled) {
				fmt.Fprintln(a.out, "Provisioning window closed:", err)
				return nil
			}
			return err
		},
	}
	f := c.Flags()
	f.StringVar(&addr, "http", pxe.DefaultHTTPAddr, "HTTP listen address")
	f.DurationVar(&ttl, "ttl", pxe.DefaultTTL, "close the window after this long")
	f.StringVar(&flagSite.Domain, "domain", "", "domain of node FQDNs <name>.<domain> (default: site.json's, else "+answer.DefaultDomain+")")
	f.StringVar(&flagSite.Keyboard, "keyboard", "", "installer keyboard layout (default: site.json's, else "+answer.DefaultKeyboard+")")
	f.StringVar(&flagSite.Country, "country", "", "two-letter country code (default: site.json's, else "+answer.DefaultCountry+")")
	f.StringVar(&flagSite.Timezone, "timezone", "", "time zone such as Europe/Vienna (default: site.json's, else "+answer.DefaultTimezone+")")
	f.StringVar(&flagSite.Mailto, "mailto", "", "administrator e-mail address (default: site.json's, else root@<domain>)")
	f.StringVar(&baseURL, "base-url", "", "URL installers reach this server at, for first-boot and webhook URLs (default: from each request)")
	f.StringArrayVar(&keys, "ssh-key", nil, "public key file for every node's root authorized_keys (repeatable; default ~/.ssh/id_ed25519.pub and id_rsa.pub)")
	return c
}

// siteKeys loads the SSH keys every answer carries: the given files, else
// the running user's default public keys.
func (a *app) siteKeys(files []string) (answer.Site, error) {
	if len(files) == 0 {
		if home, err := os.UserHomeDir(); err == nil {
			files = answer.DefaultSSHKeyFiles(home)
		}
		if len(files) == 0 {
			a.log.Warn("no SSH public key found (~/.ssh/id_ed25519.pub, id_rsa.pub): answers carry none unless site.json or a registration has some; day-2 access is by key")
			return answer.Site{}, nil
		}
	}
	keys, err := answer.LoadSSHKeys(files)
	if err != nil {
		return answer.Site{}, usageError(fmt.Errorf("--ssh-key: %w", err))
	}
	return answer.Site{SSHKeys: keys}, nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
