package netboot

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/plasmactl/plasma-node/pxe/bootassets"
)

// BenchmarkAssetDownload fetches a 64 MiB initrd over loopback HTTP.
func BenchmarkAssetDownload(b *testing.B) {
	state := b.TempDir()
	stageRelease(b, state, "9.1-1")
	big := make([]byte, 64<<20)
	if err := os.WriteFile(filepath.Join(state, "assets", "9.1-1", bootassets.AssetNetbootInitrd), big, 0o644); err != nil {
		b.Fatal(err)
	}
	r, err := newRegistryTB(b, state)
	if err != nil {
		b.Fatal(err)
	}
	h, err := New(Config{Backend: testBackend(b, state, r, nil), AssetsDir: filepath.Join(state, "assets"), BaseURL: testBase})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	base := srv.URL
	b.SetBytes(int64(len(big)))
	for b.Loop() {
		resp, err := http.Get(base + "/assets/9.1-1/initrd?mac=" + testMAC1)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if n != int64(len(big)) {
			b.Fatalf("got %d bytes", n)
		}
	}
}

func BenchmarkIPXEScript(b *testing.B) {
	s := BootScript{Node: "pve1", BaseURL: testBase, Release: "9.1-1", MAC: testMAC1}
	for b.Loop() {
		IPXEScript(s)
	}
}
