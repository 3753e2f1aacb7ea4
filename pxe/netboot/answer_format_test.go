package netboot

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/answer"
)

// installerAccept is what proxmox-fetch-answer 9.2 sends.
const installerAccept = "application/json, application/toml;q=0.5"

func TestAnswerFormatFollowsAcceptAndTheInstaller(t *testing.T) {
	tests := map[string]struct {
		accept string
		v      answer.Version
		want   answer.Format
	}{
		"the 9.2 installer's header gets JSON":            {installerAccept, answer.Version92, answer.FormatJSON},
		"a newer installer's header gets JSON":            {installerAccept, answer.Version92 + 1<<8, answer.FormatJSON},
		"no header gets TOML":                             {"", answer.Version92, answer.FormatTOML},
		"JSON asked by an installer before 9.2 gets TOML": {installerAccept, answer.Version91, answer.FormatTOML},
		"JSON alone by 8.4 gets TOML as today":            {"application/json", answer.Version84, answer.FormatTOML},
		"JSON alone gets JSON":                            {"application/json", answer.Version92, answer.FormatJSON},
		"TOML preferred gets TOML":                        {"application/json;q=0.4, application/toml", answer.Version92, answer.FormatTOML},
		"equal preference gets TOML":                      {"application/json, application/toml", answer.Version92, answer.FormatTOML},
		"anything gets TOML":                              {"*/*", answer.Version92, answer.FormatTOML},
		"application/* gets TOML":                         {"application/*", answer.Version92, answer.FormatTOML},
		"JSON over a wildcard gets JSON":                  {"application/json, */*;q=0.1", answer.Version92, answer.FormatJSON},
		"TOML refused, anything else taken, gets JSON":    {"application/toml;q=0, */*", answer.Version92, answer.FormatJSON},
		"the specific range wins over the wildcard":       {"application/*;q=0.9, application/json;q=0.1", answer.Version92, answer.FormatTOML},
		"JSON refused gets TOML":                          {"application/json;q=0, */*", answer.Version92, answer.FormatTOML},
		"case and spaces do not matter":                   {" Application/JSON ; Q=1 , application/toml ; q=0.5 ", answer.Version92, answer.FormatJSON},
		"a charset parameter is fine":                     {"application/json; charset=utf-8", answer.Version92, answer.FormatJSON},
		"a malformed q ignores its range":                 {"application/json;q=high, application/toml;q=0.5", answer.Version92, answer.FormatTOML},
		"a q above 1 ignores its range":                   {"application/json;q=2", answer.Version92, answer.FormatTOML},
		"another type only gets TOML":                     {"text/html", answer.Version92, answer.FormatTOML},
		"garbage gets TOML":                               {";;,,=", answer.Version92, answer.FormatTOML},
	}
	for name, tc := range tests {
		if got := answerFormat(tc.accept, tc.v); got != tc.want {
			t.Errorf("%s: answerFormat(%q, %s) = %v, want %v", name, tc.accept, tc.v, got, tc.want)
		}
	}
}

// TestAnswerIsServedAsJSONToA92Installer: the window serves the 9.2
// installer's request as JSON (Content-Type application/json, Vary:
// Accept), rendered once, meaning what the TOML served without the header
// means; an 8.4 installer sending the same header gets TOML.
func TestAnswerIsServedAsJSONToA92Installer(t *testing.T) {
	mk := func(context.Context, *answer.SystemInfo) (*answer.Answer, error) {
		return &answer.Answer{
			Global: answer.Global{Keyboard: "en-us", Country: "at", Timezone: "UTC", Mailto: "ops@lab.example",
				FQDN: answer.FQDN{Name: "lab1.lab.example"}, RootPassword: "only-for-tests", RootSSHKeys: []string{"ssh-ed25519 AAAA x"}},
			Network: answer.Network{Source: answer.NetworkFromDHCP, InterfaceNamePinning: &answer.InterfaceNamePinning{
				Enabled: answer.Ptr(true), Mapping: map[string]string{"52:54:00:00:00:01": "nic0"}}},
			DiskSetup: answer.DiskSetup{Filesystem: answer.FilesystemZFS, DiskList: []string{"sda"},
				ZFS: &answer.ZFSOptions{Raid: answer.Raid0, Ashift: answer.Ptr(12), HDSize: answer.Ptr(80.0)}},
		}, nil
	}
	h, err := New(Config{Backend: funcBackend(mk), BaseURL: "http://192.0.2.1:8090"})
	if err != nil {
		t.Fatal(err)
	}
	renders := countRenders(h)
	srv := httptest.NewServer(h)
	defer srv.Close()
	post := func(release, accept string) (*http.Response, []byte) {
		body := `{"iso":{"release":"` + release + `"},"product":{"product":"pve"},"network_interfaces":[{"link":"e0","mac":"52:54:00:00:00:01"}]}`
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/answer", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json; charset=utf-8")
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s %q: %d %s", release, accept, resp.StatusCode, b)
		}
		return resp, b
	}
	resp, js := post("9.2", installerAccept)
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("9.2 with the installer's Accept: Content-Type %q, want application/json", ct)
	}
	if n := renders.Load(); n != 1 {
		t.Errorf("renders = %d, want 1", n)
	}
	_, toml := post("9.2", "")
	if !strings.Contains(resp.Header.Get("Vary"), "Accept") {
		t.Errorf("Vary = %q, want Accept", resp.Header.Get("Vary"))
	}
	fromJSON, err := answer.DecodeJSON(js, answer.Version92)
	if err != nil {
		t.Fatalf("DecodeJSON: %v\n%s", err, js)
	}
	fromTOML, err := answer.Decode(toml, answer.Version92)
	if err != nil {
		t.Fatalf("Decode: %v\n%s", err, toml)
	}
	if diff := cmp.Diff(fromTOML, fromJSON); diff != "" {
		t.Errorf("the JSON answer means something else (-toml +json):\n%s", diff)
	}
	resp84, b84 := post("8.4", installerAccept)
	if ct := resp84.Header.Get("Content-Type"); ct != ContentTypeTOML || !strings.Contains(string(b84), "[global]") {
		t.Errorf("8.4 with the JSON Accept: %q %s, want TOML", ct, b84)
	}
	if !strings.Contains(resp84.Header.Get("Vary"), "Accept") {
		t.Errorf("8.4: Vary = %q, want Accept", resp84.Header.Get("Vary"))
	}
}
