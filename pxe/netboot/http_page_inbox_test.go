package netboot

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/pxe/discovery"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

// inboxMachines is how many machines the inbox page env discovers: two
// more than the page lists.
const inboxMachines = InboxRows + 2

// inboxMAC and inboxSerial are the i-th discovered machine's MAC and
// DMI serial.
func inboxMAC(i int) string    { return fmt.Sprintf("52:54:00:99:01:%02x", i) }
func inboxSerial(i int) string { return fmt.Sprintf("SRV-%05d", 7000+i) }

// inboxPageEnv is a discovery window, clocks frozen, whose inbox holds
// inboxMachines machines and whose rules (a fake preview) take the
// first ("ssd-boot", named after its serial), refuse the second, and
// match none of the others.
func inboxPageEnv(t *testing.T) (*bootEnv, []discovery.Record) {
	t.Helper()
	inbox, err := folder.OpenInbox(t.TempDir(), discovery.Limits{Max: 100})
	if err != nil {
		t.Fatal(err)
	}
	var recs []discovery.Record
	for i := range inboxMachines {
		rep, err := discovery.Decode(strings.NewReader(fmt.Sprintf(
			`{"nics":[{"mac":%q,"link":"up"}],"dmi":{"vendor":"QEMU","product":"Standard PC <Q35>","serial":%q},"disks":[{"name":"sda","size_bytes":128849018880,"serial":"DISK-%05d"}]}`,
			inboxMAC(i), inboxSerial(i), i)))
		if err != nil {
			t.Fatal(err)
		}
		rec, err := inbox.Put(t.Context(), rep, atSec(i))
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	preview := func(_ context.Context, recs []discovery.Record) (map[string]Enrolment, error) {
		out := map[string]Enrolment{}
		for i, r := range recs {
			switch i {
			case 0:
				out[r.ID] = Enrolment{Outcome: EnrolEnrolled, Rule: "ssd-boot", Node: "pve-" + r.DMI.Serial}
			case 1:
				out[r.ID] = Enrolment{Outcome: EnrolRefused, Reason: "registered: its MAC " + r.ID + " is pinned by pve1"}
			default:
				out[r.ID] = Enrolment{Outcome: EnrolNoRule, Reason: "no rule matches: disk size 120 GB below 200 GB of rule ssd-boot"}
			}
		}
		return out, nil
	}
	e := newBootEnv(t, Config{
		Timeline:  &Timeline{Now: tickClock()},
		Metrics:   &Metrics{now: func() time.Time { return atSec(0) }},
		Discovery: &Discovery{Token: testDiscoveryToken, Inbox: inbox, Preview: preview},
	})
	e.h.cfg.Now = func() time.Time { return atSec(59) }
	return e, recs
}

// TestStatusPageInboxGolden: the window's page lists the first
// InboxRows discovered machines, each with its masked MAC and serial,
// its product, and the rule and name it would get or why none takes
// it, then how many more there are.
func TestStatusPageInboxGolden(t *testing.T) {
	e, _ := inboxPageEnv(t)
	_, body, _ := e.get(t, "/")
	checkGoldenPage(t, "page-inbox.html", body)
}

// TestTheWindowsInboxLeaksNoMACOrSerial: the page and GET /status of the
// window's port hold no discovered MAC or serial in full (not in a
// generated name nor in a reason either); the full page and report, for
// a reader with a token, hold them.
func TestTheWindowsInboxLeaksNoMACOrSerial(t *testing.T) {
	e, recs := inboxPageEnv(t)
	_, page, _ := e.get(t, "/")
	_, status, _ := e.get(t, "/status")
	for i := range inboxMachines {
		for _, id := range []string{inboxMAC(i), inboxSerial(i), fmt.Sprintf("DISK-%05d", i)} {
			for what, body := range map[string]string{"page": page, "status": status} {
				if strings.Contains(body, id) {
					t.Errorf("the window's %s shows %s in full", what, id)
				}
			}
		}
	}
	var rep StatusReport
	if err := json.Unmarshal([]byte(status), &rep); err != nil {
		t.Fatal(err)
	}
	want := []InboxMachine{
		{MAC: "…:01:00", Product: "Standard PC <Q35>", Serial: "…7000", Rule: "ssd-boot", Name: "pve-…7000"},
		{MAC: "…:01:01", Product: "Standard PC <Q35>", Serial: "…7001", Reason: "registered: its MAC …:01:01 is pinned by pve1"},
	}
	if len(rep.Inbox) != InboxRows || *rep.Discovered != inboxMachines {
		t.Fatalf("GET /status: %d inbox rows of %v discovered, want %d of %d", len(rep.Inbox), rep.Discovered, InboxRows, inboxMachines)
	}
	if diff := cmp.Diff(want, rep.Inbox[:2]); diff != "" {
		t.Errorf("GET /status inbox (-want +got):\n%s", diff)
	}

	full := httptest.NewRecorder()
	e.h.FullPage(full, httptest.NewRequest(http.MethodGet, "/", nil))
	for _, id := range []string{recs[0].ID, recs[0].DMI.Serial, "pve-" + recs[0].DMI.Serial} {
		if !strings.Contains(full.Body.String(), id) {
			t.Errorf("the full page lacks %s", id)
		}
	}
}

// TestStatusPageInboxWithoutRules: a discovery window with no preview
// lists its machines without a rule column's content, and one whose
// preview fails says so on every row instead of failing the page.
func TestStatusPageInboxWithoutRules(t *testing.T) {
	e, _ := inboxPageEnv(t)
	e.h.cfg.Discovery.Preview = func(context.Context, []discovery.Record) (map[string]Enrolment, error) {
		return nil, fmt.Errorf("rules store down")
	}
	code, page, _ := e.get(t, "/")
	if code != 200 || !strings.Contains(page, "the rules cannot be read; see the server log") || strings.Contains(page, "rules store down") {
		t.Errorf("GET / = %d; the page does not say the rules cannot be read (and only that)", code)
	}
	e.h.cfg.Discovery.Preview = nil
	_, page, _ = e.get(t, "/")
	if !strings.Contains(page, `data-machine="…:01:00"`) || strings.Contains(page, "ssd-boot") {
		t.Errorf("without a preview the page does not list the machines alone:\n%s", page)
	}
}
