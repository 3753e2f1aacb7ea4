package bmc_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/internal/fakeredfish"
	"github.com/plasmactl/plasma-node/pxe/bmc"
)

// asyncInsert makes the fake's InsertMedia asynchronous, as some BMCs
// answer it: 202 Accepted with a task monitor, which says Running once,
// then Completed, or Exception with the BMC's words when the fake
// refused the image.
type asyncInsert struct {
	next  http.Handler
	mu    sync.Mutex
	polls int
	said  string // the fake's refusal, "" when it took the image
}

const monitorURI = "/redfish/v1/TaskService/Tasks/vm1/Monitor"

func (a *asyncInsert) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "VirtualMedia.InsertMedia"):
		rec := httptest.NewRecorder()
		a.next.ServeHTTP(rec, r)
		a.said = ""
		if rec.Code >= 300 {
			a.said = "Unable to mount the image."
		}
		w.Header().Set("Location", monitorURI)
		w.WriteHeader(http.StatusAccepted)
		w.Write([]byte(`{"TaskState":"Running"}`))
	case r.URL.Path == monitorURI:
		a.polls++
		w.Header().Set("Content-Type", "application/json")
		switch {
		case a.polls == 1:
			w.WriteHeader(http.StatusAccepted)
			w.Write([]byte(`{"TaskState":"Running"}`))
		case a.said != "":
			w.Write([]byte(`{"TaskState":"Exception","Messages":[{"Message":"` + a.said + `"}]}`))
		default:
			w.Write([]byte(`{"TaskState":"Completed"}`))
		}
	default:
		a.next.ServeHTTP(w, r)
	}
}

// TestRedfishVirtualMediaFollowsATaskMonitor: an InsertMedia answered
// with 202 is followed to its end; a task ending in Exception is
// ErrImageRefused in the BMC's words.
func TestRedfishVirtualMediaFollowsATaskMonitor(t *testing.T) {
	ctx := context.Background()
	image, srv := imageServer(t, make([]byte, 4096))
	_, rec, vm := mediaLab(t, fakeredfish.MediaUnderManager, fakeredfish.MediaConfig{}, image)
	async := &asyncInsert{next: rec.next}
	rec.next = async
	m, err := vm.InsertMedia(ctx, image, bmc.InsertOptions{})
	if err != nil || !m.Inserted {
		t.Fatalf("%+v %v", m, err)
	}
	if async.polls != 2 {
		t.Errorf("the monitor was asked %d times, want 2 (Running, Completed)", async.polls)
	}
	if err := vm.EjectMedia(ctx, ""); err != nil {
		t.Fatal(err)
	}
	async.polls = 0
	_, err = vm.InsertMedia(ctx, srv.URL+"/media/tok-wrong/node.iso", bmc.InsertOptions{})
	checkVMError(t, err, bmc.ErrImageRefused, "insert virtual media")
	if !strings.Contains(err.Error(), "Exception: Unable to mount the image.") {
		t.Errorf("%v; want the task's words", err)
	}
}

// TestRedfishVirtualMediaImageOnlyInsert: a BMC whose InsertMedia takes
// Image alone (400 naming Inserted, as Supermicro X11 answers) gets the
// action again with Image alone, and the medium is inserted.
func TestRedfishVirtualMediaImageOnlyInsert(t *testing.T) {
	ctx := context.Background()
	image, _ := imageServer(t, make([]byte, 4096))
	_, rec, vm := mediaLab(t, fakeredfish.MediaUnderManager, fakeredfish.MediaConfig{ImageOnly: true}, image)
	m, err := vm.InsertMedia(ctx, image, bmc.InsertOptions{})
	if err != nil || !m.Inserted || m.Image != image {
		t.Fatalf("%+v %v", m, err)
	}
	var posts []string
	for _, l := range rec.lines {
		if strings.HasPrefix(l, "POST ") {
			posts = append(posts, strings.TrimPrefix(l, "POST /redfish/v1/Managers/1/VirtualMedia/CD/Actions/VirtualMedia.InsertMedia "))
		}
	}
	want := []string{`{"Image":"http://IMAGE/media/tok-s3cr3t/node.iso","Inserted":true,"WriteProtected":true}`, `{"Image":"http://IMAGE/media/tok-s3cr3t/node.iso"}`}
	if diff := cmp.Diff(want, posts); diff != "" {
		t.Errorf("InsertMedia bodies (-want +got):\n%s", diff)
	}
}
