package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestQuickstartRuns(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), t.TempDir(), &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	for _, want := range []string{
		"demo-node-001 got private IP 192.168.0.1",
		"demo-node-003 got private IP 192.168.0.3",
		"zones now platform.cognition.knowledge, platform.interaction.observability (modified: true)",
		"k8s_labels:",
		"node metal-control-001@metal: machine 52:54:00:de:ad:01, private IP 192.168.0.1",
		"metal-control-001 pending, MACs 52:54:00:de:ad:01, boot disk 25414A800205",
		"POST /answer -> 200 OK",
		"fqdn = 'metal-control-001.demo.example.com'",
		"ID_SERIAL = '*25414A800205*'",
		"[first-boot]",
		"POST /answer -> 404 Not Found (no pending registration matches this machine)",
		// plasma-node list's own table (the quickstart prints through its
		// code).
		"PLATFORM  HOSTNAME       PUBLIC IP     PRIVATE IP   ZONES\ndemo      demo-node-001  203.0.113.10  192.168.0.1  platform.foundation.cluster.control\n",
		"metal     metal-control-001  -          192.168.0.1  platform.foundation.cluster.control  consumed\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
