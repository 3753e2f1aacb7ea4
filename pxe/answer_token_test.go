package pxe

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/plasmactl/plasma-node/pxe/bootassets"
)

// TestWindowChecksTheStagedReleasesToken: the window reads the answer
// token prepare kept for the staged release (bootassets.AnswerToken) on
// each request: without the bearer 401 and nothing consumed, with it the
// answer.
func TestWindowChecksTheStagedReleasesToken(t *testing.T) {
	lab := newWindowLab(t)
	dir := filepath.Join(lab.state, bootassets.AnswerTokenDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "9.1-1"), []byte("np:s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sysinfo, err := os.ReadFile(filepath.Join("..", "answer", "testdata", "sysinfo", "pve-9.2-synthetic.json"))
	if err != nil {
		t.Fatal(err)
	}
	post := func(auth string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, lab.base+"/answer", bytes.NewReader(sysinfo))
		req.Header.Set("Content-Type", "application/json")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := post(""); code != http.StatusUnauthorized {
		t.Fatalf("without the bearer: %d %s", code, body)
	}
	if code, body := post("Bearer np:wrong"); code != http.StatusUnauthorized {
		t.Fatalf("with another token: %d %s", code, body)
	}
	if _, err := lab.reg.Get(t.Context(), "lab1"); err != nil {
		t.Fatalf("lab1 consumed by a refused request: %v", err)
	}
	if code, body := post("Bearer np:s3cret"); code != http.StatusOK {
		t.Fatalf("with the bearer: %d %s", code, body)
	}
}
