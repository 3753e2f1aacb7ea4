package discovery_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/plasmactl/plasma-node/pxe/discovery"
)

// A window decodes an agent's post and keeps it by the inbox's rule; a
// re-post of the same machine updates its entry.
func ExamplePut() {
	post := `{"nics":[{"mac":"52:54:00:AA:00:01","link":"up"}],"dmi":{"serial":"CZ2D1A0BC3"},
		"disks":[{"name":"nvme0n1","size_bytes":960197124096,"serial":"S5GXNX0T","transport":"nvme"}]}`
	report, err := discovery.Decode(strings.NewReader(post))
	if err != nil {
		fmt.Println(err)
		return
	}
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	inbox, rec, _ := discovery.Put(nil, report, t0, discovery.Limits{Max: 10})
	inbox, rec, _ = discovery.Put(inbox, report, t0.Add(time.Hour), discovery.Limits{Max: 10})
	d, _ := rec.Disk("S5GXNX0T")
	fmt.Println(len(inbox), rec.ID, rec.FirstSeen.Format(time.Kitchen), rec.LastSeen.Format(time.Kitchen), d.Name)
	// Output: 1 52:54:00:aa:00:01 10:00AM 11:00AM nvme0n1
}
