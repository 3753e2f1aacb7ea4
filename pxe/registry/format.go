package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"
)

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(timeLayout)
}

// parseTime reads RFC 3339 and Python's naive isoformat (taken as UTC).
func parseTime(key, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse("2006-01-02T15:04:05.999999999", s); err == nil {
		return t.UTC(), nil
	}
	return time.Time{}, invalid(ErrInvalidRegistration, "invalid %s %q (want an RFC 3339 time such as 2026-07-06T12:00:00+00:00)", key, s)
}

// registrationJSON is the file format; field order is key order.
type registrationJSON struct {
	Name           string            `json:"name"`
	MACs           []string          `json:"macs"`
	BootDisk       *string           `json:"boot_disk,omitempty"`
	Pools          []DataPool        `json:"pools"`
	Created        string            `json:"created"`
	Serial         string            `json:"serial,omitempty"`
	UUID           string            `json:"uuid,omitempty"`
	SSHKeys        []string          `json:"ssh_keys,omitempty"`
	BMC            *BMC              `json:"bmc,omitempty"`
	SecureBoot     bool              `json:"secure_boot,omitempty"`
	Network        *Network          `json:"network,omitempty"`
	NICNames       map[string]string `json:"nic_names,omitempty"`
	WipeData       bool              `json:"wipe_data,omitempty"`
	BootMethod     BootMethod        `json:"boot_method,omitempty"`
	MediaAnswer    MediaAnswer       `json:"media_answer,omitempty"`
	FromDiscovery  bool              `json:"from_discovery,omitempty"`
	Settings       *Site             `json:"answer_settings,omitempty"`
	ConsumedAt     string            `json:"consumed_at,omitempty"`
	InstallIP      *string           `json:"install_ip,omitempty"`
	ConsumedMACs   []string          `json:"consumed_macs,omitempty"`
	ConsumedSerial string            `json:"consumed_serial,omitempty"`
	ConsumedUUID   string            `json:"consumed_uuid,omitempty"`
	Undelivered    bool              `json:"undelivered,omitempty"`
}

var knownKeys = []string{
	"name", "macs", "boot_disk", "pools", "created", "serial", "uuid", "ssh_keys", "bmc", "secure_boot", "network", "nic_names", "wipe_data", "boot_method", "media_answer", "from_discovery", "answer_settings",
	"consumed_at", "install_ip", "consumed_macs", "consumed_serial", "consumed_uuid", "undelivered",
}

// MarshalJSON writes the registration file format. It does not validate;
// [Prepare] does.
func (r Registration) MarshalJSON() ([]byte, error) {
	bd := r.BootDisk.String()
	w := registrationJSON{
		Name:          r.Name,
		MACs:          r.MACs,
		BootDisk:      &bd,
		Pools:         r.Pools,
		Created:       formatTime(r.Created),
		Serial:        r.Serial,
		UUID:          r.UUID,
		SSHKeys:       r.SSHKeys,
		BMC:           r.BMC,
		SecureBoot:    r.SecureBoot,
		Network:       r.Network,
		NICNames:      r.NICNames,
		WipeData:      r.WipeData,
		BootMethod:    r.BootMethod,
		MediaAnswer:   r.MediaAnswer,
		Settings:      r.Settings,
		FromDiscovery: r.FromDiscovery,
	}
	if w.MACs == nil {
		w.MACs = []string{}
	}
	if w.Pools == nil {
		w.Pools = []DataPool{}
	}
	if c := r.Consumed; c != nil {
		ip := c.ClientIP
		w.ConsumedAt = formatTime(c.Time)
		w.InstallIP = &ip
		w.ConsumedMACs = c.MACs
		w.ConsumedSerial = c.Serial
		w.ConsumedUUID = c.UUID
		w.Undelivered = c.Undelivered
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(w); err != nil {
		return nil, err
	}
	out := bytes.TrimRight(buf.Bytes(), "\n")
	if len(r.Extra) == 0 {
		return out, nil
	}
	keys := make([]string, 0, len(r.Extra))
	for k := range r.Extra {
		if !slices.Contains(knownKeys, k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	out = out[:len(out)-1] // drop '}'
	for _, k := range keys {
		kb, _ := json.Marshal(k)
		v := r.Extra[k]
		if !json.Valid(v) {
			return nil, fmt.Errorf("registration %s: extra key %s holds invalid JSON", r.Name, kb)
		}
		out = append(out, ',')
		out = append(out, kb...)
		out = append(out, ':')
		out = append(out, v...)
	}
	return append(out, '}'), nil
}

// UnmarshalJSON reads the registration file format with
// [DecodeRegistration]'s defaults and checks, taking no name from a file
// name.
func (r *Registration) UnmarshalJSON(data []byte) error {
	d, err := DecodeRegistration(data, "")
	if err != nil {
		return err
	}
	*r = d
	return nil
}

// DecodeRegistration reads a registration file's content as TAPPaaS does:
// a missing name is the file's stem (fileStem; "" when there is none),
// MACs are normalised again, a missing boot_disk is "sda", and unknown
// keys are kept in Extra. A name that differs from a non-empty fileStem
// is refused, since the file would then answer for another name. The
// result is validated with [Registration.Validate]; errors wrap
// [ErrInvalidRegistration].
func DecodeRegistration(data []byte, fileStem string) (Registration, error) {
	var w registrationJSON
	if err := json.Unmarshal(data, &w); err != nil {
		return Registration{}, invalid(ErrInvalidRegistration, "registration is not valid JSON of the registration format: %v", err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return Registration{}, invalid(ErrInvalidRegistration, "registration is not a JSON object: %v", err)
	}
	r := Registration{Name: w.Name, MACs: w.MACs, Pools: w.Pools, Serial: w.Serial, UUID: w.UUID, SSHKeys: w.SSHKeys, BMC: w.BMC, SecureBoot: w.SecureBoot, Network: w.Network, NICNames: w.NICNames, WipeData: w.WipeData, BootMethod: w.BootMethod, MediaAnswer: w.MediaAnswer, Settings: w.Settings, FromDiscovery: w.FromDiscovery}
	if r.Name == "" {
		r.Name = fileStem
	}
	if fileStem != "" && r.Name != fileStem {
		return Registration{}, invalid(ErrInvalidName, "registration name %q does not match its file name %q", r.Name, fileStem+".json")
	}
	bd := "sda"
	if w.BootDisk != nil {
		bd = *w.BootDisk
	}
	var err error
	if r.BootDisk, err = ParseBootDisk(bd); err != nil {
		return Registration{}, err
	}
	if r.Created, err = parseTime("created", w.Created); err != nil {
		return Registration{}, err
	}
	if w.ConsumedAt != "" || w.InstallIP != nil || len(w.ConsumedMACs) > 0 || w.ConsumedSerial != "" || w.ConsumedUUID != "" {
		c := &ConsumeRecord{MACs: w.ConsumedMACs, Serial: w.ConsumedSerial, UUID: w.ConsumedUUID, Undelivered: w.Undelivered}
		if w.InstallIP != nil {
			c.ClientIP = *w.InstallIP
		}
		if c.Time, err = parseTime("consumed_at", w.ConsumedAt); err != nil {
			return Registration{}, err
		}
		if len(c.MACs) == 0 {
			c.MACs = nil
		}
		r.Consumed = c
	}
	for k, v := range raw {
		if !slices.Contains(knownKeys, k) {
			if r.Extra == nil {
				r.Extra = map[string]json.RawMessage{}
			}
			var c bytes.Buffer
			if err := json.Compact(&c, v); err != nil {
				return Registration{}, invalid(ErrInvalidRegistration, "registration key %q: %v", k, err)
			}
			r.Extra[k] = c.Bytes()
		}
	}
	if r, err = r.normalize(); err != nil {
		return Registration{}, err
	}
	if err := r.Validate(); err != nil {
		return Registration{}, err
	}
	return r, nil
}

// EncodeRegistration returns a registration file's bytes: JSON indented by
// two spaces plus a newline, as TAPPaaS writes it.
func EncodeRegistration(r Registration) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return nil, fmt.Errorf("encode registration %s: %w", r.Name, err)
	}
	return buf.Bytes(), nil
}

// ErrorLine is the line of the first JSON syntax or type error in a
// registration's encoding data, 1 when there is none (the error is about
// a value or the name), for a store to say where a file is wrong.
func ErrorLine(data []byte) int {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	var anyJSON any
	if err := json.Unmarshal(data, &anyJSON); errors.As(err, &se) {
		off = se.Offset
	} else if err := json.Unmarshal(data, &registrationJSON{}); errors.As(err, &te) {
		off = te.Offset
	}
	if off < 0 || off > int64(len(data)) {
		return 1
	}
	return bytes.Count(data[:off], []byte("\n")) + 1
}
