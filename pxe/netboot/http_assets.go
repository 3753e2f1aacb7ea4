package netboot

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"strings"

	"github.com/plasmactl/plasma-node/pxe/bootassets"
	"github.com/plasmactl/plasma-node/pxe/events"
)

// asset serves GET /assets/{release}/{file} from <state-dir>/assets
// through an os.Root, so neither "..", an absolute name nor a symbolic
// link can leave the assets folder. Names must be plain (letters, digits,
// '.', '_', '+', '-', not starting with '.'); folders and other
// non-regular files get 403.
func (h *Handler) asset(w http.ResponseWriter, r *http.Request) {
	release, file := r.PathValue("release"), r.PathValue("file")
	if !assetNameRE.MatchString(release) || !assetNameRE.MatchString(file) {
		h.log.Warn("asset refused: bad name", "release", release, "file", file, "client_ip", hostOf(r.RemoteAddr))
		http.Error(w, "invalid asset path: want /assets/<release>/<file> with plain names", http.StatusBadRequest)
		return
	}
	root, err := os.OpenRoot(h.cfg.AssetsDir)
	if err != nil {
		h.log.Warn("asset refused: no assets folder", "err", err)
		http.Error(w, "no boot assets staged", http.StatusNotFound)
		return
	}
	defer root.Close()
	f, err := root.Open(release + "/" + file)
	if err != nil {
		status, msg := http.StatusForbidden, "asset refused"
		if errors.Is(err, fs.ErrNotExist) {
			status, msg = http.StatusNotFound, "no such asset"
		}
		h.log.Warn("asset refused", "release", release, "file", file, "status", status, "err", err)
		http.Error(w, msg, status)
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		msg := "not a file"
		if err == nil && fi.IsDir() {
			msg = "directory listing disabled"
		}
		http.Error(w, msg, http.StatusForbidden)
		return
	}
	cw := &countingWriter{ResponseWriter: w}
	w.Header().Set("Content-Type", "application/octet-stream")
	if sr, ok := satisfiableRanges(r); !ok {
		w.Header().Set("Content-Range", fmt.Sprintf("bytes */%d", fi.Size()))
		http.Error(cw, "requested range not satisfiable", http.StatusRequestedRangeNotSatisfiable)
	} else {
		http.ServeContent(cw, sr, file, fi.ModTime(), f)
	}
	h.cfg.Metrics.assetSent(cw.n)
	if r.Method != http.MethodGet {
		return
	}
	stage := events.Asset
	switch file {
	case bootassets.AssetKernel:
		stage = events.Kernel
	case bootassets.AssetNetbootInitrd:
		stage = events.Initrd
	}
	detail := fmt.Sprintf("%s/%s: %d, %d of %d bytes sent", release, file, cw.code(), cw.n, fi.Size())
	if rg := r.Header.Get("Range"); rg != "" {
		detail += ", range " + rg
	}
	mac, ip := "", hostOf(r.RemoteAddr)
	if m := r.URL.Query().Get("mac"); m != "" {
		if n, err := normalizeMAC(m); err == nil {
			mac = n
		} else {
			// A request that names a machine wrongly is not filed
			// under its address's machine.
			detail += ", unparsable mac " + quoteShort(m)
			ip = ""
		}
	}
	h.cfg.Timeline.RecordFrom(ip, mac, "", stage, detail)
	h.log.Info("asset sent", "release", release, "file", file, "status", cw.code(), "bytes", cw.n, "mac", mac,
		"client_ip", hostOf(r.RemoteAddr), "range", strings.TrimSpace(r.Header.Get("Range")))
}

// satisfiableRanges drops the empty suffix ranges ("-0") from r's Range
// header, which [http.ServeContent] would answer with an empty 206 where
// RFC 9110 (section 14.1.3) makes them unsatisfiable. It returns r, or a
// copy with the ranges left, and false when none is left (416). A Range
// under If-Range is left to ServeContent, which may ignore it.
func satisfiableRanges(r *http.Request) (*http.Request, bool) {
	spec, ok := strings.CutPrefix(r.Header.Get("Range"), "bytes=")
	if !ok || r.Header.Get("If-Range") != "" {
		return r, true
	}
	var kept []string
	for part := range strings.SplitSeq(spec, ",") {
		part = strings.TrimSpace(part)
		if digits, ok := strings.CutPrefix(part, "-"); ok && digits != "" && strings.Trim(digits, "0") == "" {
			continue
		}
		kept = append(kept, part)
	}
	if len(kept) == len(strings.Split(spec, ",")) {
		return r, true
	}
	if len(kept) == 0 {
		return r, false
	}
	r = r.Clone(r.Context())
	r.Header.Set("Range", "bytes="+strings.Join(kept, ","))
	return r, true
}
