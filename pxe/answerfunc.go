package pxe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/plasmactl/plasma-node/answer"
)

// ErrNoAnswer is what an [AnswerFunc] returns (wrapped) for a machine it
// does not answer: the installer gets 404 and the message of the error.
var ErrNoAnswer = errors.New("no answer for this machine")

// AnswerFunc decides the answer of one installer request from the system
// info it posted (its MACs, DMI serial and UUID, disks, release). It is
// the seam for a program that embeds a [Server] with answer logic of its
// own instead of node-provisioner's registrations (package answer's
// Handler). It is called concurrently; a machine it must answer only
// once is its own business.
//
// Returning an error wrapping [ErrNoAnswer] refuses the machine with 404
// and that error's message, which the installer shows on its console; any
// other error is logged and the installer gets 500 without it.
type AnswerFunc func(ctx context.Context, si *answer.SystemInfo) (*answer.Answer, error)

// AnswerHandler returns the handler to mount at "POST /answer" in
// [Config.Routes] for f. It reads at most [answer.MaxBodySize] of system
// info ([answer.ParseSystemInfo]; 400 when it is not), takes the
// installer's version from it ([answer.DefaultVersion] when it has none;
// 400 below [answer.MinVersion]), calls f, and replies 200 with the
// answer rendered for that version ([answer.Render], keys the version
// does not know left out and logged), content type
// [answer.ContentTypeTOML]. log may be nil.
func AnswerHandler(f AnswerFunc, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "method not allowed; POST the system info", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, answer.MaxBodySize))
		if err != nil {
			http.Error(w, fmt.Sprintf("system-info body over %d bytes or unreadable", answer.MaxBodySize), http.StatusBadRequest)
			return
		}
		si, err := answer.ParseSystemInfo(body, r.Header.Get("Content-Type"))
		if err != nil {
			http.Error(w, "invalid system-info JSON: want a JSON object", http.StatusBadRequest)
			return
		}
		v, ok := si.Version()
		if !ok {
			v = answer.DefaultVersion
		}
		if !v.Supported() {
			http.Error(w, fmt.Sprintf("installer version %s is not supported (want %s or later)", v, answer.MinVersion), http.StatusBadRequest)
			return
		}
		a, err := f(r.Context(), si)
		if errors.Is(err, ErrNoAnswer) {
			log.Info("answer refused", "macs", si.MACs(), "serial", si.Serial(), "reason", err.Error())
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		if err == nil && a == nil {
			err = errors.New("the answer func returned no answer and no error")
		}
		var toml []byte
		if err == nil {
			toml, err = answer.Render(a, v, answer.RenderOptions{DropUnsupported: true, Logger: log})
		}
		if err != nil {
			log.Error("answer failed", "macs", si.MACs(), "err", err)
			http.Error(w, "answer failed; see the server log", http.StatusInternalServerError)
			return
		}
		log.Info("answer served", "macs", si.MACs(), "serial", si.Serial(), "installer", v.String())
		w.Header().Set("Content-Type", answer.ContentTypeTOML)
		w.Write(toml)
	})
}
