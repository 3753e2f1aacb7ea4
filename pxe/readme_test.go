package pxe_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestREADMEEmbeddingCompiles builds the embedding snippet of docs/sdk.md
// ("Embedding the window") inside a function of this module, without
// writing into the source tree (go build -overlay), so the snippet stays
// true to the API. examples/embed-pxe runs the same shape for real in a
// network-namespace pair.
func TestREADMEEmbeddingCompiles(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		if os.Getenv("PLASMA_E2E") == "1" {
			t.Fatal("needs the go command")
		}
		t.Skip("needs the go command")
	}
	readme, err := os.ReadFile(filepath.Join("..", "docs", "sdk.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "## Embedding the window")
	_, block, ok2 := strings.Cut(section, "```go\n")
	snippet, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("docs/sdk.md has no Go block under \"## Embedding the window\"")
	}
	src := `package main

import (
	"context"
	"time"

	"github.com/plasmactl/plasma-node/pxe"
	"github.com/plasmactl/plasma-node/pxe/backend"
)

func embed(ctx context.Context, inv backend.Backend) error {
` + snippet + `}

func main() { _ = embed }
`
	dir := t.TempDir()
	file := filepath.Join(dir, "main.go")
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(filepath.Join("readmecheck", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	overlay, _ := json.Marshal(map[string]map[string]string{"Replace": {abs: file}})
	ov := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(ov, overlay, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-overlay", ov, "-o", filepath.Join(dir, "embed"), "./readmecheck")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("docs/sdk.md's snippet does not build: %v\n%s\n%s", err, out, src)
	}
}
