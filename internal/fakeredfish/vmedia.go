package fakeredfish

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"
)

// MediaStyle is where the fake keeps its VirtualMedia collection, as
// the two families of real BMCs do.
type MediaStyle int

// Media styles.
const (
	// NoMedia: no VirtualMedia at all (the zero value).
	NoMedia MediaStyle = iota
	// MediaUnderManager: /redfish/v1/Managers/1/VirtualMedia, a
	// RemovableDisk (USBStick) then a CD (CD, DVD) (as iDRAC names
	// them), each with the
	// #VirtualMedia.InsertMedia and EjectMedia actions and no PATCH (as
	// iDRAC and OpenBMC have it).
	MediaUnderManager
	// MediaUnderSystem: /redfish/v1/Systems/ID/VirtualMedia, CD1 (CD)
	// then USBStick1, no actions: a PATCH of Image and Inserted, with
	// the medium's ETag as If-Match (as older Supermicro BMCs have it).
	MediaUnderSystem
)

// MediaConfig gives the fake virtual media. An inserted image is
// checked at once (a HEAD; a refusal is the action's or PATCH's Redfish
// error, as a BMC answers), then downloaded, as a BMC reads an ISO, in
// parallel Range requests, into a file [Server.WaitMedium] returns.
type MediaConfig struct {
	// Style places the collection; NoMedia: none.
	Style MediaStyle
	// Dir holds the downloaded images; "": the system's temporary
	// directory.
	Dir string
	// MaxBytes bounds an image; 0 means 8 GiB. A bigger one is refused.
	MaxBytes int64
	// Ranges is how many Range requests run at once; 0 means 4.
	Ranges int
	// RangeBytes is the size of one range; 0 means 1 MiB.
	RangeBytes int64
	// Timeout bounds a whole download; 0 means 10 minutes.
	Timeout time.Duration
	// ImageOnly makes InsertMedia refuse any parameter but Image
	// (Inserted and WriteProtected included) with 400
	// ActionParameterUnknown, as Supermicro X11 and X12 BMCs do.
	ImageOnly bool
	// CDOnly leaves the removable medium out: the BMC offers a CD and
	// nothing else, as some do.
	CDOnly bool
	// RootCAs are the certificates the BMC trusts for https images (the
	// operator installed the window's on it); nil: the system's roots.
	// An image whose server it does not trust is refused.
	RootCAs *x509.CertPool
	// Client fetches images (an https one must verify); nil: a client
	// trusting RootCAs, no proxy.
	Client *http.Client
}

func (c MediaConfig) withDefaults() MediaConfig {
	if c.MaxBytes <= 0 {
		c.MaxBytes = 8 << 30
	}
	if c.Ranges <= 0 {
		c.Ranges = 4
	}
	if c.RangeBytes <= 0 {
		c.RangeBytes = 1 << 20
	}
	if c.Timeout <= 0 {
		c.Timeout = 10 * time.Minute
	}
	if c.Client == nil {
		tc := &tls.Config{RootCAs: c.RootCAs, MinVersion: tls.VersionTLS12}
		c.Client = &http.Client{Transport: &http.Transport{Proxy: nil, TLSClientConfig: tc, ResponseHeaderTimeout: 30 * time.Second}}
	}
	return c
}

// managerURI is the one Manager.
const managerURI = "/redfish/v1/Managers/1"

// medium is one virtual medium's state.
type medium struct {
	id, uri string
	types   []string
	actions bool
	etag    int

	image    string
	inserted bool
	wp       bool
	file     string
	done     chan struct{}
	err      error
	cancel   context.CancelFunc
	ranges   int // range requests answered 206
	flight   int // ranges in flight now
	parallel int // most ranges in flight at once
}

// newMedia returns the media of c's style for system id, without the
// removable one with c.CDOnly.
func newMedia(c MediaConfig, id string) []*medium {
	var ms []*medium
	switch c.Style {
	case MediaUnderManager:
		p := managerURI + "/VirtualMedia/"
		ms = []*medium{{id: "RemovableDisk", uri: p + "RemovableDisk", types: []string{"USBStick"}, actions: true},
			{id: "CD", uri: p + "CD", types: []string{"CD", "DVD"}, actions: true}}
	case MediaUnderSystem:
		p := systemsURI + "/" + id + "/VirtualMedia/"
		ms = []*medium{{id: "CD1", uri: p + "CD1", types: []string{"CD"}}, {id: "USBStick1", uri: p + "USBStick1", types: []string{"USBStick"}}}
	}
	if c.CDOnly {
		ms = slices.DeleteFunc(ms, func(m *medium) bool { return !slices.Contains(m.types, "CD") })
	}
	return ms
}

// MediumState is a virtual medium as the fake holds it.
type MediumState struct {
	// ID, Image, Inserted and ConnectedVia are what a client reads.
	ID, Image    string
	Inserted     bool
	ConnectedVia string
	// Ranges is how many Range requests were answered with 206 Partial
	// Content; Parallel the most that ran at once.
	Ranges, Parallel int
}

// Media returns the virtual media.
func (s *Server) Media() []MediumState {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []MediumState
	for _, m := range s.media {
		out = append(out, MediumState{ID: m.id, Image: m.image, Inserted: m.inserted, ConnectedVia: via(m), Ranges: m.ranges, Parallel: m.parallel})
	}
	return out
}

// WaitMedium waits until the download of the image inserted in medium
// id ends, and returns the file it went to, or why it failed.
func (s *Server) WaitMedium(ctx context.Context, id string) (string, error) {
	s.mu.Lock()
	var m *medium
	for _, x := range s.media {
		if x.id == id {
			m = x
		}
	}
	if m == nil || m.done == nil {
		s.mu.Unlock()
		return "", fmt.Errorf("no image inserted in medium %q", id)
	}
	done := m.done
	s.mu.Unlock()
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case <-done:
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return m.file, m.err
}

func via(m *medium) string {
	if m.inserted {
		return "URI"
	}
	return "NotConnected"
}

// mediaLinks adds the system's manager and, under MediaUnderSystem, its
// VirtualMedia collection to a ComputerSystem body.
func (s *Server) mediaLinks(id string, body map[string]any) {
	body["Links"] = map[string]any{"ManagedBy": []map[string]string{{"@odata.id": managerURI}}}
	if s.cfg.Media.Style == MediaUnderSystem && id == s.cfg.SystemIDs[0] {
		body["VirtualMedia"] = map[string]string{"@odata.id": systemsURI + "/" + id + "/VirtualMedia"}
	}
}

// serveManagers serves the Managers collection, the Manager and, under
// MediaUnderManager, its virtual media.
func (s *Server) serveManagers(w http.ResponseWriter, r *http.Request, p string) {
	switch {
	case p == "/redfish/v1/Managers" && r.Method == http.MethodGet:
		s.json(w, http.StatusOK, map[string]any{"@odata.id": p, "@odata.type": "#ManagerCollection.ManagerCollection", "Members@odata.count": 1, "Members": []map[string]string{{"@odata.id": managerURI}}})
	case p == managerURI && r.Method == http.MethodGet:
		b := map[string]any{"@odata.id": p, "@odata.type": "#Manager.v1_10_0.Manager", "Id": "1", "Name": "Fake BMC", "ManagerType": "BMC"}
		if s.cfg.Media.Style == MediaUnderManager {
			b["VirtualMedia"] = map[string]string{"@odata.id": managerURI + "/VirtualMedia"}
		}
		s.json(w, http.StatusOK, b)
	case s.cfg.Media.Style == MediaUnderManager && strings.HasPrefix(p, managerURI+"/VirtualMedia"):
		s.serveMedia(w, r, p)
	default:
		s.fail(w, http.StatusNotFound, "Base.1.0.ResourceMissingAtURI", fmt.Sprintf("The resource at the URI %s was not found.", r.URL.Path))
	}
}

// serveMedia serves a VirtualMedia collection, its media and their
// actions or PATCH.
func (s *Server) serveMedia(w http.ResponseWriter, r *http.Request, p string) {
	if len(s.media) > 0 && p+"/" == strings.TrimSuffix(s.media[0].uri, s.media[0].id) && r.Method == http.MethodGet {
		var members []map[string]string
		for _, m := range s.media {
			members = append(members, map[string]string{"@odata.id": m.uri})
		}
		s.json(w, http.StatusOK, map[string]any{"@odata.id": p, "@odata.type": "#VirtualMediaCollection.VirtualMediaCollection", "Members@odata.count": len(members), "Members": members})
		return
	}
	for _, m := range s.media {
		switch {
		case p == m.uri && r.Method == http.MethodGet:
			s.getMedium(w, m)
		case p == m.uri && r.Method == http.MethodPatch && !m.actions:
			s.patchMedium(w, r, m)
		case p == m.uri+"/Actions/VirtualMedia.InsertMedia" && r.Method == http.MethodPost && m.actions:
			s.insertAction(w, r, m)
		case p == m.uri+"/Actions/VirtualMedia.EjectMedia" && r.Method == http.MethodPost && m.actions:
			s.mu.Lock()
			in := m.inserted
			s.mu.Unlock()
			if !in {
				s.fail(w, http.StatusBadRequest, "Base.1.0.ActionNotSupported", "There is no image inserted in this medium to eject.")
				return
			}
			s.eject(m)
			w.WriteHeader(http.StatusNoContent)
		case p == m.uri || strings.HasPrefix(p, m.uri+"/Actions/"):
			s.fail(w, http.StatusMethodNotAllowed, "Base.1.0.ActionNotSupported", fmt.Sprintf("The action %s is not supported by the resource.", r.Method))
		default:
			continue
		}
		return
	}
	s.fail(w, http.StatusNotFound, "Base.1.0.ResourceMissingAtURI", fmt.Sprintf("The resource at the URI %s was not found.", r.URL.Path))
}

func (s *Server) getMedium(w http.ResponseWriter, m *medium) {
	s.mu.Lock()
	var image any
	if m.image != "" {
		image = m.image
	}
	b := map[string]any{"@odata.id": m.uri, "@odata.type": "#VirtualMedia.v1_3_0.VirtualMedia", "Id": m.id, "Name": "Virtual " + m.id,
		"MediaTypes": m.types, "Image": image, "Inserted": m.inserted, "WriteProtected": m.wp, "ConnectedVia": via(m)}
	if m.actions {
		b["Actions"] = map[string]any{"#VirtualMedia.InsertMedia": map[string]string{"target": m.uri + "/Actions/VirtualMedia.InsertMedia"},
			"#VirtualMedia.EjectMedia": map[string]string{"target": m.uri + "/Actions/VirtualMedia.EjectMedia"}}
	} else {
		w.Header().Set("ETag", fmt.Sprintf(`W/"%d"`, m.etag))
	}
	s.mu.Unlock()
	s.json(w, http.StatusOK, b)
}

// insertAction is #VirtualMedia.InsertMedia.
func (s *Server) insertAction(w http.ResponseWriter, r *http.Request, m *medium) {
	var req map[string]json.RawMessage
	if !s.decode(w, r, &req) {
		return
	}
	known := []string{"Image", "Inserted", "WriteProtected", "TransferProtocolType", "TransferMethod", "UserName", "Password"}
	if s.cfg.Media.ImageOnly {
		known = known[:1]
	}
	for k := range req {
		if !slices.Contains(known, k) {
			s.fail(w, http.StatusBadRequest, "Base.1.0.ActionParameterUnknown", fmt.Sprintf("The action VirtualMedia.InsertMedia was submitted with the invalid parameter %s.", k))
			return
		}
	}
	var image string
	if json.Unmarshal(req["Image"], &image) != nil || image == "" {
		s.fail(w, http.StatusBadRequest, "Base.1.0.ActionParameterMissing", "The action VirtualMedia.InsertMedia requires the parameter Image to be present in the request body.")
		return
	}
	wp := true
	if raw, ok := req["WriteProtected"]; ok && json.Unmarshal(raw, &wp) != nil {
		s.fail(w, http.StatusBadRequest, "Base.1.0.ActionParameterValueTypeError", "The value for the parameter WriteProtected is of a different type than the parameter can accept.")
		return
	}
	s.insert(w, r.Context(), m, image, wp)
}

// patchMedium is a PATCH of Image, Inserted and WriteProtected.
func (s *Server) patchMedium(w http.ResponseWriter, r *http.Request, m *medium) {
	var req struct {
		Image          *string `json:"Image"`
		Inserted       *bool   `json:"Inserted"`
		WriteProtected *bool   `json:"WriteProtected"`
	}
	var raw map[string]json.RawMessage
	if !s.decode(w, r, &raw) {
		return
	}
	for k := range raw {
		if !slices.Contains([]string{"Image", "Inserted", "WriteProtected"}, k) {
			s.fail(w, http.StatusBadRequest, "Base.1.0.PropertyUnknown", fmt.Sprintf("The property %s is not in the list of valid properties for the resource.", k))
			return
		}
	}
	b, _ := json.Marshal(raw)
	if json.Unmarshal(b, &req) != nil {
		s.fail(w, http.StatusBadRequest, "Base.1.0.PropertyValueTypeError", "A property value is of a different type than the property can accept.")
		return
	}
	s.mu.Lock()
	etag := fmt.Sprintf(`W/"%d"`, m.etag)
	in := m.inserted
	s.mu.Unlock()
	if im := r.Header.Get("If-Match"); im != "" && im != etag && im != "*" {
		s.fail(w, http.StatusPreconditionFailed, "Base.1.0.PreconditionFailed", "The ETag supplied did not match the ETag required to change this resource.")
		return
	}
	if req.Image == nil || *req.Image == "" || (req.Inserted != nil && !*req.Inserted) {
		if in {
			s.eject(m)
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	s.insert(w, r.Context(), m, *req.Image, req.WriteProtected == nil || *req.WriteProtected)
}

// insert checks image can be fetched, answers, and downloads it in the
// background.
func (s *Server) insert(w http.ResponseWriter, ctx context.Context, m *medium, image string, wp bool) {
	s.mu.Lock()
	busy := m.inserted
	s.mu.Unlock()
	if busy {
		s.fail(w, http.StatusBadRequest, "Base.1.0.ResourceInUse", "The virtual medium already holds an image; eject it first.")
		return
	}
	c := s.cfg.Media.withDefaults()
	size, err := probe(ctx, c, image)
	if err != nil {
		s.fail(w, http.StatusBadRequest, "Base.1.0.GeneralError", "Unable to mount the image: "+err.Error())
		return
	}
	f, err := os.CreateTemp(c.Dir, "vmedia-*.iso")
	if err != nil {
		s.fail(w, http.StatusInternalServerError, "Base.1.0.InternalError", "The request failed due to an internal service error: "+err.Error())
		return
	}
	dctx, cancel := context.WithTimeout(context.Background(), c.Timeout)
	s.mu.Lock()
	m.image, m.inserted, m.wp, m.file, m.err, m.cancel = image, true, wp, f.Name(), nil, cancel
	m.done = make(chan struct{})
	m.ranges, m.parallel = 0, 0
	m.etag++
	done := m.done
	s.mu.Unlock()
	go func() {
		err := s.download(dctx, c, m, image, size, f)
		cancel()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		s.mu.Lock()
		m.err = err
		s.mu.Unlock()
		close(done)
	}()
	w.WriteHeader(http.StatusNoContent)
}

// eject stops a download and forgets the image and its file.
func (s *Server) eject(m *medium) {
	s.mu.Lock()
	cancel, done, file := m.cancel, m.done, m.file
	m.image, m.inserted, m.file, m.cancel = "", false, "", nil
	m.etag++
	s.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	if file != "" {
		os.Remove(file)
	}
}

// errNoRanges: the image server does not answer Range requests.
var errNoRanges = errors.New("the image server does not serve byte ranges")
