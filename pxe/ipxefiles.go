package pxe

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
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

// InterfaceIPv4 returns the first IPv4 address of a network interface,
// the address a proxy-DHCP window on it offers as next-server.
func InterfaceIPv4(name string) (netip.Addr, error) {
	ifc, err := net.InterfaceByName(name)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("--dhcp-interface %q: %w", name, err)
	}
	addrs, err := ifc.Addrs()
	if err != nil {
		return netip.Addr{}, fmt.Errorf("--dhcp-interface %q: %w", name, err)
	}
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil && p.Addr().Is4() {
			return p.Addr(), nil
		}
	}
	return netip.Addr{}, fmt.Errorf("--dhcp-interface %q has no IPv4 address; give --server-ip", name)
}
