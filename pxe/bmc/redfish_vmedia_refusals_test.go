package bmc_test

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/internal/fakeredfish"
	"github.com/plasmactl/plasma-node/pxe/bmc"
)

var styles = map[string]fakeredfish.MediaStyle{"Managers": fakeredfish.MediaUnderManager, "Systems": fakeredfish.MediaUnderSystem}

// checkVMError checks err is kind and ErrBMC, names the BMC and the
// step, and carries no image path or token.
func checkVMError(t *testing.T, err, kind error, step string) {
	t.Helper()
	if !errors.Is(err, kind) || !errors.Is(err, bmc.ErrBMC) {
		t.Fatalf("%v; want %v, an ErrBMC", err, kind)
	}
	if !strings.Contains(err.Error(), "BMC redfish://") || !strings.Contains(err.Error(), step) {
		t.Errorf("%v; want the BMC and the step %q named", err, step)
	}
	if strings.Contains(err.Error(), "tok-") || strings.Contains(err.Error(), "node.iso") {
		t.Errorf("the error carries the image's path: %v", err)
	}
}

// TestRedfishVirtualMediaRefusals: each refusal is its typed error in
// both styles, names the BMC and the step, and never the image's token.
func TestRedfishVirtualMediaRefusals(t *testing.T) {
	ctx := context.Background()
	content := make([]byte, 300<<10)
	rand.Read(content)
	for name, style := range styles {
		t.Run(name, func(t *testing.T) {
			image, srv := imageServer(t, content)
			t.Run("an image the BMC cannot fetch is refused", func(t *testing.T) {
				fake, _, vm := mediaLab(t, style, fakeredfish.MediaConfig{}, image)
				_, err := vm.InsertMedia(ctx, srv.URL+"/media/tok-wrong/node.iso", bmc.InsertOptions{})
				checkVMError(t, err, bmc.ErrImageRefused, "insert virtual media")
				if !strings.Contains(err.Error(), "HTTP 404") {
					t.Errorf("%v; want the BMC's words (HTTP 404)", err)
				}
				for _, m := range fake.Media() {
					if m.Inserted {
						t.Errorf("medium %s inserted after a refusal", m.ID)
					}
				}
			})
			t.Run("an image over the BMC's bound is refused", func(t *testing.T) {
				_, _, vm := mediaLab(t, style, fakeredfish.MediaConfig{MaxBytes: 1000}, image)
				_, err := vm.InsertMedia(ctx, image, bmc.InsertOptions{})
				checkVMError(t, err, bmc.ErrImageRefused, "insert virtual media")
			})
			t.Run("an image server without ranges is refused", func(t *testing.T) {
				plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(content) }))
				defer plain.Close()
				_, _, vm := mediaLab(t, style, fakeredfish.MediaConfig{}, image)
				_, err := vm.InsertMedia(ctx, plain.URL+"/media/tok-x/node.iso", bmc.InsertOptions{})
				checkVMError(t, err, bmc.ErrImageRefused, "insert virtual media")
			})
			t.Run("a medium holding another image is not taken unless replaced", func(t *testing.T) {
				fake, rec, vm := mediaLab(t, style, fakeredfish.MediaConfig{}, image)
				other := image + "?other"
				if _, err := vm.InsertMedia(ctx, other, bmc.InsertOptions{}); err != nil {
					t.Fatal(err)
				}
				n := len(rec.lines)
				_, err := vm.InsertMedia(ctx, image, bmc.InsertOptions{})
				checkVMError(t, err, bmc.ErrMediumInUse, "insert virtual media")
				for _, l := range rec.lines[n:] {
					if !strings.HasPrefix(l, "GET ") {
						t.Errorf("a refused insert changed the BMC: %s", l)
					}
				}
				m, err := vm.InsertMedia(ctx, image, bmc.InsertOptions{Replace: true})
				if err != nil || m.Image != image || !m.Inserted {
					t.Fatalf("replace: %+v %v", m, err)
				}
				if _, err := fake.WaitMedium(ctx, m.ID); err != nil {
					t.Error(err)
				}
				n = len(rec.lines)
				if _, err := vm.InsertMedia(ctx, image, bmc.InsertOptions{}); err != nil {
					t.Errorf("the same image again: %v", err)
				}
				for _, l := range rec.lines[n:] {
					if !strings.HasPrefix(l, "GET ") {
						t.Errorf("inserting the image already inserted changed the BMC: %s", l)
					}
				}
				if err := vm.EjectMedia(ctx, other); err != nil {
					t.Error(err)
				}
				if ms, _ := vm.Media(ctx); !mediumHolds(ms, image) {
					t.Errorf("ejecting another image ejected ours: %+v", ms)
				}
				if err := vm.EjectMedia(ctx, ""); err != nil {
					t.Error(err)
				}
				if ms, _ := vm.Media(ctx); mediumHolds(ms, image) {
					t.Errorf("eject all left %+v", ms)
				}
			})
		})
	}
	t.Run("a BMC without virtual media", func(t *testing.T) {
		_, _, vm := mediaLab(t, fakeredfish.NoMedia, fakeredfish.MediaConfig{}, "")
		_, err := vm.InsertMedia(ctx, "https://media.example/tok-1/node.iso", bmc.InsertOptions{})
		checkVMError(t, err, bmc.ErrNoVirtualMedia, "insert virtual media")
		_, err = vm.Media(ctx)
		checkVMError(t, err, bmc.ErrNoVirtualMedia, "list virtual media")
	})
	t.Run("not an http image", func(t *testing.T) {
		_, rec, vm := mediaLab(t, fakeredfish.MediaUnderManager, fakeredfish.MediaConfig{}, "")
		_, err := vm.InsertMedia(ctx, "nfs://media.example/tok-1/node.iso", bmc.InsertOptions{})
		if !errors.Is(err, bmc.ErrInvalidEndpoint) || len(rec.lines) != 0 {
			t.Errorf("%v after %d requests; want ErrInvalidEndpoint before any", err, len(rec.lines))
		}
	})
}

func mediumHolds(ms []bmc.Medium, image string) bool {
	for _, m := range ms {
		if m.Inserted && m.Image == image {
			return true
		}
	}
	return false
}

// TestFakeBMCDownloadsInParallelRanges: the fake reads the image in
// ranges of RangeBytes, Ranges at once, whole; a download that outlives
// its Timeout fails rather than leaving a partial image taken as done.
func TestFakeBMCDownloadsInParallelRanges(t *testing.T) {
	ctx := context.Background()
	content := make([]byte, 10<<16+7)
	rand.Read(content)
	// Each range takes 20 ms, so that ranges overlap however the
	// goroutines are scheduled.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(20 * time.Millisecond)
		http.ServeContent(w, r, "node.iso", time.Time{}, strings.NewReader(string(content)))
	}))
	defer srv.Close()
	image := srv.URL + "/media/tok-1/node.iso"
	fake, _, vm := mediaLab(t, fakeredfish.MediaUnderManager, fakeredfish.MediaConfig{RangeBytes: 1 << 16, Ranges: 4}, image)
	if _, err := vm.InsertMedia(ctx, image, bmc.InsertOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := fake.WaitMedium(ctx, "CD"); err != nil {
		t.Fatal(err)
	}
	var got []fakeredfish.MediumState
	for _, m := range fake.Media() {
		if m.ID == "CD" {
			m.Parallel = min(m.Parallel, 2) // at least two at once
			got = append(got, m)
		}
	}
	want := []fakeredfish.MediumState{{ID: "CD", Image: image, Inserted: true, ConnectedVia: "URI", Ranges: 11, Parallel: 2}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("medium (-want +got):\n%s", diff)
	}

	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			time.Sleep(2 * time.Second)
		}
		http.ServeContent(w, r, "node.iso", time.Time{}, strings.NewReader(string(content)))
	}))
	defer slow.Close()
	fake, _, vm = mediaLab(t, fakeredfish.MediaUnderSystem, fakeredfish.MediaConfig{RangeBytes: 1 << 16, Timeout: 300 * time.Millisecond}, image)
	if _, err := vm.InsertMedia(ctx, slow.URL+"/node.iso", bmc.InsertOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := fake.WaitMedium(ctx, "CD1"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a download past its Timeout: %v, want context.DeadlineExceeded", err)
	}
}
