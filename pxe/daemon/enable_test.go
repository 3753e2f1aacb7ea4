package daemon_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/pxe/daemon"
)

func TestLogSaid(t *testing.T) {
	for name, tc := range map[string]struct {
		log  string
		want []string
	}{
		"warnings and errors with their keys in order": {
			log: `{"time":"t","level":"INFO","msg":"serving"}
{"time":"t","level":"WARN","msg":"no SSH key","z":1,"a":"x"}
{"time":"t","level":"ERROR","msg":"listen","addr":":80"}
`,
			want: []string{"warning: no SSH key (a=x, z=1)", "error: listen (addr=:80)"},
		},
		"the window's own lines in its voice, others not": {
			log:  "node-provisioner: --http :80: cannot listen\nsomething else\n",
			want: []string{"--http :80: cannot listen"},
		},
		"nothing said": {log: ""},
	} {
		t.Run(name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, daemon.LogSaid(strings.NewReader(tc.log), "node-provisioner: ")); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}
