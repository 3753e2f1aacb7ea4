package netboot

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/pxe/backend"
)

// TestStatusPageShowsTheBootMethod: a node whose registration names its
// boot method shows it (with the media answer of virtual media); one
// that names none shows no row.
func TestStatusPageShowsTheBootMethod(t *testing.T) {
	at := time.Date(2026, 12, 6, 6, 0, 0, 0, time.UTC)
	h, err := New(Config{Backend: inventoryOf{
		{Name: "vm1", State: backend.StatePending, Created: at, BootMethod: "virtual-media", MediaAnswer: "iso"},
		{Name: "pxe1", State: backend.StatePending, Created: at},
	}, BaseURL: testBase})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	page := string(b)
	if want := `<td data-boot-method="virtual-media">virtual-media, answer iso</td>`; !strings.Contains(page, want) {
		t.Errorf("page lacks %q", want)
	}
	if n := strings.Count(page, "data-boot-method"); n != 1 {
		t.Errorf("%d boot method rows; want 1 (the node naming none shows none)", n)
	}
}
