package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"time"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe"
	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/window"
)

// machine is one inventory entry.
type machine struct{ host, disk string }

// inventory is the site's own list of machines, and the window's
// backend: it lets the machines it knows boot and answers each once.
type inventory struct {
	domain string
	mu     sync.Mutex
	known  map[string]machine // by MAC
	served map[string]bool
}

var _ backend.Backend = (*inventory)(nil)

// lookup returns the machine with this MAC and whether it was answered.
func (inv *inventory) lookup(mac string) (machine, bool, bool) {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	m, ok := inv.known[mac]
	return m, ok, inv.served[mac]
}

// Allow offers a boot file to the machines not yet answered.
func (inv *inventory) Allow(hw net.HardwareAddr) bool {
	_, ok, served := inv.lookup(hw.String())
	return ok && !served
}

// Boot installs a known machine not yet answered; others boot their disk.
func (inv *inventory) Boot(_ context.Context, mac string) (backend.Boot, error) {
	m, ok, served := inv.lookup(mac)
	if !ok || served {
		return backend.Boot{Reason: "not in the inventory, or installed"}, nil
	}
	return backend.Boot{Node: m.host, Reason: "in the inventory"}, nil
}

// Answer is the site's own answer logic.
func (inv *inventory) Answer(_ context.Context, req backend.AnswerRequest) (*backend.Answer, error) {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	for _, mac := range req.Info.MACs() {
		m, ok := inv.known[mac]
		if !ok {
			continue
		}
		if inv.served[mac] {
			return nil, fmt.Errorf("%w: %s was answered already", backend.ErrNoAnswer, m.host)
		}
		inv.served[mac] = true
		// A password per node, kept by the site (here: thrown away; the
		// node is reached with SSH keys), sent only as a hash (8.3+).
		hash, err := answer.HashPassword(rand.Text())
		if err != nil {
			return nil, err
		}
		return &backend.Answer{Node: m.host, Detail: "by MAC " + mac, Answer: &answer.Answer{
			Global: answer.Global{
				Keyboard: "en-us", Country: "de", Timezone: "Europe/Berlin", Mailto: "ops@" + inv.domain,
				FQDN:               answer.FQDN{Name: m.host + "." + inv.domain},
				RootPasswordHashed: hash,
			},
			Network:   answer.Network{Source: answer.NetworkFromDHCP},
			DiskSetup: answer.DiskSetup{Filesystem: answer.FilesystemExt4, DiskList: []string{m.disk}},
		}}, nil
	}
	return nil, fmt.Errorf("%w: MACs %s are not in the inventory", backend.ErrNoAnswer, strings.Join(req.Info.MACs(), ", "))
}

// options are the example's flags.
type options struct {
	http, dhcpInterface, stateDir string
	ttl                           time.Duration
	serve                         bool
}

func main() {
	var o options
	flag.StringVar(&o.http, "http", "127.0.0.1:0", "listen address")
	flag.DurationVar(&o.ttl, "ttl", time.Minute, "how long the window stays open")
	flag.StringVar(&o.dhcpInterface, "dhcp-interface", "", "answer PXE clients on this interface with proxy-DHCP and TFTP")
	flag.StringVar(&o.stateDir, "state-dir", "", "folder of the boot assets and the TFTP root (needed with -dhcp-interface)")
	flag.BoolVar(&o.serve, "serve", false, "keep serving real machines instead of playing the demo")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "embed-pxe:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options, out io.Writer) error {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	inv := &inventory{domain: "lab.example", served: map[string]bool{}, known: map[string]machine{
		"52:54:00:ba:5e:11": {"rack1-u07", "nvme0n1"},
		"52:54:00:ba:5e:12": {"rack1-u08", "sda"},
	}}
	opened := make(chan string, 1)
	// The whole window: proxy-DHCP and TFTP with an interface, and HTTP
	// with the boot script, assets and answers, all asking inv.
	srv, err := pxe.New(pxe.Config{
		Backend: inv, StateDir: o.stateDir, DHCPInterface: o.dhcpInterface, HTTPAddr: o.http, TTL: o.ttl, Logger: log,
		Routes: map[string]http.Handler{"GET /healthz": http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprintln(w, "ok")
		})},
		OnOpen: func(w *window.Record) { opened <- w.URL },
	})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	var url string
	select {
	case url = <-opened:
	case err := <-done:
		return err
	}
	fmt.Fprintf(out, "window open at %s for %s\n", url, o.ttl)
	if !o.serve {
		for _, mac := range []string{"52:54:00:BA:5E:11", "52:54:00:ba:5e:11", "aa:bb:cc:00:00:01"} {
			if err := post(ctx, out, url, mac); err != nil {
				return err
			}
		}
		cancel()
	}
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, pxe.ErrWindowExpired) {
		return err
	}
	return nil
}

// post plays a Proxmox VE 9.2 installer with one NIC.
func post(ctx context.Context, out io.Writer, url, mac string) error {
	body := fmt.Sprintf(`{"product":{"product":"pve"},"iso":{"release":"9.2"},"network_interfaces":[{"link":"enp1s0","mac":%q}]}`, mac)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	fmt.Fprintf(out, "installer %s: POST /answer -> %s\n%s", mac, resp.Status, b)
	return err
}
