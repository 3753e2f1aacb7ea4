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
)

// machine is one inventory entry.
type machine struct{ host, disk string }

// inventory answers the machines it knows, each once.
type inventory struct {
	domain string
	mu     sync.Mutex
	known  map[string]machine // by MAC
	served map[string]bool
}

// answer is the pxe.AnswerFunc: the site's own logic.
func (inv *inventory) answer(_ context.Context, si *answer.SystemInfo) (*answer.Answer, error) {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	for _, mac := range si.MACs() {
		m, ok := inv.known[mac]
		if !ok {
			continue
		}
		if inv.served[mac] {
			return nil, fmt.Errorf("%w: %s was answered already", pxe.ErrNoAnswer, m.host)
		}
		inv.served[mac] = true
		// A password per node, kept by the site (here: thrown away; the
		// node is reached with SSH keys), sent only as a hash (8.3+).
		hash, err := answer.HashPassword(rand.Text())
		if err != nil {
			return nil, err
		}
		return &answer.Answer{
			Global: answer.Global{
				Keyboard: "en-us", Country: "de", Timezone: "Europe/Berlin", Mailto: "ops@" + inv.domain,
				FQDN:               answer.FQDN{Name: m.host + "." + inv.domain},
				RootPasswordHashed: hash,
			},
			Network:   answer.Network{Source: answer.NetworkFromDHCP},
			DiskSetup: answer.DiskSetup{Filesystem: answer.FilesystemExt4, DiskList: []string{m.disk}},
		}, nil
	}
	return nil, fmt.Errorf("%w: MACs %s are not in the inventory", pxe.ErrNoAnswer, strings.Join(si.MACs(), ", "))
}

func main() {
	addr := flag.String("http", "127.0.0.1:0", "listen address")
	ttl := flag.Duration("ttl", time.Minute, "how long the window stays open")
	serve := flag.Bool("serve", false, "keep serving real installers instead of playing the demo")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *addr, *ttl, *serve, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "embed-pxe:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, addr string, ttl time.Duration, serve bool, out io.Writer) error {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	inv := &inventory{domain: "lab.example", served: map[string]bool{}, known: map[string]machine{
		"52:54:00:ba:5e:11": {"rack1-u07", "nvme0n1"},
		"52:54:00:ba:5e:12": {"rack1-u08", "sda"},
	}}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv, err := pxe.New(pxe.Config{Listener: ln, TTL: ttl, Logger: log, Routes: map[string]http.Handler{
		"/answer": pxe.AnswerHandler(inv.answer, log),
		"GET /healthz": http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprintln(w, "ok")
		}),
	}})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	<-srv.Ready()
	url := "http://" + srv.Addr().String() + "/answer"
	fmt.Fprintf(out, "window open at %s for %s\n", url, ttl)
	if !serve {
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
