package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/pxe/backend/regbackend"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

// TestCrashDuringABurstOfAnswers kills serve (SIGKILL) at a random point
// of 200 answer requests, each for a machine of its own, and checks that
// no answer is lost: every registration is pending (also one the kill
// caught between its consumption and placing its password: no answer
// left for it, and the next start re-arms it), or consumed with its
// answer written whole by the window (a client that got 200 finds its
// password in the secret file), or consumed and visibly undelivered,
// which `rearm` puts back to pending. No temporary file outlives the next start. Before,
// many registrations were left consumed with nothing delivered and
// nothing to say so.
func TestCrashDuringABurstOfAnswers(t *testing.T) {
	t.Parallel() // its own folders; serve on a free loopback port
	const machines = 200
	e := newProvisionerEnv(t)
	store, err := folder.OpenRegistrations(e.state, nil)
	if err != nil {
		t.Fatal(err)
	}
	mac := func(i int) string { return fmt.Sprintf("52:54:00:b5:%02x:%02x", i/256, i%256) }
	for i := range machines {
		r := registry.Registration{Name: fmt.Sprintf("burst%03d", i), MACs: []string{mac(i)}, BootDisk: answer.BootDisk{Kind: answer.BootDiskName, Value: "sda"}, Created: time.Now().UTC()}
		if _, err := store.Put(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 7))

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := e.cmd(ctx, "serve", "--http", "127.0.0.1:0", "--ttl", "1m", "--domain", "e2e.test")
	stdout, _ := c.StdoutPipe()
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	url := waitForURL(t, stdout)
	client := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DisableKeepAlives: true, MaxConnsPerHost: 64}}
	got := make([]string, machines) // the answer each machine received, if any
	killAt := 1 + rng.IntN(machines*3/4)
	answered := make(chan struct{}, machines)
	var wg sync.WaitGroup
	for i := range machines {
		wg.Go(func() {
			body := fmt.Sprintf(`{"product":{"product":"pve"},"iso":{"release":"9.2"},"network_interfaces":[{"link":"enp1s0","mac":%q}]}`, mac(i))
			resp, err := client.Post(url, "application/json", strings.NewReader(body))
			if err != nil {
				return
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err == nil && resp.StatusCode == 200 {
				got[i] = string(b)
				answered <- struct{}{}
			}
		})
	}
	// Kill it in the middle of the burst: after a random number of
	// answers (or 20 s, whichever first).
	timeout := time.After(20 * time.Second)
	for n := 0; n < killAt; n++ {
		select {
		case <-answered:
		case <-timeout:
			n = killAt
		}
	}
	c.Process.Signal(syscall.SIGKILL)
	c.Wait()
	wg.Wait()

	// A second start cleans up what the killed one left.
	url2, logs := e.serve(t)
	_ = url2
	_ = logs
	st, err := regbackend.Status(context.Background(), store, folder.OpenEvents(folder.EventsPath(e.state), folder.EventsOptions{}), nil)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	writtenNotRead := 0
	for _, n := range st {
		counts[n.State]++
		var i int
		fmt.Sscanf(n.Name, "burst%03d", &i)
		switch n.State {
		case backend.StatePending:
			if got[i] != "" {
				t.Errorf("%s: a client got its answer but the registration is pending again", n.Name)
			}
		case backend.StateConsumed:
			// Delivered means the window wrote and flushed the whole
			// answer; a kill right after can still cut the client's
			// read, which no server can see. The secret is there.
			if got[i] == "" {
				writtenNotRead++
				if _, err := os.Stat(filepath.Join(e.secrets, n.Name+".pw")); err != nil {
					t.Errorf("%s: consumed and delivered, but no secret: %v", n.Name, err)
				}
				continue
			}
			a, err := answer.Decode([]byte(got[i]), answer.Version92)
			pw, rerr := os.ReadFile(filepath.Join(e.secrets, n.Name+".pw"))
			if err != nil || rerr != nil || !answer.CheckPassword(a.Global.RootPasswordHashed, strings.TrimSpace(string(pw))) {
				t.Errorf("%s: the delivered answer's password is not in the secret file (%v, %v)", n.Name, err, rerr)
			}
		case backend.StateUndelivered:
			if _, err := os.Stat(filepath.Join(e.secrets, n.Name+".pw")); err != nil {
				t.Errorf("%s: undelivered without its secret: %v", n.Name, err)
			}
			e.run(t, "rearm", n.Name)
			if _, err := store.Get(context.Background(), n.Name); err != nil {
				t.Errorf("%s: rearm left it not pending: %v", n.Name, err)
			}
		default:
			t.Errorf("%s: state %s", n.Name, n.State)
		}
	}
	if counts[backend.StatePending]+counts[backend.StateConsumed]+counts[backend.StateUndelivered] != machines {
		t.Errorf("states %v, want %d registrations", counts, machines)
	}
	for _, dir := range []string{e.secrets, filepath.Join(e.state, regbackend.FirstBootDirName), filepath.Join(e.state, "registrations")} {
		ents, _ := os.ReadDir(dir)
		for _, ent := range ents {
			if bytes.HasPrefix([]byte(ent.Name()), []byte(".tmp-")) {
				t.Errorf("a temporary file outlived the restart: %s", filepath.Join(dir, ent.Name()))
			}
		}
	}
	t.Logf("killed after %d answers; then: %v (%d written but cut from the client by the kill)", killAt, counts, writtenNotRead)
}
