//go:build linux

package agent

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/plasmactl/plasma-node/pxe/discovery"
)

// TestPostReadsWhatTheWindowAsks: a window's "install" reply has the
// agent reboot the machine into the install; "ok" has it power off; a
// refusal is an error.
func TestPostReadsWhatTheWindowAsks(t *testing.T) {
	tests := map[string]struct {
		status  int
		body    string
		want    Next
		wantErr bool
	}{
		"ok powers off":               {http.StatusOK, discovery.ReplyKept + "\n", NextPowerOff, false},
		"install reboots":             {http.StatusOK, discovery.ReplyInstall + "\n", NextInstall, false},
		"a refusal is an error":       {http.StatusBadRequest, "bad report\n", NextPowerOff, true},
		"an unknown reply powers off": {http.StatusOK, "something else\n", NextPowerOff, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			got, err := post(context.Background(), nil, Target{URL: srv.URL, Token: "t"}, discovery.Report{})
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("post = %v, %v; want %v (error %t)", got, err, tc.want, tc.wantErr)
			}
		})
	}
}
