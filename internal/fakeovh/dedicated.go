package fakeovh

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// Server is the fake's view of one dedicated server.
type Server struct {
	// Name is the service name, the server's id
	// (ns1234567.ip-1-2-3.net).
	Name string
	// DisplayName is the name a person gave it (iam.displayName).
	DisplayName string
	// IP is the public IPv4 address.
	IP string
	// Datacenter and Region are where it runs ("bhs1", "ca-east-bhs").
	Datacenter, Region string
	// CommercialRange is its offer's range ("advance").
	CommercialRange string
	// OS is the installed operating system ("debian12_64").
	OS string
	// BootID, Monitoring and NoIntervention are the settings a PUT
	// changes.
	BootID                     int64
	Monitoring, NoIntervention bool
	// PublicMAC and PrivateMAC are the MACs of its public and vRack
	// interfaces, served as virtual network interfaces.
	PublicMAC, PrivateMAC string
	// DiskType and Disks are its disk group: the type ("NVME", "SSD")
	// and the number of disks.
	DiskType string
	Disks    int

	serverID, serviceID int64
}

// AddServer adds a delivered server, as if ordered outside tofu, and
// returns it with its numeric ids set.
func (f *Fake) AddServer(s Server) Server {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	s.serverID, s.serviceID = f.nextID, f.nextID+500000
	c := s
	f.servers[s.Name] = &c
	f.services[s.serviceID] = s.Name
	return s
}

// Servers returns the servers, sorted by service name.
func (f *Fake) Servers() []Server {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Server, 0, len(f.servers))
	for _, s := range f.servers {
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b Server) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func (f *Fake) names() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, 0, len(f.servers))
	for n := range f.servers {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// view is GET /dedicated/server/{serviceName}'s body.
func (s *Server) view() map[string]any {
	return map[string]any{
		"name": s.Name, "serverId": s.serverID, "ip": s.IP, "datacenter": s.Datacenter, "region": s.Region,
		"availabilityZone": s.Region + "-a", "commercialRange": s.CommercialRange, "os": s.OS, "bootId": s.BootID,
		"bootScript": nil, "efiBootloaderPath": nil, "monitoring": s.Monitoring, "noIntervention": s.NoIntervention,
		"linkSpeed": 1000, "newUpgradeSystem": true, "powerState": "poweron", "professionalUse": false,
		"rack": "R1", "rescueMail": nil, "rescueSshKey": nil, "reverse": s.Name + ".", "rootDevice": nil,
		"state": "ok", "supportLevel": "pro",
		"iam": map[string]any{"id": fmt.Sprintf("%08x-0000-4000-8000-%012x", s.serverID, s.serviceID),
			"urn": "urn:v1:eu:resource:dedicatedServer:" + s.Name, "displayName": s.DisplayName},
	}
}

// dedicated answers /dedicated/server/{serviceName}[/...].
func (f *Fake) dedicated(w http.ResponseWriter, r *http.Request, rest string, body []byte) {
	name, sub, _ := strings.Cut(rest, "/")
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.servers[name]
	if !ok {
		fail(w, http.StatusNotFound, "Client::NotFound", "The requested object (serviceName = %s) does not exist", name)
		return
	}
	get := r.Method == http.MethodGet
	switch {
	case sub == "" && get:
		reply(w, s.view())
	case sub == "" && r.Method == http.MethodPut:
		f.putServer(w, s, body)
	case sub == "serviceInfos" && get:
		reply(w, map[string]any{"serviceId": s.serviceID, "domain": s.Name, "status": "ok", "renewalType": "automaticV2016"})
	case sub == "ips" && get:
		reply(w, []string{s.IP + "/32"})
	case sub == "virtualNetworkInterface" && get:
		reply(w, s.vniIDs())
	case strings.HasPrefix(sub, "virtualNetworkInterface/") && get:
		f.vni(w, s, strings.TrimPrefix(sub, "virtualNetworkInterface/"))
	case sub == "specifications/hardware" && get:
		reply(w, s.hardware())
	case sub == "reinstall" && r.Method == http.MethodPost:
		f.reinstall(w, s, body)
	case strings.HasPrefix(sub, "task/") && get:
		f.task(w, s, strings.TrimPrefix(sub, "task/"))
	case sub == "terminate" && r.Method == http.MethodPost:
		f.terminate(w, s)
	case sub == "confirmTermination" && r.Method == http.MethodPost:
		f.confirmTermination(w, s, body)
	default:
		fail(w, http.StatusNotFound, "Client::NotFound", "Got an invalid (or empty) URL")
	}
}

// putServer applies PUT /dedicated/server/{serviceName}: the writable
// properties; anything else is refused.
func (f *Fake) putServer(w http.ResponseWriter, s *Server, body []byte) {
	var p struct {
		BootID            *int64            `json:"bootId"`
		BootScript        *string           `json:"bootScript"`
		EfiBootloaderPath *string           `json:"efiBootloaderPath"`
		Monitoring        *bool             `json:"monitoring"`
		NoIntervention    *bool             `json:"noIntervention"`
		RescueMail        *string           `json:"rescueMail"`
		RescueSSHKey      *string           `json:"rescueSshKey"`
		RootDevice        *string           `json:"rootDevice"`
		State             *string           `json:"state"`
		Customizations    json.RawMessage   `json:"customizations"`
		Properties        map[string]string `json:"properties"`
		Storage           json.RawMessage   `json:"storage"`
		OperatingSystem   *string           `json:"operatingSystem"`
	}
	if !decodeStrict(w, body, &p) {
		return
	}
	if p.BootID != nil {
		s.BootID = *p.BootID
	}
	if p.Monitoring != nil {
		s.Monitoring = *p.Monitoring
	}
	if p.NoIntervention != nil {
		s.NoIntervention = *p.NoIntervention
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte("null"))
}

// putService applies PUT /services/{serviceId}: the display name.
func (f *Fake) putService(w http.ResponseWriter, id string, body []byte) {
	var p struct {
		DisplayName *string `json:"displayName"`
	}
	if !decodeStrict(w, body, &p) {
		return
	}
	n, err := strconv.ParseInt(id, 10, 64)
	f.mu.Lock()
	defer f.mu.Unlock()
	name, ok := f.services[n]
	if err != nil || !ok {
		fail(w, http.StatusNotFound, "Client::NotFound", "Service %s not found", id)
		return
	}
	if p.DisplayName != nil {
		f.servers[name].DisplayName = *p.DisplayName
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte("null"))
}

// vniIDs are the uuids of the server's virtual network interfaces: its
// public one, and its vRack one when it has a private MAC.
func (s *Server) vniIDs() []string {
	ids := []string{s.vniID("public")}
	if s.PrivateMAC != "" {
		ids = append(ids, s.vniID("vrack"))
	}
	return ids
}

func (s *Server) vniID(mode string) string {
	n := 1
	if mode == "vrack" {
		n = 2
	}
	return fmt.Sprintf("%08x-%04x-4000-8000-%012x", s.serverID, n, s.serviceID)
}

// vni answers GET .../virtualNetworkInterface/{uuid}.
func (f *Fake) vni(w http.ResponseWriter, s *Server, id string) {
	for _, mode := range []string{"public", "vrack"} {
		mac := s.PublicMAC
		if mode == "vrack" {
			mac = s.PrivateMAC
		}
		if id != s.vniID(mode) || mac == "" {
			continue
		}
		v := map[string]any{"enabled": true, "mode": mode, "name": "", "networkInterfaceController": []string{mac},
			"serverName": s.Name, "uuid": id}
		if mode == "vrack" {
			v["vrack"] = nil
		}
		reply(w, v)
		return
	}
	fail(w, http.StatusNotFound, "Client::NotFound", "The requested object (uuid = %s) does not exist", id)
}

// hardware is GET .../specifications/hardware's body.
func (s *Server) hardware() map[string]any {
	return map[string]any{
		"bootMode": "uefi", "coresPerProcessor": 8, "description": "fake server", "formFactor": "1u",
		"memorySize": map[string]any{"unit": "MB", "value": 65536}, "motherboard": "fake",
		"numberOfProcessors": 1, "processorArchitecture": "x86_64", "processorName": "fake CPU", "threadsPerProcessor": 16,
		"defaultHardwareRaidSize": nil, "defaultHardwareRaidType": nil, "expansionCards": []any{}, "usbKeys": []any{},
		"diskGroups": []any{map[string]any{
			"diskGroupId": 1, "diskType": s.DiskType, "numberOfDisks": s.Disks, "description": fmt.Sprintf("%d x 960 GB %s", s.Disks, s.DiskType),
			"diskSize": map[string]any{"unit": "GB", "value": 960}, "raidController": nil,
			"defaultHardwareRaidSize": nil, "defaultHardwareRaidType": nil,
		}},
	}
}
