package folder_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/pxe/apitoken"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

// The daemon flushes the folder's last-used times as it stops.
var _ apitoken.Flusher = (*folder.Tokens)(nil)

// TestCreateListRevoke: a token is shown once, stored as its hash in a
// 0600 file of a 0700 folder, listed without it, and refused once
// revoked, also by a store that read the file before (a running daemon).
func TestCreateListRevoke(t *testing.T) {
	state := t.TempDir()
	ctx := context.Background()
	cli, err := folder.OpenTokens(state, nil)
	if err != nil {
		t.Fatal(err)
	}
	daemon, _ := folder.OpenTokens(state, nil)
	tok, err := cli.Create(ctx, "ci", apitoken.ScopeRegister, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tok, apitoken.Prefix) || len(tok) != len(apitoken.Prefix)+43 {
		t.Errorf("token shape: %d characters", len(tok))
	}
	if got, err := daemon.Authenticate(ctx, tok); err != nil || got.Name != "ci" || got.Scope != apitoken.ScopeRegister {
		t.Fatalf("authenticate: %+v %v", got, err)
	}
	if _, err := daemon.Authenticate(ctx, tok+"x"); !errors.Is(err, apitoken.ErrUnknownToken) {
		t.Errorf("wrong token: %v", err)
	}
	daemon.Flush()
	data, _ := os.ReadFile(filepath.Join(state, apitoken.DirName, folder.TokensFile))
	if strings.Contains(string(data), tok) || !strings.Contains(string(data), apitoken.Hash(tok)) {
		t.Errorf("token tokensFile:\n%s", data)
	}
	for path, want := range map[string]os.FileMode{
		filepath.Join(state, apitoken.DirName):                        0o700 | os.ModeDir,
		filepath.Join(state, apitoken.DirName, folder.TokensFile):     0o600,
		filepath.Join(state, apitoken.DirName, folder.TokensUsedFile): 0o600,
	} {
		if fi, err := os.Stat(path); err != nil || fi.Mode() != want {
			t.Errorf("%s: %v %v, want %v", path, fi.Mode(), err, want)
		}
	}
	list, err := cli.List(ctx)
	if err != nil || len(list) != 1 || list[0].Name != "ci" || list[0].LastUsed.IsZero() || time.Since(list[0].Created) > time.Minute {
		t.Errorf("list: %+v %v", list, err)
	}
	if _, err := cli.Create(ctx, "ci", apitoken.ScopeRead, time.Time{}); !errors.Is(err, apitoken.ErrExists) {
		t.Errorf("second ci: %v", err)
	}
	if err := cli.Revoke(ctx, "ci"); err != nil {
		t.Fatal(err)
	}
	if _, err := daemon.Authenticate(ctx, tok); !errors.Is(err, apitoken.ErrUnknownToken) {
		t.Errorf("revoked: %v", err)
	}
	if err := cli.Revoke(ctx, "ci"); !errors.Is(err, apitoken.ErrNotFound) {
		t.Errorf("revoke twice: %v", err)
	}
}

func TestRefusals(t *testing.T) {
	st, _ := folder.OpenTokens(t.TempDir(), nil)
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		scope apitoken.Scope
		want  error
	}{
		{"", apitoken.ScopeRead, apitoken.ErrInvalidName},
		{"a b", apitoken.ScopeRead, apitoken.ErrInvalidName},
		{"ok", "root", apitoken.ErrInvalidScope},
	} {
		if _, err := st.Create(ctx, tc.name, tc.scope, time.Time{}); !errors.Is(err, tc.want) {
			t.Errorf("create %q %q: %v, want %v", tc.name, tc.scope, err, tc.want)
		}
	}
	if _, err := st.Authenticate(ctx, ""); !errors.Is(err, apitoken.ErrUnknownToken) {
		t.Errorf("empty token: %v", err)
	}
}

func TestScopes(t *testing.T) {
	got := map[apitoken.Scope][]apitoken.Scope{}
	all := []apitoken.Scope{apitoken.ScopeRead, apitoken.ScopeRegister, apitoken.ScopeAdmin}
	for _, s := range append(all, "") {
		for _, need := range all {
			if s.Allows(need) {
				got[s] = append(got[s], need)
			}
		}
	}
	want := map[apitoken.Scope][]apitoken.Scope{
		apitoken.ScopeRead:     {apitoken.ScopeRead},
		apitoken.ScopeRegister: {apitoken.ScopeRead, apitoken.ScopeRegister},
		apitoken.ScopeAdmin:    all,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Error(d)
	}
}
