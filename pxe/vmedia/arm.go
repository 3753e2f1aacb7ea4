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
	"github.com/plasmactl/plasma-node/pxe/bootassets"
	"github.com/plasmactl/plasma-node/pxe/window"
)

// DirName is the folder of the state folder that holds the armed media:
// one record per node (0600, in a 0700 folder) with the SHA-256 of its
// URL's token, never the token.
const DirName = "media"

// PathPrefix is where the window serves the media:
// /media/<token>/<node>.iso, and /media/<token>/<node>.img for an
// answer image.
const PathPrefix = "/media/"

// Kind is which of a node's media a URL serves.
type Kind int

// The kinds of media.
const (
	// Installer is the installer's ISO, lent as the virtual CD:
	// /media/<token>/<node>.iso.
	Installer Kind = iota
	// AnswerImage is the node's answer image of the installer's
	// partition mode, lent as a removable disk beside the CD:
	// /media/<token>/<node>.img, with a token of its own.
	AnswerImage
)

// ext is the file extension of k's URLs.
func (k Kind) ext() string {
	if k == AnswerImage {
		return ".img"
	}
	return ".iso"
}

// recordName is the file of node name's armed medium of kind k in
// [DirName]: NAME.json, NAME.img.json (a node name has no dot).
func recordName(name string, k Kind) string {
	if k == AnswerImage {
		return name + ".img.json"
	}
	return name + ".json"
}

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
func (d Dir) Arm(ctx context.Context, name string, https bool) (string, error) {
	return d.arm(ctx, name, Installer, https)
}

// ArmAnswer makes a new one-time URL for node name's answer image (the
// installer's partition mode: [AnswerImage]), with a token of its own,
// as Arm does for its CD: http://WINDOW/media/<token>/<name>.img. It is
// refused, wrapping [bootassets.ErrNoPartitionMode], when the window
// makes media of a release whose installer has no partition mode.
func (d Dir) ArmAnswer(ctx context.Context, name string, https bool) (string, error) {
	return d.arm(ctx, name, AnswerImage, https)
}

func (d Dir) arm(_ context.Context, name string, k Kind, https bool) (string, error) {
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
	if k == AnswerImage && w.MediaInstaller != "" && !bootassets.PartitionMode(w.MediaInstaller) {
		return "", fmt.Errorf("arm the answer image of %s: the window's release is Proxmox VE %s: %w", name, w.MediaInstaller, bootassets.ErrNoPartitionMode)
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
	if err := atomicfile.WriteFile(filepath.Join(dir, recordName(name, k)), data, 0o600); err != nil {
		return "", fmt.Errorf("arm the medium of %s: %w", name, err)
	}
	return base + PathPrefix + token + "/" + name + k.ext(), nil
}

// Disarm kills node name's URLs, its CD's and its answer image's; none
// armed is not an error.
func (d Dir) Disarm(_ context.Context, name string) error {
	if !nameRE.MatchString(name) {
		return nil
	}
	var errs []error
	for _, k := range []Kind{Installer, AnswerImage} {
		err := os.Remove(filepath.Join(d.StateDir, DirName, recordName(name, k)))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("disarm the medium of %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// urlRE is the path of a medium's URL: its token, node and kind.
var urlRE = regexp.MustCompile(`^/media/([A-Za-z0-9_-]{43})/([A-Za-z0-9_-]{1,63})\.(iso|img)$`)

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

// readRecord reads node name's armed medium of kind k.
func readRecord(stateDir, name string, k Kind) (record, error) {
	var rec record
	data, err := regularfile.Read(filepath.Join(stateDir, DirName, recordName(name, k)), 4096)
	if err != nil {
		return rec, err
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		return rec, fmt.Errorf("medium record of %s: %w", name, err)
	}
	return rec, nil
}

// disarmIf disarms node's medium of kind k unless its URL was armed
// anew (its record's hash is no longer hash).
func disarmIf(stateDir, node string, k Kind, hash string) {
	if rec, err := readRecord(stateDir, node, k); err == nil && rec.Hash == hash {
		os.Remove(filepath.Join(stateDir, DirName, recordName(node, k)))
	}
}
