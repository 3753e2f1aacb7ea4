package bootassets

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	toml "github.com/pelletier/go-toml/v2"
)

// TestModeFileToken: the token is the [http] table's token key, as
// proxmox-auto-install-assistant/src/main.rs (9.2, --answer-auth-token)
// writes it and proxmox-auto-installer/src/utils.rs (HttpOptions.token)
// reads it.
func TestModeFileToken(t *testing.T) {
	got := renderModeFile("9.2", "https://192.0.2.10:8443/answer", "", "np:s3cret")
	var m modeFile
	if err := toml.Unmarshal(got, &m); err != nil {
		t.Fatalf("not TOML: %v\n%s", err, got)
	}
	if m.HTTP.Token != "np:s3cret" || !strings.HasSuffix(string(got), "token = \"np:s3cret\"\n") {
		t.Errorf("mode file:\n%s", got)
	}
}

func TestCheckAnswerToken(t *testing.T) {
	tests := map[string]struct {
		token string
		ok    bool
	}{
		"name and secret":       {"np:0123abcd", true},
		"a colon in the secret": {"np:a:b", true},
		"no colon":              {"np0123", false},
		"no name":               {":secret", false},
		"no secret":             {"np:", false},
		"a space":               {"np:a b", false},
		"a quote":               {`np:a"b`, false},
		"a newline":             {"np:a\nb", false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if err := checkAnswerToken(tc.token); (err == nil) != tc.ok {
				t.Errorf("checkAnswerToken(%q) = %v, want ok=%v", tc.token, err, tc.ok)
			}
		})
	}
}

// TestPrepareAnswerToken: auto generates a token per release, baked into
// the mode file and kept 0600 outside the served assets; re-baking an ISO
// that holds one keeps it; preparing without one removes the former.
func TestPrepareAnswerToken(t *testing.T) {
	ctx := context.Background()
	iso := buildISO(t, proxmoxLayout(t, testInitrd(t, "gzip", testInit(t))), isoOpts{name: "proxmox-ve_9.2-1.iso"})
	state := t.TempDir()
	url := "http://192.0.2.10:8090/answer"
	rel, err := Prepare(ctx, PrepareOptions{ISO: iso, StateDir: state, AnswerURL: url, AnswerAuthToken: AnswerAuthTokenAuto})
	if err != nil {
		t.Fatal(err)
	}
	token, err := AnswerToken(ctx, state, rel.Name)
	if err != nil || !strings.HasPrefix(token, "node-provisioner:") || len(token) != len("node-provisioner:")+64 {
		t.Fatalf("AnswerToken = %q, %v", token, err)
	}
	if !rel.AnswerAuth {
		t.Error("the manifest does not say the ISO sends a token")
	}
	var m modeFile
	if err := toml.Unmarshal(readISOPath(t, rel.Path(AssetISO), isoModeFile), &m); err != nil || m.HTTP.Token != token {
		t.Errorf("mode file token = %q, %v; want the kept one", m.HTTP.Token, err)
	}
	st, err := os.Stat(filepath.Join(state, AnswerTokenDir, rel.Name))
	dst, derr := os.Stat(filepath.Join(state, AnswerTokenDir))
	if err != nil || derr != nil || st.Mode().Perm() != 0o600 || dst.Mode().Perm() != 0o700 {
		t.Errorf("token file %v %v, folder %v %v; want 0600 in 0700", st.Mode(), err, dst.Mode(), derr)
	}
	manifest, _ := os.ReadFile(filepath.Join(rel.Dir, ManifestName))
	if strings.Contains(string(manifest), token) {
		t.Error("the manifest holds the token")
	}

	// A stock-prepared ISO (here: the one just made) re-baked with
	// another URL keeps its token.
	again, err := Prepare(ctx, PrepareOptions{ISO: rel.Path(AssetISO), StateDir: t.TempDir(), AnswerURL: "http://192.0.2.11:8090/answer", Release: "rebaked"})
	if err != nil {
		t.Fatal(err)
	}
	if err := toml.Unmarshal(readISOPath(t, again.Path(AssetISO), isoModeFile), &m); err != nil || m.HTTP.Token != token || m.HTTP.URL != "http://192.0.2.11:8090/answer" {
		t.Errorf("re-baked mode file = %+v, %v; want the new URL and the token kept", m.HTTP, err)
	}

	// Prepared again with the token "none": none is kept, none required.
	if _, err := Prepare(ctx, PrepareOptions{ISO: iso, StateDir: state, AnswerURL: url, AnswerAuthToken: AnswerAuthTokenNone}); err != nil {
		t.Fatal(err)
	}
	if token, err := AnswerToken(ctx, state, rel.Name); err != nil || token != "" {
		t.Errorf("AnswerToken after preparing without one = %q, %v", token, err)
	}
}

// TestAnswerTokenMissingFailsClosed: a release whose manifest says its ISO
// sends a token, with the token gone, is an error, not "no token".
func TestAnswerTokenMissingFailsClosed(t *testing.T) {
	ctx := context.Background()
	iso := buildISO(t, proxmoxLayout(t, testInitrd(t, "gzip", testInit(t))), isoOpts{name: "proxmox-ve_9.2-1.iso"})
	state := t.TempDir()
	rel, err := Prepare(ctx, PrepareOptions{ISO: iso, StateDir: state, AnswerURL: "http://192.0.2.10:8090/answer", AnswerAuthToken: "np:secret"})
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(state, AnswerTokenDir, rel.Name))
	if _, err := AnswerToken(ctx, state, rel.Name); !errors.Is(err, ErrAnswerTokenMissing) {
		t.Errorf("AnswerToken = %v, want ErrAnswerTokenMissing", err)
	}
}

func TestPrepareRefusesBadTokens(t *testing.T) {
	iso := filepath.Join(t.TempDir(), "x.iso")
	tests := map[string]struct {
		opts PrepareOptions
		want string
	}{
		"a token without URL": {PrepareOptions{ISO: iso, StateDir: "s", AnswerAuthToken: "np:s"}, "an answer token needs an answer URL"},
		"a token without a name": {PrepareOptions{ISO: iso, StateDir: "s", AnswerURL: "http://h/a", AnswerAuthToken: "secret"},
			"want the form <name>:<secret>"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := Prepare(context.Background(), tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
	t.Run("an 8.2 ISO sends no token", func(t *testing.T) {
		files := proxmoxLayout(t, testInitrd(t, "gzip", testInit(t)))
		files[".cd-info"] = []byte(strings.ReplaceAll(testCDInfo, "RELEASE='9.2'", "RELEASE='8.2'"))
		iso := buildISO(t, files, isoOpts{name: "proxmox-ve_8.2-1.iso"})
		_, err := Prepare(context.Background(), PrepareOptions{ISO: iso, StateDir: t.TempDir(), AnswerURL: "http://h/a", AnswerAuthToken: "np:s"})
		if err == nil || !strings.Contains(err.Error(), "needs a 9.2 or later ISO") {
			t.Errorf("err = %v", err)
		}
	})
}

// TestPrepareBakesATokenByDefaultFor92: a 9.2 ISO baked with an answer
// URL and no token named gets a generated one (the window then refuses
// answer requests without it); the token "none" bakes none.
func TestPrepareBakesATokenByDefaultFor92(t *testing.T) {
	ctx := context.Background()
	url := "http://192.0.2.10:8090/answer"
	for _, tc := range []struct {
		token string
		want  bool
	}{{"", true}, {AnswerAuthTokenNone, false}} {
		iso := buildISO(t, proxmoxLayout(t, testInitrd(t, "gzip", testInit(t))), isoOpts{name: "proxmox-ve_9.2-1.iso"})
		state := t.TempDir()
		rel, err := Prepare(ctx, PrepareOptions{ISO: iso, StateDir: state, AnswerURL: url, AnswerAuthToken: tc.token})
		if err != nil {
			t.Fatalf("token %q: %v", tc.token, err)
		}
		token, err := AnswerToken(ctx, state, rel.Name)
		if got := token != ""; got != tc.want || rel.AnswerAuth != tc.want || err != nil {
			t.Errorf("token %q: baked %v (AnswerAuth %v, %v), want %v", tc.token, got, rel.AnswerAuth, err, tc.want)
		}
	}
	if sendsToken("8.4") {
		t.Error("an 8.4 ISO would get a token its installer never sends")
	}
}
