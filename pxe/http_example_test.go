package pxe_test

import (
	"github.com/plasmactl/plasma-node/answer/registry"

	"context"
	"log"
	"net/http"
	"time"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe"
)

// A provisioning window that network-boots registered machines and
// answers their installers, with metrics and a status page.
func ExampleNew() {
	state := "/var/lib/plasma-node"
	reg, err := registry.Open(state, nil)
	if err != nil {
		log.Fatal(err)
	}
	sec, err := registry.OpenSecretStore(state + "/secrets")
	if err != nil {
		log.Fatal(err)
	}
	boot, err := pxe.New(pxe.Config{
		Registry: reg, StateDir: state, BaseURL: "http://10.77.0.2:8090",
	})
	if err != nil {
		log.Fatal(err)
	}
	ans, err := registry.NewHandler(answer.HandlerConfig{Registry: reg, Secrets: sec, StateDir: state, BaseURL: "http://10.77.0.2:8090"})
	if err != nil {
		log.Fatal(err)
	}
	defer ans.Close()
	routes := map[string]http.Handler{}
	for _, p := range boot.Patterns() {
		routes[p] = boot
	}
	for _, p := range ans.Patterns() {
		routes[p] = boot.Metrics().CountAnswers(ans)
	}
	srv, err := pxe.New(pxe.Config{Routes: routes, TTL: time.Hour})
	if err != nil {
		log.Fatal(err)
	}
	boot.Metrics().SetWindow(true, time.Now().Add(time.Hour))
	defer boot.Metrics().SetWindow(false, time.Time{})
	log.Println(srv.Serve(context.Background()))
}
