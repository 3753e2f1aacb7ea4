package folder_test

import (
	"context"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/pxe/apitoken"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

// TestATokenInUseIsNeverListedAsNeverUsed: the daemon's store writes a
// token's first use at once, so another process's list (node-provisioner
// token list on the state folder) shows it used, also for a second token
// used moments after the first.
func TestATokenInUseIsNeverListedAsNeverUsed(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	daemon, err := folder.OpenTokens(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := daemon.Create(ctx, "a", apitoken.ScopeRead, time.Time{})
	b, _ := daemon.Create(ctx, "b", apitoken.ScopeRead, time.Time{})
	for _, tok := range []string{a, b} {
		if _, err := daemon.Authenticate(ctx, tok); err != nil {
			t.Fatal(err)
		}
	}
	cli, _ := folder.OpenTokens(dir, nil)
	list, err := cli.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range list {
		if tk.LastUsed.IsZero() {
			t.Errorf("token %s in use is listed as never used by another process", tk.Name)
		}
	}
}
