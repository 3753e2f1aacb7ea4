package main

import (
	"github.com/plasmactl/plasma-node/pxe/client"
	"github.com/plasmactl/plasma-node/pxe/enrol"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store/postgres"

	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/plasmactl/plasma-node/internal/cli"
	"github.com/plasmactl/plasma-node/pxe/registrar"
	"github.com/plasmactl/plasma-node/pxe/secret"
	"github.com/plasmactl/plasma-node/pxe/sitepublish"
	"github.com/plasmactl/plasma-node/pxe/store"
)

// DefaultStateDir is where registrations, assets and the event log live.
const DefaultStateDir = registrar.DefaultDir

func main() {
	if isDiscoveryInit(os.Getpid(), os.Args[0]) {
		// The discovery initrd's /init (prepare --discovery).
		runAgent()
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// isDiscoveryInit tells whether this process is the discovery initrd's
// /init: PID 1 started by the kernel as /init. PID 1 alone is not enough: a
// container runs its command as PID 1 too, and a daemon there must never
// turn into the agent that powers the machine off.
func isDiscoveryInit(pid int, argv0 string) bool {
	return pid == 1 && argv0 == "/init"
}

// usageError marks bad usage: exit code 2.
func usageError(err error) error { return cli.Usage(err) }

type app struct {
	stateDir, secretsDir string
	// store is a PostgreSQL store's URL (empty: the state folder's);
	// storeKey its secrets key file.
	store, storeKey string
	// server and fingerprint name a daemon's API (remote mode).
	server, fingerprint string
	logging             cli.Logging
	out, errw           io.Writer
	log                 *slog.Logger
	// local is the state folder on this host, once a command asked for
	// it: its stores are opened once for the process (see stores).
	local *registrar.Local
	// resolver looks up the site's TXT records for status (nil:
	// net.DefaultResolver); tests set it.
	resolver sitepublish.TXTResolver
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	a := &app{out: stdout, errw: stderr}
	a.logging.Voice = "node-provisioner"
	root := newRoot(a, stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if errors.Is(err, client.ErrCertificate) && a.fingerprint == "" {
		err = fmt.Errorf("%w\nhint: a daemon's own certificate is pinned by its fingerprint: run node-provisioner tls fingerprint on the server and pass it as --fingerprint (or NODE_PROVISIONER_FINGERPRINT)", err)
	}
	return cli.Exit(stderr, "node-provisioner", err, func(err error) bool {
		return errors.Is(err, registry.ErrInvalidRegistration) || errors.Is(err, registry.ErrInvalidSSHKey) || errors.Is(err, enrol.ErrInvalidRule)
	})
}

// newRoot returns the command tree.
func newRoot(a *app, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "node-provisioner",
		Short: "Serve the Proxmox VE automated installer one answer per registered node",
		Example: `  node-provisioner register pve1 --mac 52:54:00:de:ad:01 --boot-disk sda
  node-provisioner enable --ttl 2h --dhcp-interface eth0
  node-provisioner list
  source <(node-provisioner completion bash)`,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) (err error) {
			if err := cli.RefuseEmpty(cmd.Flags()); err != nil {
				return err
			}
			// A window's log is what serve shows; other commands are quiet.
			level := slog.LevelWarn
			if cmd.Name() == "serve" || cmd.Name() == "daemon" {
				level = slog.LevelInfo
			}
			if a.log, err = a.logging.Logger(stderr, level); err != nil {
				return err
			}
			return a.defaults()
		},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	pf := root.PersistentFlags()
	pf.StringVar(&a.stateDir, "state-dir", "", "state folder: registrations, assets, event log (env NODE_PROVISIONER_STATE_DIR; default "+DefaultStateDir+")")
	pf.StringVar(&a.secretsDir, "secrets-dir", "", "folder for generated root passwords (env NODE_PROVISIONER_SECRETS_DIR; default ~/.node-secrets)")
	pf.StringVar(&a.store, "store", "", "a PostgreSQL store, postgres://USER@HOST/DB, for registrations, secrets, tokens, events and install reports (env "+registrar.EnvStore+"; its password only in the environment or ~/.pgpass, never an argument; default: the state folder's)")
	pf.StringVar(&a.storeKey, "store-key", "", "the PostgreSQL store's secrets key file, 0600, the same on every host (env "+registrar.EnvStoreKey+"; default <state-dir>/"+store.KeyFileName+", made on the store's first host)")
	pf.StringVar(&a.server, "server", "", "a node-provisioner daemon's API URL, such as https://prov.example:8091: register, unregister, list, status, enable, disable, power, boot, reinstall and token go there (env NODE_PROVISIONER_SERVER; the token from NODE_PROVISIONER_TOKEN)")
	pf.StringVar(&a.fingerprint, "fingerprint", "", "the --server certificate's SHA-256 fingerprint, as its tls fingerprint prints it (env NODE_PROVISIONER_FINGERPRINT; default: trust the system's certificates)")
	a.logging.AddFlags(pf, "")
	root.AddCommand(a.registerCmd(), a.unregisterCmd(), a.powerCmd(), a.bootCmd(), a.rearmCmd(), a.reinstallCmd(), a.listCmd(), a.discoveredCmd(), a.ruleCmd(), a.secretCmd(), a.serveCmd(), a.enableCmd(), a.disableCmd(), a.statusCmd(), a.daemonCmd(), a.tokenCmd(), a.tlsCmd(), a.storeCmd(), a.prepareCmd(), a.publishCmd(), a.validateAnswerCmd(), cli.VersionCommand("node-provisioner"))
	a.addCompletion(root)
	cli.Setup(root)
	return root
}

// defaults fills the global settings not given as flags from the
// environment and the defaults.
func (a *app) defaults() (err error) {
	if a.stateDir == "" {
		a.stateDir = envOr(registrar.EnvDir, DefaultStateDir)
	}
	if a.secretsDir == "" {
		a.secretsDir = os.Getenv(registrar.EnvSecretsDir)
	}
	if a.store != "" {
		if err := storeFlag("--store", a.store); err != nil {
			return err
		}
	}
	if a.store == "" {
		a.store = os.Getenv(registrar.EnvStore)
	}
	if a.storeKey == "" {
		a.storeKey = os.Getenv(registrar.EnvStoreKey)
	}
	if a.server == "" {
		a.server = os.Getenv(registrar.EnvServer)
	}
	if a.fingerprint == "" {
		a.fingerprint = os.Getenv(registrar.EnvFingerprint)
	}
	if a.secretsDir == "" {
		if a.secretsDir, err = secret.DefaultDir(); err != nil {
			return fmt.Errorf("--secrets-dir: %w", err)
		}
	}
	return nil
}

// storeFlag refuses a --store that is not a PostgreSQL URL, or that
// holds a password: an argument is seen by every user of the host.
func storeFlag(flag, v string) error {
	if !postgres.IsURL(v) {
		return usageError(fmt.Errorf("%s %s: want a postgres:// or postgresql:// URL", flag, postgres.Redact(v)))
	}
	if postgres.HasPassword(v) {
		return usageError(fmt.Errorf("%s %s: a password in an argument is seen by every user of the host; put the URL in %s, or the password in ~/.pgpass", flag, postgres.Redact(v), registrar.EnvStore))
	}
	return nil
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
