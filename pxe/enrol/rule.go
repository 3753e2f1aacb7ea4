package enrol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/plasmactl/plasma-node/internal/usage"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// ErrInvalidRule is wrapped by every error about a rule that cannot be
// accepted: a field of a wrong form, an empty match, a name template
// the installer would refuse, answer settings its version refuses, a
// priority another rule holds.
// It is a usage error (package internal/usage): bad input.
var ErrInvalidRule = usage.New("invalid enrolment rule")

// Mode says what an enrolment does besides registering the machine.
type Mode string

// The modes of a rule.
const (
	// ModeRegister only registers the machine; the operator boots it
	// as for a hand-made registration. The default.
	ModeRegister Mode = "register"
	// ModeInstall registers the machine and has its discovery boot go
	// on to install: one power-on ends installed.
	ModeInstall Mode = "install"
)

// MaxRules bounds a rule set.
const MaxRules = 256

// Rule turns a discovered machine it matches into a registration. Its
// JSON (and YAML) keys are the lower-case ones below; unknown keys are
// refused ([Decode]).
type Rule struct {
	// Name names the rule: the host name rule's characters (a-z, 0-9,
	// '-'), at most 63. Required.
	Name string `json:"name"`
	// Priority orders the rules: of those matching a machine, the one
	// with the lowest priority takes it. Two rules of one priority are
	// refused.
	Priority int `json:"priority"`
	// Mode is register (the default) or install.
	Mode Mode `json:"mode,omitempty"`
	// Limit is the most machines the rule enrols; 0 is no limit.
	Limit int `json:"limit,omitempty"`
	// Match is what a machine must have. At least one field.
	Match Match `json:"match"`
	// Hostname is the name template ([ParseTemplate]), such as
	// "pve-{n:02}". Required.
	Hostname string `json:"hostname"`
	// Disks chooses the boot disk and the data pools.
	Disks Disks `json:"disks,omitzero"`
	// Address is the node's static address from a pool; nil leaves it
	// to the site's DHCP server.
	Address *Address `json:"address,omitempty"`
	// Answer overrides site settings in the node's answer.
	Answer *Answer `json:"answer,omitempty"`
	// BMC gives the node a BMC at the address its discovery report
	// read in-band, with credentials from a named site secret.
	BMC *BMC `json:"bmc,omitempty"`
}

// Match is what a machine must have for a rule to take it. Every field
// is optional; a match that sets none is refused. Globs are those of
// path.Match, compared without case.
type Match struct {
	// Vendor, Product and Serial are globs over the DMI system
	// vendor, product name and serial.
	Vendor  string `json:"vendor,omitempty"`
	Product string `json:"product,omitempty"`
	Serial  string `json:"serial,omitempty"`
	// NICs bounds the number of network interfaces.
	NICs *Range `json:"nics,omitempty"`
	// MACPrefix is a MAC prefix (an OUI, "52:54:00") that one of the
	// machine's MACs starts with.
	MACPrefix string `json:"mac_prefix,omitempty"`
	// Disks is what the machine's disks must be.
	Disks *DiskMatch `json:"disks,omitempty"`
	// Memory bounds the memory the machine reports.
	Memory *SizeRange `json:"memory,omitempty"`
	// CPUs bounds the number of logical CPUs.
	CPUs *Range `json:"cpus,omitempty"`
	// BootNIC is what the interface the machine booted from must be.
	BootNIC *NICMatch `json:"boot_nic,omitempty"`
}

// NICMatch is what one network interface must be.
type NICMatch struct {
	// MACPrefix is a prefix of its MAC, such as an OUI.
	MACPrefix string `json:"mac_prefix,omitempty"`
	// Driver is a glob over its kernel driver's name.
	Driver string `json:"driver,omitempty"`
}

// Range bounds a count; a zero Max is no upper bound.
type Range struct {
	Min int `json:"min,omitempty"`
	Max int `json:"max,omitempty"`
}

// SizeRange bounds a size; a zero Max is no upper bound.
type SizeRange struct {
	Min Size `json:"min,omitempty"`
	Max Size `json:"max,omitempty"`
}

// DiskFilter is what one disk must be. Every field is optional.
type DiskFilter struct {
	// MinSize and MaxSize bound the disk's size; zero is no bound.
	MinSize Size `json:"min_size,omitempty"`
	MaxSize Size `json:"max_size,omitempty"`
	// Model is a glob over the disk's model.
	Model string `json:"model,omitempty"`
	// Rotational, when set, wants a spinning disk (true) or not.
	Rotational *bool `json:"rotational,omitempty"`
	// Transport is nvme, sata or sas.
	Transport string `json:"transport,omitempty"`
}

// DiskMatch is a [DiskFilter] and how many of the machine's disks must
// pass it: Count, or at least one when Count is nil.
type DiskMatch struct {
	DiskFilter
	Count *Range `json:"count,omitempty"`
}

// Disks chooses a machine's boot disk and data pools.
type Disks struct {
	// Boot chooses the boot disk among those passing its filter: the
	// smallest (the default) or the largest. Nil boots from the
	// smallest non-rotational disk, else the smallest.
	Boot *BootDisk `json:"boot,omitempty"`
	// Pools are made from the disks left, in order.
	Pools []Pool `json:"pools,omitempty"`
}

// Pick says which of the disks passing a filter is taken.
type Pick string

// The picks of a [BootDisk].
const (
	PickSmallest Pick = "smallest"
	PickLargest  Pick = "largest"
)

// BootDisk chooses the boot disk.
type BootDisk struct {
	DiskFilter
	// Pick is smallest (the default) or largest.
	Pick Pick `json:"pick,omitempty"`
}

// Pool is a data pool made from the disks not chosen before it.
type Pool struct {
	// Name is the zpool name.
	Name string `json:"name"`
	// Layout is single, stripe, mirror, raidz or raidz2.
	Layout registry.Layout `json:"layout"`
	// Disks is what the pool's disks must be.
	Disks DiskFilter `json:"disks,omitzero"`
	// Count is how many disks the pool takes; 0 takes every one left
	// that passes the filter.
	Count int `json:"count,omitempty"`
}

// Address is a static address from a named pool. Rules naming one pool
// must define it alike.
type Address struct {
	// Pool names the pool. Required.
	Pool string `json:"pool"`
	// CIDR is the pool's network, "10.0.0.0/24". Required.
	CIDR string `json:"cidr"`
	// Range narrows the pool to first-last, "10.0.0.100-10.0.0.199".
	Range string `json:"range,omitempty"`
	// Exclude lists addresses or ranges never handed out.
	Exclude []string `json:"exclude,omitempty"`
	// Gateway is the default gateway, never handed out. Required.
	Gateway string `json:"gateway"`
	// DNS is the DNS server. Required.
	DNS string `json:"dns"`
}

// Answer overrides site settings in the answers of a rule's nodes. It
// is checked against the installer's version at [Rule.Check].
type Answer struct {
	// Version is the installer release the answer must suit ("9.1");
	// empty is the newest this program knows.
	Version  string `json:"version,omitempty"`
	Keyboard string `json:"keyboard,omitempty"`
	Country  string `json:"country,omitempty"`
	Timezone string `json:"timezone,omitempty"`
	Mailto   string `json:"mailto,omitempty"`
	// SSHKeys are added to root's authorized_keys.
	SSHKeys []string `json:"ssh_keys,omitempty"`
	// Filesystem is the boot disk's filesystem and its options, over the
	// site's ([registry.Filesystem]).
	Filesystem *registry.Filesystem `json:"filesystem,omitempty"`
}

// BMC gives the node its BMC, at the address its discovery report read
// in-band. The password is the site secret named Secret, read each time
// the BMC is used, never in the rule: [Decode] refuses credentials in a
// rule's text.
type BMC struct {
	// Scheme is the protocol: ipmi or redfish.
	Scheme string `json:"scheme"`
	// User logs in to the BMC.
	User string `json:"user"`
	// Secret names the site secret holding the password.
	Secret string `json:"secret"`
	// Port is the BMC's port; 0 is the one the report gives for this
	// scheme (a Redfish host interface's service port), else the
	// protocol's (623, 443).
	Port int `json:"port,omitempty"`
	// Address says where the BMC's address comes from: "report" (also
	// ""), the discovery agent's in-band report (the IPMI LAN
	// configuration, or the Redfish host interface's service address).
	Address string `json:"address,omitempty"`
}

// BMCFromReport is [BMC].Address's one source: the agent's report.
const BMCFromReport = "report"

// credentialKeys are keys that would put a credential into a rule's
// bmc; [Decode] refuses them, naming the site secret to use instead.
var credentialKeys = []string{"password", "pass", "passwd", "pwd", "credentials", "token", "api_key", "key"}

// refuseCredentials refuses a rule document (one rule, a list, or
// {"rules": [...]}) whose bmc holds a credential.
func refuseCredentials(doc any) error {
	var rules []any
	switch d := doc.(type) {
	case []any:
		rules = d
	case map[string]any:
		if list, ok := d["rules"].([]any); ok {
			rules = list
		} else {
			rules = []any{d}
		}
	}
	for _, r := range rules {
		m, _ := r.(map[string]any)
		b, _ := m["bmc"].(map[string]any)
		for _, k := range credentialKeys {
			if _, ok := b[k]; ok {
				return fmt.Errorf("%w: bmc.%s: a rule never holds credentials; keep them in a site secret (node-provisioner secret set NAME) and name it in bmc.secret", ErrInvalidRule, k)
			}
		}
	}
	return nil
}

// rulesFile is the file `rule apply` reads: the whole set.
type rulesFile struct {
	Rules []Rule `json:"rules"`
}

// maxRuleFile bounds a rules file: 1 MiB.
const maxRuleFile = 1 << 20

// Decode reads a rules file, YAML or JSON: a mapping with the one key
// rules, a list of rules, or one rule (a mapping with name). Unknown
// keys, duplicate keys and data after the document are refused; the
// error wraps [ErrInvalidRule]. The rules are not checked ([Check]).
func Decode(r io.Reader) ([]Rule, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxRuleFile+1))
	if err != nil {
		return nil, fmt.Errorf("read rules: %w", err)
	}
	if len(data) > maxRuleFile {
		return nil, fmt.Errorf("%w: rules over %d bytes", ErrInvalidRule, maxRuleFile)
	}
	var doc any
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidRule, err)
	}
	var more any
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: more than one YAML document", ErrInvalidRule)
	}
	if err := refuseCredentials(doc); err != nil {
		return nil, err
	}
	js, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidRule, err)
	}
	if m, ok := doc.(map[string]any); ok {
		if _, one := m["name"]; one {
			var r Rule
			if err := strictJSON(js, &r); err != nil {
				return nil, err
			}
			return []Rule{r}, nil
		}
		var f rulesFile
		if err := strictJSON(js, &f); err != nil {
			return nil, err
		}
		return f.Rules, nil
	}
	var rs []Rule
	if err := strictJSON(js, &rs); err != nil {
		return nil, err
	}
	return rs, nil
}

func strictJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %s", ErrInvalidRule, strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}
