package folder

import (
	"os"
	"time"

	"github.com/plasmactl/plasma-node/internal/atomicfile"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// CrashConsume leaves name as a [Registrations.Consume] killed after its claim
// would: the pending file renamed to a claim file and, when recorded, the
// consume record written into the claim, but not renamed to .consumed.
// A killed consumer held the folder's lock: its record stays in the lock
// file.
func CrashConsume(s *Registrations, name string, recorded bool) error {
	if err := os.WriteFile(s.lockPath(), []byte("node-provisioner consume "+name+" (pid 999999, since 2026-12-04T00:00:00Z)\n"), 0o644); err != nil {
		return err
	}
	pending := s.pendingPath(name)
	claim, err := claimName(pending)
	if err != nil {
		return err
	}
	if err := os.Rename(pending, claim); err != nil {
		return err
	}
	if !recorded {
		return nil
	}
	r, err := s.readFile(claim, name)
	if err != nil {
		return err
	}
	r.Consumed = &registry.ConsumeRecord{Time: time.Now().UTC(), ClientIP: "192.0.2.1", Undelivered: true}
	data, err := registry.EncodeRegistration(r)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(claim, data, 0o600)
}

// Dir returns the reports' folder.
func (s *Installs) Dir() string { return s.dir }
