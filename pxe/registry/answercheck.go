package registry

import (
	"errors"
	"fmt"

	"github.com/plasmactl/plasma-node/answer"
)

// ErrInvalidVersion is wrapped by the error of [CheckAnswer] for an
// installer version it cannot parse or has no rules for (before 8.2).
var ErrInvalidVersion = errors.New("invalid installer version")

// AnswerCheck is what [CheckAnswer] found in an answer file the installer
// accepts.
type AnswerCheck struct {
	// Version is the installer release the file was checked against.
	Version string
	// JSON is whether the file is a JSON answer, told by its content
	// ([answer.SniffFormat]: it starts with "{"); else it is TOML.
	JSON bool
	// Deprecated are the snake_case keys the assistant of that release
	// warns about (9.0 and later; see [answer.DeprecatedKeys]). It counts
	// them as issues; the installer itself reads them.
	Deprecated []answer.DeprecatedKey
}

// CheckAnswer reads an answer file as the installer of version would
// ("8.3", "9.2-1", or a package version such as "8.3.3"; empty means the
// newest release this package knows), the way the assistant's
// validate-answer does: the keys and spellings that release accepts, its
// value rules and the rules across keys. A JSON answer (told by content,
// [answer.SniffFormat]) is read as installers from 9.2 read one
// ([answer.DecodeJSON]); the assistant reads no JSON, so it has no
// deprecated keys (the installer turns it into kebab-case TOML). It is here, beside the site
// settings and the answers built from registrations, as node-provisioner's
// one entry to the answer format.
//
// The error wraps [ErrInvalidVersion] for a bad version, or
// [answer.ErrInvalid] / [answer.ErrUnsupported] (every problem found,
// joined) for a file the installer refuses.
func CheckAnswer(data []byte, version string) (AnswerCheck, error) {
	v := answer.LatestVersion
	if version != "" {
		var err error
		if v, err = answer.ParseVersion(version); err != nil {
			return AnswerCheck{}, fmt.Errorf("%w: %w", ErrInvalidVersion, err)
		}
		if !v.Supported() {
			return AnswerCheck{}, fmt.Errorf("%w: installer %s has no automated installer (want %s or later)", ErrInvalidVersion, v, answer.MinVersion)
		}
	}
	check := AnswerCheck{Version: v.String(), JSON: answer.SniffFormat(data) == answer.FormatJSON}
	if check.JSON {
		_, err := answer.DecodeJSON(data, v)
		return check, err
	}
	if _, err := answer.Decode(data, v); err != nil {
		return check, err
	}
	if v.AtLeast(answer.Version90) {
		d, err := answer.DeprecatedKeys(data)
		if err != nil {
			return check, err
		}
		check.Deprecated = d
	}
	return check, nil
}
