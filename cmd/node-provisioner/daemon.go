package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"runtime/debug"
	"text/tabwriter"
	"time"

	"github.com/plasmactl/plasma-node/pxe/client"

	"github.com/spf13/cobra"

	"github.com/plasmactl/plasma-node/internal/cli"
	"github.com/plasmactl/plasma-node/pxe/apitoken"
	"github.com/plasmactl/plasma-node/pxe/daemon"
)

func (a *app) daemonCmd() *cobra.Command {
	var (
		o               serveOptions
		addr            string
		tlsCert, tlsKey string
		hostName        string
	)
	c := &cobra.Command{
		Use:   "daemon [--api ADDR] [--http ADDR] [--dhcp-interface IF] [window settings as serve]",
		Short: "Serve the management API over TLS and run the windows it opens (a long-running service)",
		Example: `  node-provisioner token create ci --scope register
  node-provisioner daemon --api :8091 --dhcp-interface eth0 --tls`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.cfg.TTL = time.Hour       // each window's TTL comes with its request
			o.cfg.StateDir = a.stateDir // checked with the window settings (network boot needs the registrations)
			if _, err := o.check(); err != nil {
				return err
			}
			if err := daemon.CheckAddr(addr); err != nil {
				return usageError(fmt.Errorf("--api: %w", err))
			}
			keys, err := a.siteKeys(o.keys)
			if err != nil {
				return err
			}
			w, site := o.cfg, o.site.Merge(keys)
			w.Logger = a.log
			bi, _ := debug.ReadBuildInfo()
			if hostName != "" && !hostNameRE.MatchString(hostName) {
				return usageError(fmt.Errorf("--host-name %q: want up to 63 letters, digits, '.', '_' or '-', starting with a letter or digit", hostName))
			}
			if (tlsCert == "") != (tlsKey == "") {
				return usageError(errors.New("--tls-cert and --tls-key go together: the site's certificate and its private key"))
			}
			d, err := daemon.New(daemon.Config{StateDir: a.stateDir, SecretsDir: a.secretsDir, Site: site, Store: a.store, StoreKeyFile: a.storeKey, Addr: addr, Window: w, TLSCert: tlsCert, TLSKey: tlsKey, Host: hostName, Build: cli.ReadBuild(bi, cli.Module), Logger: a.log})
			if err != nil {
				return flagError(err)
			}
			return d.Run(cmd.Context())
		},
	}
	c.Flags().StringVar(&addr, "api", daemon.DefaultAddr, "the management API's listen address (HTTPS, with the certificate of tls fingerprint)")
	c.Flags().StringVar(&tlsCert, "tls-cert", "", "serve the API with this certificate (PEM, chain after the leaf; a site CA's) instead of the state folder's self-signed one")
	c.Flags().StringVar(&tlsKey, "tls-key", "", "the private key of --tls-cert (PEM, mode 0600)")
	c.Flags().StringVar(&hostName, "host-name", "", "this host's name to the site's other provisioner hosts, which status lists (default: the hostname)")
	o.bindWindow(c.Flags())
	return c
}

// hostNameRE is what --host-name takes.
var hostNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

func (a *app) tokenCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "token",
		Short: "Manage the management API's bearer tokens (create, list, revoke; with --server through the API, admin)",
		Example: `  node-provisioner token create ci --scope register
  node-provisioner token list
  node-provisioner token revoke ci`,
	}
	var scope string
	var ttl time.Duration
	create := &cobra.Command{
		Use:   "create NAME --scope admin|register|read [--ttl 720h]",
		Short: "Create a token and print it once; only its hash is kept",
		Long: "Create a token and print it once; only its SHA-256 hash is kept, in <state-dir>/api/tokens.json.\n" +
			"read may list and watch; register may also create and delete registrations; admin may also open and close windows.",
		Example: "  export NODE_PROVISIONER_TOKEN=$(node-provisioner token create ci --scope register)\n" +
			"  node-provisioner token create nightly --scope read --ttl 720h",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sc, err := apitoken.ParseScope(scope)
			if err != nil {
				return usageError(fmt.Errorf("--scope: %w", err))
			}
			if cmd.Flags().Changed("ttl") && ttl < time.Second {
				return usageError(fmt.Errorf("--ttl %s: want a second or more, such as 720h; leave --ttl out for a token that does not expire", ttl))
			}
			n, err := a.node()
			if err != nil {
				return err
			}
			tok, err := n.CreateToken(cmd.Context(), args[0], string(sc), ttl)
			if errors.Is(err, apitoken.ErrInvalidName) || errors.Is(err, apitoken.ErrExists) || errors.Is(err, apitoken.ErrInvalidScope) {
				return usageError(err)
			}
			if err != nil {
				return err
			}
			fmt.Fprintln(a.out, tok)
			return nil
		},
	}
	create.Flags().StringVar(&scope, "scope", "", "what the token may do: admin, register or read")
	cli.DurationVar(create.Flags(), &ttl, "ttl", 0, "how long the token is accepted, after which the API refuses it and ends its event streams; default: until revoked")
	var output string
	list := &cobra.Command{
		Use:     "list",
		Short:   "List the tokens: name, scope, created, last used, expires (never the tokens)",
		Example: "  node-provisioner token list\n  node-provisioner token list -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "table" && output != "json" {
				return usageError(fmt.Errorf("--output %q: want table or json", output))
			}
			toks, err := a.tokens(cmd.Context())
			if err != nil {
				return err
			}
			if output == "json" {
				type row struct {
					Name     string    `json:"name"`
					Scope    string    `json:"scope"`
					Created  time.Time `json:"created"`
					LastUsed time.Time `json:"last_used,omitzero"`
					Expires  time.Time `json:"expires,omitzero"`
				}
				rows := []row{}
				for _, t := range toks {
					rows = append(rows, row{t.Name, t.Scope, t.Created, t.LastUsed, t.Expires})
				}
				enc := json.NewEncoder(a.out)
				enc.SetIndent("", "  ")
				return enc.Encode(rows)
			}
			if len(toks) == 0 {
				fmt.Fprintln(a.out, "No tokens.")
				return nil
			}
			tw := tabwriter.NewWriter(a.out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tSCOPE\tCREATED\tLAST USED\tEXPIRES")
			now := time.Now()
			for _, t := range toks {
				used := "never"
				if !t.LastUsed.IsZero() {
					used = t.LastUsed.Format(time.RFC3339)
				}
				expires := "never"
				if !t.Expires.IsZero() {
					expires = t.Expires.Format(time.RFC3339)
					if !now.Before(t.Expires) {
						expires += " (expired)"
					}
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t.Name, t.Scope, t.Created.Format(time.RFC3339), used, expires)
			}
			return tw.Flush()
		},
	}
	list.Flags().StringVarP(&output, "output", "o", "table", "output format: table or json")
	revoke := &cobra.Command{
		Use:     "revoke NAME",
		Short:   "Revoke a token; a running daemon refuses it from its next request",
		Example: "  node-provisioner token revoke ci",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := a.node()
			if err != nil {
				return err
			}
			if err = n.RevokeToken(cmd.Context(), args[0]); err != nil {
				if errors.Is(err, apitoken.ErrNotFound) {
					return usageError(err)
				}
				return err
			}
			fmt.Fprintf(a.out, "Revoked %s\n", args[0])
			return nil
		},
	}
	c.AddCommand(create, list, revoke)
	return c
}

// tokens lists the API tokens, of --server or of the state folder.
func (a *app) tokens(ctx context.Context) ([]client.TokenInfo, error) {
	n, err := a.node()
	if err != nil {
		return nil, err
	}
	return n.Tokens(ctx)
}
