package pxe

import (
	"net/http"
	gopath "path"
	"strings"
)

// bootFilesPrefix is the URL folder of the boot files UEFI HTTP boot
// fetches (the TFTP root's binaries, the Secure Boot chain's shim and
// grub).
const bootFilesPrefix = "/ipxe/"

// httpBootPath returns r with the path of a boot file asked for with
// doubled slashes made clean, else r itself. Shim, loaded by UEFI HTTP
// boot from <base>/ipxe/shimx64.efi, asks for its next loader at the
// offered URL's folder joined to its own name for it, "\grubx64.efi" with
// the backslash turned: <base>/ipxe//grubx64.efi (shim's httpboot.c,
// generate_next_uri). The mux would answer that with a redirect to the
// clean path, which shim does not follow (it takes any status but 200 as
// an HTTP error), so the clean path is served at once. Only paths that stay
// under the boot files' folder when cleaned are changed.
func httpBootPath(r *http.Request) *http.Request {
	p := r.URL.Path
	if !strings.HasPrefix(p, bootFilesPrefix) || !strings.Contains(p, "//") {
		return r
	}
	clean := gopath.Clean(p)
	if !strings.HasPrefix(clean, bootFilesPrefix) {
		return r
	}
	r2 := new(http.Request)
	*r2 = *r
	u := *r.URL
	u.Path, u.RawPath = clean, ""
	r2.URL = &u
	return r2
}
