package registry

import (
	"context"
	"net"
	"testing"
	"time"
)

func TestBackendAllow(t *testing.T) {
	state := t.TempDir()
	reg, err := Open(state, nil)
	if err != nil {
		t.Fatal(err)
	}
	sec, err := OpenSecretStore(t.TempDir() + "/secrets")
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewBackend(BackendConfig{Store: reg, Secrets: sec, StateDir: state, AllowRefresh: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	known, _ := net.ParseMAC("52:54:00:00:00:01")
	stranger, _ := net.ParseMAC("52:54:00:00:00:99")
	put := func(name string, macs ...string) {
		t.Helper()
		if _, err := reg.Put(ctx, Registration{Name: name, MACs: macs, BootDisk: BootDisk{Kind: BootDiskName, Value: "sda"}}); err != nil {
			t.Fatal(err)
		}
	}
	allow := b.Allow
	if allow(known) {
		t.Error("with nothing registered a MAC was admitted")
	}
	put("a", "52:54:00:00:00:01")
	if !allow(known) || allow(stranger) {
		t.Errorf("pinned registration: known %v, stranger %v; want true, false", allow(known), allow(stranger))
	}
	put("b")
	if !allow(stranger) {
		t.Error("a registration that pins nothing should admit any PXE client")
	}
	posted, _ := net.ParseMAC("52:54:00:00:00:42")
	if _, err := reg.Consume(ctx, "b", ConsumeRecord{MACs: []string{"52:54:00:00:00:42"}}); err != nil {
		t.Fatal(err)
	}
	if allow(stranger) {
		t.Error("a consumed registration still admits strangers")
	}
	if !allow(posted) {
		t.Error("the MAC a consumed registration's installer posted is not admitted (its second boot must reach the exit script)")
	}
	if _, err := reg.Consume(ctx, "a", ConsumeRecord{}); err != nil {
		t.Fatal(err)
	}
	if !allow(known) {
		t.Error("the MAC a consumed registration pins is not admitted (its second boot must reach the exit script)")
	}
}
