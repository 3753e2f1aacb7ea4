package regbackend_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
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

// AnswerOnImage says which nodes read their answer from an answer image:
// a virtual-media registration whose media answer is partition; the
// answer it gets is built as an iso node's, and its Claim consumes it;
// consumed, it still reads from its answer image (a BMC may read the CD
// after the answer image).
func TestAnswerOnImage(t *testing.T) {
	bmc := &registry.BMC{URL: "redfish://10.0.0.5", User: "root"}
	disk := answer.BootDisk{Kind: answer.BootDiskName, Value: "sda"}
	reg := func(name, mac string, a registry.MediaAnswer) registry.Registration {
		return registry.Registration{Name: name, MACs: []string{mac}, BootDisk: disk, BMC: bmc, BootMethod: registry.BootVirtualMedia, MediaAnswer: a}
	}
	e := newHandlerEnv(t, reg("part1", "52:54:00:00:00:41", registry.MediaAnswerPartition), reg("iso1", "52:54:00:00:00:42", registry.MediaAnswerISO),
		reg("web1", "52:54:00:00:00:43", registry.MediaAnswerHTTP), registry.Registration{Name: "pxe1", MACs: []string{"52:54:00:00:00:44"}, BootDisk: disk})
	ctx := context.Background()
	got := map[string]bool{}
	for _, n := range []string{"part1", "iso1", "web1", "pxe1", "nobody"} {
		on, err := e.b.AnswerOnImage(ctx, n)
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		got[n] = on
	}
	if diff := cmp.Diff(map[string]bool{"part1": true, "iso1": false, "web1": false, "pxe1": false, "nobody": false}, got); diff != "" {
		t.Errorf("AnswerOnImage (-want +got):\n%s", diff)
	}
	res, err := e.b.MediaAnswer(ctx, "part1", backend.AnswerRequest{Version: answer.Version92, ClientIP: "10.0.0.5", BaseURL: "http://192.0.2.1:8090"})
	if err != nil || res == nil || res.Claim == nil || res.Answer.Global.FQDN.Name != "part1.lab.example" {
		t.Fatalf("MediaAnswer(part1) = %+v, %v", res, err)
	}
	if err := res.Claim(ctx); err != nil {
		t.Fatal(err)
	}
	if on, err := e.b.AnswerOnImage(ctx, "part1"); !on || err != nil {
		t.Errorf("a consumed node: %t, %v; want its answer image still (its BMC may read the CD after it)", on, err)
	}
}
