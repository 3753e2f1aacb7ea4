package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

func TestEmbedPXERuns(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out bytes.Buffer
	if err := run(ctx, "127.0.0.1:0", time.Minute, false, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	got := out.String()
	for _, want := range []string{
		"installer 52:54:00:BA:5E:11: POST /answer -> 200 OK",
		"fqdn = 'rack1-u07.lab.example'",
		"disk-list = ['nvme0n1']",
		"installer 52:54:00:ba:5e:11: POST /answer -> 404 Not Found\nno answer for this machine: rack1-u07 was answered already",
		"installer aa:bb:cc:00:00:01: POST /answer -> 404 Not Found\nno answer for this machine: MACs aa:bb:cc:00:00:01 are not in the inventory",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}
