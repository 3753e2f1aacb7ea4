package bootassets

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/plasmactl/plasma-node/internal/atomicfile"
	"github.com/plasmactl/plasma-node/internal/regularfile"
)

// AnswerAuthTokenAuto, as [PrepareOptions.AnswerAuthToken], makes prepare
// generate a token for the release.
const AnswerAuthTokenAuto = "auto"

// AnswerAuthTokenNone, as [PrepareOptions.AnswerAuthToken], bakes no
// answer token into a 9.2 or later ISO, which otherwise gets one: the
// window then answers anyone who names a registered machine.
const AnswerAuthTokenNone = "none"

// AnswerTokenDir is the folder of the state dir holding each release's
// answer token, <StateDir>/answer-tokens/<release>: mode 0600 in a 0700
// folder, outside the assets folder the window serves.
const AnswerTokenDir = "answer-tokens"

// answerTokenName is the name part of the tokens prepare generates.
const answerTokenName = "node-provisioner"

// ErrAnswerTokenMissing is wrapped by the error of [AnswerToken] for a
// release whose manifest says its ISO sends a token that is not kept: the
// window cannot check it and must refuse every answer request.
var ErrAnswerTokenMissing = errors.New("answer token of the release is missing")

// checkAnswerToken accepts "<name>:<secret>", as prepare-iso
// --answer-auth-token wants it, of printable ASCII that needs no TOML
// escaping.
func checkAnswerToken(s string) error {
	name, secret, ok := strings.Cut(s, ":")
	if !ok || name == "" || secret == "" {
		return errors.New("answer token: want the form <name>:<secret>")
	}
	if strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r >= 0x7f || r == '"' || r == '\\' }) {
		return errors.New("answer token: want printable ASCII without spaces, quotes or backslashes")
	}
	return nil
}

// newAnswerToken returns a generated token: "node-provisioner:" and 32
// random bytes in hex.
func newAnswerToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("answer token: %w", err)
	}
	return answerTokenName + ":" + hex.EncodeToString(b), nil
}

// answerTokenPath is where the token of release is kept.
func answerTokenPath(stateDir, release string) string {
	return filepath.Join(stateDir, AnswerTokenDir, release)
}

// keepAnswerToken writes the token of release (0600 in a 0700 folder), or
// removes a former one when token is empty.
func keepAnswerToken(stateDir, release, token string) error {
	path := answerTokenPath(stateDir, release)
	if token == "" {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove the former answer token: %w", err)
		}
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("keep the answer token: %w", err)
	}
	if err := atomicfile.WriteFile(path, []byte(token+"\n"), 0o600); err != nil {
		return fmt.Errorf("keep the answer token: %w", err)
	}
	return nil
}

// AnswerToken returns the token the installer of a staged release sends
// as "Authorization: Bearer <token>" (9.2+, an ISO prepared with an
// answer token), or "" when its ISO sends none. The error wraps
// [ErrAnswerTokenMissing] when the manifest says there is one but it is
// not kept; the caller must then refuse answers rather than serve them
// unchecked.
func AnswerToken(ctx context.Context, stateDir, release string) (string, error) {
	raw, err := regularfile.Read(answerTokenPath(stateDir, release), 4<<10)
	if err == nil {
		return strings.TrimSpace(string(raw)), nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("read the answer token of %s: %w", release, err)
	}
	rel, rerr := ReadRelease(ctx, filepath.Join(stateDir, AssetsDir, release))
	if rerr == nil && rel.AnswerAuth {
		return "", fmt.Errorf("release %s: %w (prepare it again)", release, ErrAnswerTokenMissing)
	}
	return "", nil
}
