package providers_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/providers/builtin"
	"github.com/plasmactl/plasma-node/providers/manual"
	"github.com/plasmactl/plasma-node/tofu"
)

func ExampleSet_Get() {
	set := builtin.Set()
	p, err := set.Get("hetzner")
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Requirement().Source, p.ValidateServerID("4711") == nil)
	_, err = set.Get("gcp")
	fmt.Println(errors.Is(err, providers.ErrUnknown))
	fmt.Println(err)
	// Output:
	// hetznercloud/hcloud true
	// true
	// provider "gcp": unknown provider (known: aws, hetzner, manual, ovh, pxe, scaleway)
}

func TestSlots(t *testing.T) {
	plat := &nodes.Platform{Name: "p"}
	web := func(n int) map[string]nodes.Pool { return map[string]nodes.Pool{"web": {Machine: "m", Count: n}} }
	tests := map[string]struct {
		in      providers.Input
		want    []string // hostname/resource/server id
		wantErr error
	}{
		"fresh servers are numbered from 001": {in: providers.Input{Platform: plat, Pools: web(2)},
			want: []string{"p-web-001 p_web_001 ", "p-web-002 p_web_002 "}},
		"existing servers keep their slots and fresh ones fill the gaps": {in: providers.Input{Platform: plat, Pools: web(3),
			Existing: []providers.Existing{{Pool: "web", Index: 1, ServerID: "9"}}},
			want: []string{"p-web-001 p_web_001 ", "p-web-002 p_web_002 9", "p-web-003 p_web_003 "}},
		"a lowered count leaves the highest slots out": {in: providers.Input{Platform: plat, Pools: web(1),
			Existing: []providers.Existing{{Pool: "web", Index: 0, ServerID: "1"}, {Pool: "web", Index: 1, ServerID: "2"}}},
			want: []string{"p-web-001 p_web_001 1"}},
		"import only adopts every server and creates none": {in: providers.Input{Platform: plat, Pools: web(5), ImportOnly: true,
			Existing: []providers.Existing{{Pool: "web", Index: 0, Hostname: "friendly", ServerID: "1"}}},
			want: []string{"friendly p_web_001 1"}},
		"an unknown pool is refused": {in: providers.Input{Platform: plat, Pools: web(1),
			Existing: []providers.Existing{{Pool: "db", ServerID: "1"}}}, wantErr: providers.ErrInvalidInput},
		"a slot taken twice is refused": {in: providers.Input{Platform: plat, Pools: web(2),
			Existing: []providers.Existing{{Pool: "web", ServerID: "1"}, {Pool: "web", ServerID: "2"}}}, wantErr: providers.ErrInvalidInput},
		"a server id adopted twice is refused": {in: providers.Input{Platform: plat, Pools: web(2),
			Existing: []providers.Existing{{Pool: "web", ServerID: "1"}, {Pool: "web", Index: 1, ServerID: "1"}}}, wantErr: providers.ErrInvalidInput},
		"no platform is refused":          {in: providers.Input{Pools: web(1)}, wantErr: providers.ErrInvalidInput},
		"a pool name with '_' is refused": {in: providers.Input{Platform: plat, Pools: map[string]nodes.Pool{"a_b": {Count: 1, Machine: "m"}}}, wantErr: providers.ErrInvalidInput},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			slots, err := providers.Slots(tc.in)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			var got []string
			for _, s := range slots {
				got = append(got, s.Hostname+" "+s.Resource+" "+s.ServerID)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("slots (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResolveCredentials(t *testing.T) {
	const secret = "s3cr3t-value"
	creds := []providers.Credential{{Env: "A_TOKEN", Field: "infrastructure.api.token", Value: secret}}
	tests := map[string]struct {
		env     map[string]string
		creds   []providers.Credential
		want    map[string]string
		wantErr error
	}{
		"the environment comes first":             {env: map[string]string{"A_TOKEN": "env"}, creds: creds, want: map[string]string{"A_TOKEN": "env"}},
		"platform.yaml is the fallback":           {creds: creds, want: map[string]string{"A_TOKEN": secret}},
		"a keyring reference is refused":          {creds: []providers.Credential{{Env: "A_TOKEN", Value: "{{ .keyring.x }}"}}, wantErr: providers.ErrKeyringRef},
		"a missing credential names its variable": {creds: []providers.Credential{{Env: "A_TOKEN"}}, wantErr: providers.ErrNoCredentials},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := providers.ResolveCredentials("x", func(k string) string { return tc.env[k] }, tc.creds)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if err != nil {
				if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "keyring.x") {
					t.Errorf("error %q shows a value", err)
				}
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeServers(t *testing.T) {
	tests := map[string]struct {
		js      string
		want    []providers.Server
		wantErr error
	}{
		"servers are sorted and nulls are empty": {js: `{"b":{"server_id":"2","public_ip":null},"a":{"hostname":"a","server_id":"1","public_ip":"203.0.113.1"}}`,
			want: []providers.Server{{Hostname: "a", ServerID: "1", PublicIP: "203.0.113.1"}, {Hostname: "b", ServerID: "2"}}},
		"a server without id is refused": {js: `{"a":{"server_id":""}}`, wantErr: providers.ErrBadOutput},
		"a list is refused":              {js: `[1]`, wantErr: providers.ErrBadOutput},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := providers.DecodeServers(map[string]tofu.OutputValue{providers.OutputName: {Value: json.RawMessage(tc.js)}})
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("servers (-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzDecodeServers(f *testing.F) {
	f.Add(`{"a":{"server_id":"1"}}`)
	f.Add(`null`)
	f.Add(`{"a":{"server_id":7}}`)
	f.Fuzz(func(t *testing.T, js string) {
		got, err := providers.DecodeServers(map[string]tofu.OutputValue{providers.OutputName: {Value: json.RawMessage(js)}})
		if err == nil {
			for _, s := range got {
				if s.ServerID == "" || s.Hostname == "" {
					t.Errorf("decoded %+v without id or hostname", s)
				}
			}
		}
	})
}

func TestManualRefusesToConfigure(t *testing.T) {
	p := &manual.Provider{}
	_, err := p.Configure(providers.Input{})
	if !errors.Is(err, providers.ErrNoInfrastructure) || err.Error() != "provider manual has no infrastructure: its nodes are registered one by one" {
		t.Errorf("Configure err = %v", err)
	}
	if err := p.ValidateServerID(" "); !errors.Is(err, providers.ErrInvalidServerID) {
		t.Errorf("ValidateServerID(blank) = %v, want ErrInvalidServerID", err)
	}
	if err := p.ValidateServerID("rack-4"); err != nil {
		t.Errorf("ValidateServerID(rack-4) = %v", err)
	}
}
