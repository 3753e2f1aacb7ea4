package fakescaleway

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
)

// createRequest is POST /baremetal/v1/zones/{zone}/servers's body, as
// the SDK's CreateServerRequest sends it.
type createRequest struct {
	OfferID        string   `json:"offer_id"`
	OrganizationID *string  `json:"organization_id"`
	ProjectID      *string  `json:"project_id"`
	Name           string   `json:"name"`
	Description    string   `json:"description"`
	Tags           []string `json:"tags"`
	Install        *struct {
		OsID               string          `json:"os_id"`
		Hostname           string          `json:"hostname"`
		SSHKeyIDs          []string        `json:"ssh_key_ids"`
		User               *string         `json:"user"`
		Password           *string         `json:"password"`
		ServiceUser        *string         `json:"service_user"`
		ServicePassword    *string         `json:"service_password"`
		PartitioningSchema json.RawMessage `json:"partitioning_schema"`
	} `json:"install"`
	OptionIDs []string `json:"option_ids"`
	Protected bool     `json:"protected"`
	UserData  *[]byte  `json:"user_data"`
}

// create answers POST .../servers: a server ready and installed at once,
// or the API's refusal of a missing name or project, an unknown offer or
// OS.
func (f *Fake) create(w http.ResponseWriter, zone string, body []byte) {
	var req createRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		fail(w, http.StatusBadRequest, "invalid_arguments", "", "", fmt.Sprintf("invalid body: %v", err))
		return
	}
	switch {
	case req.Name == "":
		fail(w, http.StatusBadRequest, "invalid_arguments", "", "", "invalid argument(s): name is required")
		return
	case req.ProjectID == nil || *req.ProjectID == "":
		fail(w, http.StatusBadRequest, "invalid_arguments", "", "", "invalid argument(s): project_id is required")
		return
	}
	if _, ok := Offers[req.OfferID]; !ok {
		fail(w, http.StatusNotFound, "not_found", "baremetal_offer", req.OfferID, "resource is not found")
		return
	}
	s := &Server{ID: newUUID(), Zone: zone, Name: req.Name, Tags: slices.Clone(req.Tags), ProjectID: *req.ProjectID, OfferID: req.OfferID}
	if req.Install != nil {
		if _, ok := OSes[req.Install.OsID]; !ok {
			fail(w, http.StatusNotFound, "not_found", "baremetal_os", req.Install.OsID, "resource is not found")
			return
		}
		s.OSID, s.SSHKeyIDs = req.Install.OsID, slices.Clone(req.Install.SSHKeyIDs)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextIP++
	s.IPv4 = fmt.Sprintf("51.159.1.%d", f.nextIP)
	f.servers[s.ID] = s
	reply(w, s.view())
}

// newUUID returns a random version 4 UUID, the API's id format.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
