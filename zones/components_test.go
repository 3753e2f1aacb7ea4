package zones

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestComponentZones reads the layer playbooks component:attach writes:
// plain and {role, vars} entries, src/ before the root, a missing
// playbook is no zone, a broken one an error with its file.
func TestComponentZones(t *testing.T) {
	root := t.TempDir()
	write := func(rel, data string) {
		p := filepath.Join(root, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("src/interaction/interaction.yaml", `- hosts: platform.interaction.observability
  any_errors_fatal: true
  roles:
    - interaction.applications.dashboards
    - role: interaction.applications.grafana
      vars: {replicas: 2}
- hosts: interaction.management
  roles:
    - interaction.applications.dashboards
`)
	write("interaction/interaction.yaml", "- hosts: platform.other\n  roles: [interaction.applications.dashboards]\n")
	write("cognition/cognition.yaml", "- hosts: platform.cognition.data\n  roles: [cognition.services.db]\n")
	write("broken/broken.yaml", "- hosts: [\n")
	tests := map[string]struct {
		component string
		want      []string
	}{
		"two plays, src first": {"interaction.applications.dashboards", []string{"platform.interaction.management", "platform.interaction.observability"}},
		"a role with vars":     {"interaction.applications.grafana", []string{"platform.interaction.observability"}},
		"at the root":          {"cognition.services.db", []string{"platform.cognition.data"}},
		"not attached":         {"cognition.services.nope", nil},
		"no playbook":          {"foundation.services.x", nil},
		"one segment":          {"interaction", nil},
	}
	for name, tc := range tests {
		got, err := ComponentZones(root, tc.component)
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
	if _, err := ComponentZones(root, "broken.x.y"); !errors.Is(err, ErrInvalidPlaybook) || !strings.Contains(err.Error(), "broken/broken.yaml") {
		t.Errorf("broken playbook: %v", err)
	}
}
