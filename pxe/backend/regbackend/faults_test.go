package regbackend_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/backend/regbackend"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store/folder"

	"github.com/plasmactl/plasma-node/internal/netnstest"
)

// mountTmpfs mounts a tmpfs of size on dir for the test's life.
func mountTmpfs(t *testing.T, dir, size string) {
	t.Helper()
	if os.Geteuid() != 0 {
		netnstest.Missing(t, "mounting a tmpfs needs root")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	netnstest.Run(t, "mount", "-t", "tmpfs", "-o", "size="+size+",mode=0700", "tmpfs", dir)
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
}

// TestNoAnswerIsLostToAFullOrReadOnlySecretsFolder: when the root
// password cannot be written, the installer gets 500 and the registration
// stays pending, so the next try (with room again) is answered. Before,
// the registration was consumed first and the machine had to be
// registered again by hand.
func TestNoAnswerIsLostToAFullOrReadOnlySecretsFolder(t *testing.T) {
	tests := map[string]struct {
		break_, mend func(t *testing.T, dir string)
	}{
		"a full folder": {
			break_: func(t *testing.T, dir string) {
				// Fill the tmpfs to the last block.
				f, err := os.Create(filepath.Join(dir, "filler"))
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				buf := make([]byte, 4096)
				for {
					if _, err := f.Write(buf); err != nil {
						break
					}
				}
			},
			mend: func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "filler")) },
		},
		"a read-only folder": {
			break_: func(t *testing.T, dir string) { netnstest.Run(t, "mount", "-o", "remount,ro", dir) },
			mend:   func(t *testing.T, dir string) { netnstest.Run(t, "mount", "-o", "remount,rw", dir) },
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e := newHandlerEnv(t, mustReg(t, "pve1", []string{"52:54:00:ba:5e:11"}, "sda"))
			// The secrets folder becomes a small tmpfs under the running
			// backend: the start-up check passed, the fault comes later.
			mountTmpfs(t, e.secrets, "256k")
			tc.break_(t, e.secrets)
			status, msg, _ := e.post(t, "", "application/json", body("9.2", "52:54:00:ba:5e:11"))
			if status != 500 {
				t.Fatalf("answer with a broken secrets folder = %d %q, want 500", status, msg)
			}
			if _, err := e.reg.Get(context.Background(), "pve1"); err != nil {
				t.Fatalf("the registration is no longer pending after the failed answer: %v", err)
			}
			tc.mend(t, e.secrets)
			if status, msg, _ := e.post(t, "", "application/json", body("9.2", "52:54:00:ba:5e:11")); status != 200 {
				t.Fatalf("the next try = %d %q, want the answer", status, msg)
			}
			if _, err := os.Stat(filepath.Join(e.secrets, "pve1.pw")); err != nil {
				t.Errorf("no secret after the answer: %v", err)
			}
		})
	}
}

// TestStartRefusesAnUnwritableSecretsFolder: a window that cannot write
// its secrets folder does not start (it would take registrations it
// cannot answer), and says which folder.
func TestStartRefusesAnUnwritableSecretsFolder(t *testing.T) {
	state := t.TempDir()
	secrets := filepath.Join(t.TempDir(), "secrets")
	mountTmpfs(t, secrets, "64k")
	netnstest.Run(t, "mount", "-o", "remount,ro", secrets)
	store, err := folder.OpenRegistrations(state, nil)
	if err != nil {
		t.Fatal(err)
	}
	sec, err := folder.OpenSecrets(secrets)
	if err != nil {
		t.Fatal(err)
	}
	b, err := regbackend.New(regbackend.Config{Store: store, Secrets: sec, StateDir: state, Events: folder.OpenEvents(folder.EventsPath(state), folder.EventsOptions{}),
		Recover: func(ctx context.Context) error { return folder.Recover(ctx, store, sec, nil) }})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(context.Background()); !errors.Is(err, regbackend.ErrNotWritable) || !strings.Contains(err.Error(), "secrets folder "+secrets) {
		t.Errorf("Start = %v, want ErrNotWritable naming the secrets folder", err)
	}
}

// TestUndeliveredAnswersCanBeRearmed: an answer taken but not seen
// delivered leaves its registration consumed and undelivered; it is
// re-armed back to pending, while a delivered one is not without force.
func TestUndeliveredAnswersCanBeRearmed(t *testing.T) {
	e := newHandlerEnv(t, mustReg(t, "lost", []string{"52:54:00:00:00:01"}, "sda"), mustReg(t, "kept", []string{"52:54:00:00:00:02"}, "sda"))
	ctx := context.Background()
	answerFor := func(mac string) func(error) {
		t.Helper()
		si := mustSysinfo(t, body("9.2", mac))
		res, err := claimed(e.b.Answer(ctx, answerRequest(si)))
		if err != nil {
			t.Fatal(err)
		}
		return res.Delivered
	}
	answerFor("52:54:00:00:00:01")(errors.New("connection reset by peer"))
	answerFor("52:54:00:00:00:02")(nil)
	st, err := regbackend.Status(ctx, e.reg, folder.OpenEvents(folder.EventsPath(e.state), folder.EventsOptions{}), nil)
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]string{}
	for _, n := range st {
		states[n.Name] = n.State
	}
	if states["lost"] != "undelivered" || states["kept"] != "consumed" {
		t.Fatalf("states %v, want lost undelivered and kept consumed", states)
	}
	if err := e.reg.Rearm(ctx, "kept", registry.RearmOptions{}); !errors.Is(err, registry.ErrDelivered) {
		t.Errorf("Rearm of a delivered answer = %v, want ErrDelivered", err)
	}
	if err := e.reg.Rearm(ctx, "lost", registry.RearmOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.reg.Get(ctx, "lost"); err != nil {
		t.Errorf("re-armed registration is not pending: %v", err)
	}
	if status, msg, _ := e.post(t, "", "application/json", body("9.2", "52:54:00:00:00:01")); status != 200 {
		t.Errorf("the re-armed machine's next try = %d %q, want its answer", status, msg)
	}
}

func mustSysinfo(t *testing.T, b []byte) *answer.SystemInfo {
	t.Helper()
	si, err := answer.ParseSystemInfo(b, "application/json")
	if err != nil {
		t.Fatal(err)
	}
	return si
}

func answerRequest(si *answer.SystemInfo) backend.AnswerRequest {
	v, _ := si.Version()
	return backend.AnswerRequest{Info: si, Version: v, ClientIP: "192.0.2.7", BaseURL: "http://192.0.2.1:8090"}
}
