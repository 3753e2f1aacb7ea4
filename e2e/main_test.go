package e2e

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// bin holds the binaries TestMain builds.
var bin string

func TestMain(m *testing.M) {
	if w := os.Getenv("PN_E2E_CLIENT"); w != "" {
		d, _ := time.ParseDuration(w)
		json.NewEncoder(os.Stdout).Encode(pxeClient(d))
		os.Exit(0)
	}
	if n := os.Getenv("PN_E2E_TFTP_FLOOD"); n != "" {
		count, _ := strconv.Atoi(n)
		fmt.Println(tftpFlood(count))
		os.Exit(0)
	}
	if port := os.Getenv("PN_E2E_V6FLOOD"); port != "" {
		os.Exit(runV6Flood(port))
	}
	if c := os.Getenv("PN_E2E_STORM"); c != "" {
		os.Exit(runStorm(c))
	}
	if u := os.Getenv("PN_E2E_GET"); u != "" {
		os.Exit(httpGet(u))
	}
	if c := os.Getenv("PN_E2E_PROBE"); c != "" {
		var cfg probeConfig
		if err := json.Unmarshal([]byte(c), &cfg); err != nil {
			fmt.Fprintln(os.Stderr, "PN_E2E_PROBE:", err)
			os.Exit(1)
		}
		json.NewEncoder(os.Stdout).Encode(runProber(cfg))
		os.Exit(0)
	}
	// Four tests at once, not GOMAXPROCS (2 here): the tofu flows
	// (t.Parallel) spend most of their time waiting on the plugins' polling
	// delays (OVH's order and termination waits are 10 s and 1 minute),
	// and a QEMU test may wait for a qemuSlots slot; the other places run
	// tests beside the two machines instead of idling a core.
	// An explicit -parallel wins.
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		flag.Set("test.parallel", "4")
	}
	dir, err := os.MkdirTemp("", "plasma-node-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = dir
	for _, name := range []string{"plasma-node", "node-provisioner"} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, name), "../cmd/"+name)
		// Static, as prepare --discovery needs node-provisioner to be
		// (it becomes the discovery initrd's /init).
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "build", name+":", err)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
