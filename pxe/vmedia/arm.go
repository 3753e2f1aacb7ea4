package vmedia

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/plasmactl/plasma-node/internal/atomicfile"
	"github.com/plasmactl/plasma-node/internal/regularfile"
	"github.com/plasmactl/plasma-node/pxe/window"
)

// DirName is the folder of the state folder that holds the armed media:
// one record per node (0600, in a 0700 folder) with the SHA-256 of its
// URL's token, never the token.
const DirName = "media"

// PathPrefix is where the window serves the media:
// /media/<token>/<node>.iso.
const PathPrefix = "/media/"

// ErrNoWindow is returned (wrapped) by [Dir.Arm] when no window is open
// on the state folder to serve the medium.
var ErrNoWindow = errors.New("no provisioning window is open to serve the medium")

// ErrNoTLS is returned (wrapped) by [Dir.Arm] asked for an HTTPS URL
// when the open window serves no HTTPS.
var ErrNoTLS = errors.New("the provisioning window serves no HTTPS (open it with TLS)")

// record is a node's armed medium, <DirName>/<node>.json.
type record struct {
	// Hash is the hex SHA-256 of the URL's token.
	Hash string `json:"sha256"`
	// WindowPID and WindowStarted name the window that serves it: the
	// URL dies with that window.
	WindowPID     int       `json:"window_pid"`
	WindowStarted time.Time `json:"window_started"`
	// Armed is when the URL was made.
	Armed time.Time `json:"armed"`
}

// Dir arms and disarms media in a state folder, for a process working on
// it (the power.Media of its BMC actions, over node names). The zero
// value is not usable: give StateDir.
type Dir struct {
	// StateDir is node-provisioner's state folder, the window's.
	StateDir string
}

// nameRE is a node name as registrations have it.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,63}$`)

// Arm makes a new one-time URL for node name's medium, served by the
// window open on the state folder, and returns it:
// http://WINDOW/media/<token>/<name>.iso, where the token (32 random
// bytes) is the credential, so a BMC that cannot verify the window's
// certificate can fetch it; with https, for a BMC that trusts the
// window's certificate, https://WINDOW/media/… on the window's TLS port.
// A URL armed before for the node dies. The caller checks the node boots
// from virtual media. Errors: [ErrNoWindow]; [ErrNoTLS] when https is
// asked of a window without TLS (nothing is armed).
func (d Dir) Arm(_ context.Context, name string, https bool) (string, error) {
	if !nameRE.MatchString(name) {
		return "", fmt.Errorf("arm the medium: invalid node name %q", name)
	}
	w, err := window.Read(d.StateDir)
	if err != nil || !w.Open(time.Now()) {
		return "", fmt.Errorf("arm the medium of %s: %w", name, ErrNoWindow)
	}
	if https && w.CertFingerprint == "" {
		return "", fmt.Errorf("arm the medium of %s over HTTPS: %w", name, ErrNoTLS)
	}
	base, err := mediaBase(w, https)
	if err != nil {
		return "", fmt.Errorf("arm the medium of %s: %w", name, err)
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("arm the medium of %s: %w", name, err)
	}
	token := base64.RawURLEncoding.EncodeToString(b)
	rec := record{Hash: hashOf(token), WindowPID: w.PID, WindowStarted: w.Started, Armed: time.Now().UTC()}
	data, _ := json.Marshal(rec)
	dir := filepath.Join(d.StateDir, DirName)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("arm the medium of %s: %w", name, err)
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, name+".json"), data, 0o600); err != nil {
		return "", fmt.Errorf("arm the medium of %s: %w", name, err)
	}
	return base + PathPrefix + token + "/" + name + ".iso", nil
}

// Disarm kills node name's URL; none armed is not an error.
func (d Dir) Disarm(_ context.Context, name string) error {
	if !nameRE.MatchString(name) {
		return nil
	}
	err := os.Remove(filepath.Join(d.StateDir, DirName, name+".json"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("disarm the medium of %s: %w", name, err)
	}
	return nil
}

// urlRE is the path of a medium's URL: its token and node.
var urlRE = regexp.MustCompile(`^/media/([A-Za-z0-9_-]{43})/([A-Za-z0-9_-]{1,63})\.iso$`)

// Ours says image has the shape of a medium URL ([Dir.Arm]), which a
// boot may replace or eject; another image is never touched.
func (d Dir) Ours(image string) bool {
	u, err := url.Parse(image)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && urlRE.MatchString(u.Path)
}

// Clear removes every armed medium: a window does it as it opens and
// closes, so that no URL outlives its window.
func Clear(stateDir string) error {
	err := os.RemoveAll(filepath.Join(stateDir, DirName))
	if err != nil {
		return fmt.Errorf("clear the armed media: %w", err)
	}
	return nil
}

// mediaBase is http://HOST:PORT (https:// with https) of the window w:
// the host its answer URL names (its base URL), else its listen
// address. A TLS window serves both on its one port.
func mediaBase(w *window.Record, https bool) (string, error) {
	scheme := "http://"
	if https {
		scheme = "https://"
	}
	if u, err := url.Parse(w.URL); err == nil && u.Host != "" {
		return scheme + u.Host, nil
	}
	if w.HTTP != "" && !strings.HasPrefix(w.HTTP, ":") {
		return scheme + w.HTTP, nil
	}
	return "", fmt.Errorf("%w: the window names no address a BMC can reach", ErrNoWindow)
}

// hashOf is the hex SHA-256 of token.
func hashOf(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

// readRecord reads node name's armed medium.
func readRecord(stateDir, name string) (record, error) {
	var rec record
	data, err := regularfile.Read(filepath.Join(stateDir, DirName, name+".json"), 4096)
	if err != nil {
		return rec, err
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		return rec, fmt.Errorf("medium record of %s: %w", name, err)
	}
	return rec, nil
}

// disarmIf disarms node unless its URL was armed anew (its record's
// hash is no longer hash).
func disarmIf(stateDir, node, hash string) {
	if rec, err := readRecord(stateDir, node); err == nil && rec.Hash == hash {
		os.Remove(filepath.Join(stateDir, DirName, node+".json"))
	}
}
