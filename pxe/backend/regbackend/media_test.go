package regbackend_test

import (
	"context"
	"errors"
	"testing"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// MediaAnswer answers a virtual-media node by name, changing nothing
// until its Claim, which consumes the registration once, recording the
// fetcher's address and leaving it undelivered (its installer reports
// installed, or it is re-armed). A node that fetches its answer (media
// answer http) gets none; one that boots over the network, or is not
// pending, is refused.
func TestMediaAnswerConsumesOnClaim(t *testing.T) {
	bmc := &registry.BMC{URL: "redfish://10.0.0.5", User: "root"}
	disk := answer.BootDisk{Kind: answer.BootDiskName, Value: "sda"}
	iso := registry.Registration{Name: "vm1", MACs: []string{"52:54:00:00:00:31"}, BootDisk: disk, BMC: bmc, BootMethod: registry.BootVirtualMedia}
	web := registry.Registration{Name: "vm2", MACs: []string{"52:54:00:00:00:32"}, BootDisk: disk, BMC: bmc, BootMethod: registry.BootVirtualMedia, MediaAnswer: registry.MediaAnswerHTTP}
	pxe := registry.Registration{Name: "pxe1", MACs: []string{"52:54:00:00:00:33"}, BootDisk: disk}
	e := newHandlerEnv(t, iso, web, pxe)
	ctx := context.Background()
	req := backend.AnswerRequest{Version: answer.Version92, ClientIP: "10.0.0.5", BaseURL: "http://192.0.2.1:8090"}
	res, err := e.b.MediaAnswer(ctx, "vm1", req)
	if err != nil || res == nil || res.Answer.Global.FQDN.Name != "vm1.lab.example" || res.Claim == nil {
		t.Fatalf("MediaAnswer(vm1) = %+v, %v", res, err)
	}
	if _, err := e.reg.Get(ctx, "vm1"); err != nil {
		t.Fatalf("building the answer consumed it: %v", err)
	}
	if err := res.Claim(ctx); err != nil {
		t.Fatal(err)
	}
	consumed, _ := e.reg.Consumed(ctx)
	if len(consumed) != 1 || consumed[0].Consumed.ClientIP != "10.0.0.5" || !consumed[0].Consumed.Undelivered {
		t.Errorf("consumed: %+v", consumed)
	}
	again, err := e.b.MediaAnswer(ctx, "vm1", req)
	if !errors.Is(err, backend.ErrNoAnswer) {
		t.Errorf("a consumed node: %+v, %v", again, err)
	}
	if err := res.Claim(ctx); !errors.Is(err, backend.ErrNoAnswer) {
		t.Errorf("a second claim: %v", err)
	}
	if res, err := e.b.MediaAnswer(ctx, "vm2", req); res != nil || err != nil {
		t.Errorf("a node that fetches its answer: %+v, %v", res, err)
	}
	if _, err := e.b.MediaAnswer(ctx, "pxe1", req); !errors.Is(err, backend.ErrNoAnswer) {
		t.Errorf("a network-boot node: %v", err)
	}
}
