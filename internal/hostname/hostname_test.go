package hostname

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCompareSortsNaturally(t *testing.T) {
	got := []string{"tappaas10", "tappaas3", "tappaas1", "pve01", "pve1", "a", "tappaas2b", "tappaas2a", "b10x", "b9x"}
	slices.SortFunc(got, Compare)
	want := []string{"a", "b9x", "b10x", "pve1", "pve01", "tappaas1", "tappaas2a", "tappaas2b", "tappaas3", "tappaas10"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("natural order (-want +got):\n%s", diff)
	}
}
