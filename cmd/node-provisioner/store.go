package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/plasmactl/plasma-node/pxe/registrar"
	"github.com/plasmactl/plasma-node/pxe/store/postgres"

	"github.com/spf13/cobra"

	"github.com/plasmactl/plasma-node/pxe/store"
)

func (a *app) storeCmd() *cobra.Command {
	c := &cobra.Command{Use: "store", Short: "The store of registrations, secrets, tokens and events", Example: "  NODE_PROVISIONER_STORE=postgres://np:…@db/np node-provisioner store copy --from /var/lib/node-provisioner"}
	var from, to string
	cp := &cobra.Command{
		Use:   "copy --from DIR [--to postgres://USER@HOST/DB]",
		Short: "Copy a state folder's state into a new PostgreSQL store",
		Long: "Copy the state folder's registrations (pending stays pending, consumed and undelivered stay re-armable),\n" +
			"the secrets (sealed with the store's key, --store-key, made on this first host), the API's token hashes, the\n" +
			"events, the install reports and the idempotency records into a PostgreSQL store that holds no state yet\n" +
			"(one that does is refused). A registration that cannot be read is reported on its own line and not copied\n" +
			"(exit 1). The store's URL comes from --to or NODE_PROVISIONER_STORE; its password never from an argument.",
		Example: "  NODE_PROVISIONER_STORE=postgres://np:…@db/np node-provisioner store copy --from /var/lib/node-provisioner",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if to != "" {
				if err := storeFlag("--to", to); err != nil {
					return err
				}
			} else if to = a.store; to == "" {
				return usageError(fmt.Errorf("--to or %s: name the PostgreSQL store to copy into", registrar.EnvStore))
			}
			if from == "" {
				from = a.stateDir
			}
			if ok, err := store.Exists(from); err != nil || !ok {
				return usageError(fmt.Errorf("--from %s: not a state folder with registrations (%v)", from, err))
			}
			key := a.storeKey
			if key == "" {
				key = filepath.Join(a.stateDir, store.KeyFileName) // this host's, whatever the folder copied
				if err := os.MkdirAll(a.stateDir, 0o700); err != nil {
					return err
				}
			}
			o := store.Options{SecretsDir: a.secretsDir, Store: to, KeyFile: key, Openers: postgres.Openers(), Logger: a.log}
			dst, err := store.Open(cmd.Context(), from, o)
			if err != nil {
				return err
			}
			defer dst.Close()
			c, err := postgres.Copy(cmd.Context(), from, o, dst)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.out, "Copied %s into %s: %d pending, %d consumed (%d undelivered, re-armable), %d secrets, %d tokens, %d events, %d install reports, %d idempotency records, %d discovered machines\n",
				from, dst.Store(), c.Pending, c.Consumed, c.Undelivered, c.Secrets, c.Tokens, c.Events, c.Installs, c.Replies, c.Discovered)
			for _, b := range c.Broken {
				fmt.Fprintf(a.errw, "node-provisioner: registration %s (%s) cannot be read, not copied: %v\n", b.Name, b.File, b.Err)
			}
			if len(c.Broken) > 0 {
				return fmt.Errorf("%d registrations not copied", len(c.Broken))
			}
			return nil
		},
	}
	cp.Flags().StringVar(&from, "from", "", "the state folder to copy (default: --state-dir)")
	cp.Flags().StringVar(&to, "to", "", "the PostgreSQL store, postgres://USER@HOST/DB (default: --store, env "+registrar.EnvStore+")")
	c.AddCommand(cp)
	return c
}
