package providers

import (
	"errors"
	"fmt"

	"github.com/plasmactl/plasma-node/nodes"
)

// ErrInvalidSetting: a platform.yaml setting has a value the provider's
// plugin would refuse. Every [*SettingError] is it, and also
// [nodes.ErrMalformed].
var ErrInvalidSetting = errors.New("invalid setting")

// SettingError is a platform.yaml setting a provider refuses when the
// platform is loaded, before any plan: the file, the field, its line and
// what would be valid.
type SettingError struct {
	// File is the platform.yaml the value was read from ("" when the
	// platform was not loaded from a file).
	File string
	// Field is the dotted path of the setting
	// ("infrastructure.ssh_key_id").
	Field string
	// Line is the line of the value in File; 0 when unknown.
	Line int
	// Value is the refused value.
	Value string
	// Want says what would be valid.
	Want string
}

// Error names the file, line, field and value, and what would be valid.
func (e *SettingError) Error() string {
	where := e.File
	if where == "" {
		where = "platform.yaml"
	}
	if e.Line > 0 {
		where = fmt.Sprintf("%s:%d", where, e.Line)
	}
	return fmt.Sprintf("%s: %s %q: %v: want %s", where, e.Field, e.Value, ErrInvalidSetting, e.Want)
}

// Unwrap returns [ErrInvalidSetting] and [nodes.ErrMalformed].
func (e *SettingError) Unwrap() []error { return []error{ErrInvalidSetting, nodes.ErrMalformed} }

// NewSettingError returns the [*SettingError] of field of p (a dotted
// path, "infrastructure.image") with value, refused for want.
func NewSettingError(p *nodes.Platform, field, value, want string) *SettingError {
	e := &SettingError{Field: field, Value: value, Want: want}
	if p != nil {
		e.File, e.Line = p.File(), p.Line(field)
	}
	return e
}

// PlatformValidator is implemented by providers that check platform.yaml
// settings their plugin would refuse (an id of the wrong form, an
// unknown region), so that a mistake is reported with its line when the
// platform is loaded rather than by a failed plan.
type PlatformValidator interface {
	// ValidatePlatform checks the provider's settings of p.
	//
	// Errors: [*SettingError] ([ErrInvalidSetting]).
	ValidatePlatform(p *nodes.Platform) error
}

// ValidatePlatform checks p's settings with prov when it is a
// [PlatformValidator]; nil otherwise.
func ValidatePlatform(prov Provider, p *nodes.Platform) error {
	if v, ok := prov.(PlatformValidator); ok {
		return v.ValidatePlatform(p)
	}
	return nil
}

// Required is a platform.yaml setting a provider needs before it can
// create a server: its dotted path and what would be valid.
type Required struct {
	// Field is the setting's dotted path ("infrastructure.image").
	Field string
	// Want says what would be valid.
	Want string
}

// RequiredSettings is implemented by providers that need settings of
// platform.yaml to create servers (an image with no default), so that
// a new platform and validate can name them before any plan.
type RequiredSettings interface {
	// Required returns the settings p lacks that creating a server
	// needs; none when p has them all.
	Required(p *nodes.Platform) []Required
}

// MissingSettings returns the settings p lacks that prov needs to
// create servers, when prov is a [RequiredSettings]; none otherwise.
func MissingSettings(prov Provider, p *nodes.Platform) []Required {
	if r, ok := prov.(RequiredSettings); ok {
		return r.Required(p)
	}
	return nil
}
