package e2e

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestTwoHosts runs two provisioner hosts of one site in the two-host lab
// (e2e/twohost_lab_test.go): both serve windows (proxy-DHCP, TFTP, HTTP)
// on one segment beside the site's dnsmasq, sharing one PostgreSQL store;
// each host runs serve, and in the last part a daemon following the
// site's window. Its parts share the lab, in order; a part that kills a
// host starts it again for the next.
func TestTwoHosts(t *testing.T) {
	t.Parallel()
	media := netbootPrereqs(t)
	l := newTwoHostLab(t, 20)
	for _, h := range []*provHost{l.a, l.b} {
		h.prepare(t, media)
	}
	l.ensureServing(t)
	t.Run("ARegistrationOnOneHostIsAnsweredByTheOther", func(t *testing.T) {
		timed(t, func() { l.crossHost(t) })
	})
	t.Run("RacingAnswersAcrossBothHostsConsumeEachOnce", func(t *testing.T) {
		timed(t, func() { l.racingAnswers(t) })
	})
	l.ensureServing(t)
	t.Run("AStoreOutageIs503AndConsumesNothing", func(t *testing.T) {
		timed(t, func() { l.outage(t) })
	})
	l.ensureServing(t)
	t.Run("FailoverStorm", func(t *testing.T) {
		timed(t, func() { l.failoverStorm(t) })
	})
	l.ensureServing(t)
	t.Run("FailoverQEMU", func(t *testing.T) {
		timed(t, func() { l.failoverQEMU(t) })
	})
}

// timed runs f and logs how long it took.
func timed(t *testing.T, f func()) {
	t.Helper()
	start := time.Now()
	defer func() { t.Logf("%s took %s", t.Name(), time.Since(start).Round(100*time.Millisecond)) }()
	f()
}

// ensureServing starts the window of a host that does not serve; t is the
// whole test's, whose end stops it.
func (l *twoHostLab) ensureServing(t *testing.T) {
	t.Helper()
	for _, h := range []*provHost{l.a, l.b} {
		if h.done == nil {
			h.serve(t)
			continue
		}
		select {
		case <-h.done:
			h.serve(t)
		default:
		}
	}
}

// crossHost: a registration made by a local command on one host is
// answered by the other host's window, once: the first host then refuses
// it (404), and both hosts list it consumed.
func (l *twoHostLab) crossHost(t *testing.T) {
	for _, c := range []struct {
		name, mac string
		on, by    *provHost
	}{
		{"xa1", "52:54:00:20:01:01", l.a, l.b},
		{"xb1", "52:54:00:20:01:02", l.b, l.a},
	} {
		c.on.np(t, "register", c.name, "--mac", c.mac, "--boot-disk", "nvme0n1")
		body := sysInfo(t, c.mac)
		code, ans, err := c.by.postAnswer(t, l.subnet+".200", body)
		if err != nil || code != 200 || !strings.Contains(ans, c.name+".e2e.test") {
			t.Errorf("%s registered on host %s, answer from host %s: %d %v\n%s", c.name, c.on.name, c.by.name, code, err, ans)
		}
		if code, _, err := c.on.postAnswer(t, l.subnet+".201", body); err != nil || code != 404 {
			t.Errorf("%s answered by host %s, then asked of host %s: %d %v; want 404", c.name, c.by.name, c.on.name, code, err)
		}
		for _, h := range []*provHost{l.a, l.b} {
			if got := h.list(t)[c.name]; got != "consumed" {
				t.Errorf("%s on host %s: %q; want consumed", c.name, h.name, got)
			}
		}
	}
}

// racingAnswers: 1 000 answer POSTs at once for 10 registrations (made on
// both hosts), 100 each, half to each host, from 50 source addresses:
// exactly 10 answers, one per registration, each naming its machine,
// and 990 refusals (404: nothing pending for the machine), and the store
// lists the 10 consumed.
func (l *twoHostLab) racingAnswers(t *testing.T) {
	const regs, posts, sources = 10, 1000, 50
	mac := func(i int) string { return fmt.Sprintf("52:54:00:20:02:%02x", i) }
	for i := range regs {
		h := []*provHost{l.a, l.b}[i%2]
		h.np(t, "register", fmt.Sprintf("race%02d", i), "--mac", mac(i), "--boot-disk", "nvme0n1")
	}
	bodies := make([][]byte, regs)
	for i := range regs {
		bodies[i] = sysInfo(t, mac(i))
	}
	type result struct {
		code int
		body string
		err  error
	}
	results := make([]result, posts)
	tokens := map[*provHost]string{l.a: l.a.token(t), l.b: l.b.token(t)}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for k := range posts {
		wg.Go(func() {
			h := []*provHost{l.a, l.b}[(k/regs)%2]
			src := fmt.Sprintf("%s.%d", l.subnet, 200+k%sources)
			<-start
			code, body, err := postFrom(src, h.url("/answer"), tokens[h], bodies[k%regs])
			results[k] = result{code, body, err}
		})
	}
	began := time.Now()
	close(start)
	wg.Wait()
	t.Logf("%d POSTs across both hosts in %s", posts, time.Since(began).Round(time.Millisecond))
	codes := map[int]int{}
	answered := make([]int, regs)
	byHost := map[string]int{}
	for k, r := range results {
		if r.err != nil {
			t.Errorf("POST %d: %v", k, r.err)
			continue
		}
		codes[r.code]++
		if r.code == 200 {
			answered[k%regs]++
			byHost[[]string{"A", "B"}[(k/regs)%2]]++
			if name := fmt.Sprintf("race%02d.e2e.test", k%regs); !strings.Contains(r.body, name) {
				t.Errorf("POST %d for race%02d answered without %s:\n%s", k, k%regs, name, r.body)
			}
		}
	}
	if codes[200] != regs || codes[404] != posts-regs {
		t.Errorf("statuses %v; want %d × 200 and %d × 404", codes, regs, posts-regs)
	}
	for i, n := range answered {
		if n != 1 {
			t.Errorf("race%02d answered %d times; want once", i, n)
		}
	}
	t.Logf("answers given by host: %v", byHost)
	states := l.b.list(t)
	for i := range regs {
		if got := states[fmt.Sprintf("race%02d", i)]; got != "consumed" {
			t.Errorf("race%02d: %q; want consumed", i, got)
		}
	}
}

// outage: with PostgreSQL stopped mid-window, both hosts answer the
// installer's POST with 503 naming no secret and consume nothing, and
// stop offering proxy-DHCP to the machine; once it
// runs again (no host restarted), the registration is still pending and
// the machine's next boot (emulated: proxy-DHCP, TFTP, script, kernel,
// initrd, answer) installs.
func (l *twoHostLab) outage(t *testing.T) {
	const name, mac = "out1", "52:54:00:20:03:01"
	l.a.np(t, "register", name, "--mac", mac, "--boot-disk", "nvme0n1")
	body := sysInfo(t, mac)
	l.pg.Stop(t)
	stopped := true
	defer func() {
		if stopped {
			l.pg.Restart(t)
		}
	}()
	for i, h := range []*provHost{l.a, l.b, l.a, l.b} {
		code, ans, err := h.postAnswer(t, fmt.Sprintf("%s.%d", l.subnet, 210+i), body)
		if err != nil || code != 503 {
			t.Errorf("POST to host %s with the store stopped: %d %v %q; want 503", h.name, code, err, ans)
		}
		if strings.Contains(ans, "pgtest-s3cret") {
			t.Errorf("host %s's 503 holds the store's password: %q", h.name, ans)
		}
	}
	if _, err := l.a.try("list"); err == nil {
		t.Errorf("list on host A with the store stopped: no error")
	}
	// Offers stop too, once the hosts' reads of the registrations (every
	// 2 s) have failed: the machine's boot gets no proxy offer.
	time.Sleep(3 * time.Second)
	dark, err := l.startStorm(t, stormConfig{MACs: []string{mac}, Attempts: 1, SysInfo: sysInfo(t, "52:54:00:BA:5E:11")})
	if err != nil {
		t.Fatal(err)
	}
	if s := l.followStorm(t, dark); len(s.installed) != 0 || !strings.Contains(s.failedLast[0], "no proxy offer") {
		t.Errorf("a boot with the store stopped: installed %v, failure %q; want no proxy offer", s.installed, s.failedLast[0])
	}
	l.pg.Restart(t)
	stopped = false
	if got := l.b.list(t)[name]; got != "pending" {
		t.Fatalf("%s after the outage: %q; want pending (nothing consumed)", name, got)
	}
	run, err := l.startStorm(t, stormConfig{MACs: []string{mac}, Attempts: 6, SysInfo: sysInfo(t, "52:54:00:BA:5E:11")})
	if err != nil {
		t.Fatal(err)
	}
	installed := ""
	for e := range run.events {
		t.Logf("after the outage: machine %s: %s %s %s", mac, e.Event, e.Host, e.Err)
		if e.Event == "installed" {
			installed = e.Host
		}
	}
	if installed == "" {
		t.Errorf("the boot after the outage did not install; storm stderr:\n%s", run.stderr.String())
	}
	if got := l.a.list(t)[name]; got != "consumed" {
		t.Errorf("%s after its boot: %q; want consumed", name, got)
	}
}
