package pxe

import (
	"fmt"
	"net/http"
	"os"
	"strings"
)

// IPXEFiles serves the TFTP root's iPXE binaries over HTTP, for UEFI
// HTTP-boot clients (offered <base>/ipxe/<binary>). It serves only regular
// files inside root: os.Root refuses paths and symlinks that leave it,
// and folders are not listed.
func IPXEFiles(root string) (http.Handler, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("ipxe files: %w", err)
	}
	fsys := r.FS()
	files := http.FileServerFS(fsys)
	return http.StripPrefix("/ipxe", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		name := strings.TrimPrefix(req.URL.Path, "/")
		if name == "" || strings.HasSuffix(name, "/") || strings.ContainsRune(name, 0) {
			http.NotFound(w, req)
			return
		}
		if st, err := r.Stat(name); err != nil || !st.Mode().IsRegular() {
			http.NotFound(w, req)
			return
		}
		files.ServeHTTP(w, req)
	})), nil
}
