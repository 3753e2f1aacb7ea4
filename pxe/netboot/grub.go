package netboot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/plasmactl/plasma-node/pxe/bootassets"
	"github.com/plasmactl/plasma-node/pxe/events"
)

// The Secure Boot chain's grub configuration, served over HTTP and, for
// the loader, written into the TFTP root.
const (
	// grubScriptPath is the URL path of a machine's grub configuration,
	// asked for with ?mac=<its MAC>: the install entry or an exit.
	grubScriptPath = "/boot.grub"
	// GrubConfigName is where a network grub image looks for its
	// configuration, relative to the root of the server it was loaded
	// from: grub/grub.cfg (Debian's grubnetx64 reads $prefix/grub.cfg,
	// prefix /grub). The window writes the loader config there in the
	// TFTP root (sourcing the machine's entry by TFTP), and serves it at
	// /grub/grub.cfg over HTTP (sourcing the entry from grubScriptPath)
	// for a grub loaded by UEFI HTTP boot, whose prefix is on the
	// window's HTTP server; only a grub with the http module reads it.
	GrubConfigName = "grub/grub.cfg"
	// grubEntryDir is the folder of the TFTP root where grub finds its
	// machine's entry, <mac>.cfg, generated on request. The entry fetches
	// the kernel and the initrd with grub's http module when the
	// release's grub carries it (its manifest says so), else by TFTP from
	// the server grub was loaded from (Debian 12's signed grub carries
	// tftp but not http).
	grubEntryDir = "grub/machine"
	// grubMACVar is grub's variable holding the boot NIC's MAC address.
	grubMACVar = "${net_default_mac}"
)

// GrubDevice is grub's device for the HTTP server at baseURL, such as
// "(http,192.0.2.10:8090)". Grub fetches plain HTTP only: an https base
// is fetched over plain HTTP on the same port, as the window serves its
// boot files both ways.
func GrubDevice(baseURL string) string {
	host := baseURL
	if u, err := url.Parse(baseURL); err == nil && u.Host != "" {
		host = u.Host
	}
	return "(http," + host + ")"
}

// GrubLoaderConfig is the grub.cfg every machine's grub reads first from
// the TFTP root: it sources the machine's own entry from the window by
// its MAC (over TFTP, grubEntryDir), and exits to the firmware,
// which boots the next device, when that cannot be had (the window
// closed). It is a pure function.
func GrubLoaderConfig() string {
	return grubLoader("(tftp)/" + grubEntryDir + "/" + grubMACVar + ".cfg")
}

// grubLoaderConfigHTTP is [GrubLoaderConfig] for a grub loaded by UEFI
// HTTP boot, served at /[GrubConfigName]: it sources the machine's entry
// from grubScriptPath on the window at baseURL ([GrubDevice]) with
// grub's http module. It is a pure function.
func grubLoaderConfigHTTP(baseURL string) string {
	return grubLoader(GrubDevice(baseURL) + grubScriptPath + "?mac=" + grubMACVar)
}

// grubLoader is the loader configuration sourcing the entry at path.
func grubLoader(path string) string {
	return "# plasma-node: this machine's entry comes from the window, by its MAC.\n" +
		"set timeout=0\n" +
		"source \"" + oneLine(path) + "\"\n" +
		"echo 'plasma-node: no boot entry from the window; booting the next device'\n" +
		"exit\n"
}

// GrubScript renders a machine's grub configuration, the Secure Boot
// twin of IPXEScript: for an install, the kernel and the initrd from
// /assets/<Release>/ of GrubDevice (by default grub's http module on
// BaseURL's host and port; "(tftp)" for a grub without it) with the same
// kernel command line (grub hands the initrd to the kernel itself, so no
// initrd= argument); else a refusal that exits grub, so the firmware
// boots its next boot option and an installed node never reinstalls. It
// is a pure function. Words a field gives are quoted, and control
// characters in them become spaces, so a field cannot add a command.
func GrubScript(s BootScript) string {
	var b strings.Builder
	if s.Node == "" {
		reason := s.Reason
		if reason == "" {
			reason = "no pending registration for this machine"
		}
		b.WriteString("# plasma-node: this machine is not installed now.\n")
		b.WriteString("# Exiting returns to the firmware, which boots the next device, so an\n")
		b.WriteString("# installed node never reinstalls.\n")
		b.WriteString("echo " + grubQuote("plasma-node: "+reason+"; booting the next device") + "\n")
		b.WriteString("exit\n")
		return b.String()
	}
	dev := s.GrubDevice
	if dev == "" {
		dev = GrubDevice(s.BaseURL)
	}
	mac := grubMACVar
	if m, err := normalizeMAC(s.MAC); err == nil {
		mac = m
	}
	base := dev + "/" + assetsPath + "/" + url.PathEscape(s.Release) + "/"
	query := "?mac=" + mac
	if strings.HasPrefix(dev, "(tftp") {
		query = "" // a TFTP name has no query; the client's address links the download to its MAC
	}
	args := s.KernelArgs
	if args == "" {
		args = defaultKernelArgs
	}
	b.WriteString("# plasma-node: Proxmox VE automated installer for node " + oneLine(s.Node) + " (release " + oneLine(s.Release) + "), Secure Boot chain.\n")
	b.WriteString("set timeout=0\n")
	b.WriteString("echo " + grubQuote("plasma-node: installing Proxmox VE on "+s.Node) + "\n")
	b.WriteString("linux \"" + oneLine(base+bootassets.AssetKernel+query) + "\"")
	for _, a := range strings.Fields(args) {
		b.WriteString(" " + grubQuote(a))
	}
	b.WriteString("\n")
	b.WriteString("initrd \"" + oneLine(base+bootassets.AssetNetbootInitrd+query) + "\"\n")
	b.WriteString("boot\n")
	return b.String()
}

// grubQuote quotes s as one word of grub's script language: in single
// quotes, where nothing expands, with a single quote written as '\”.
// Control characters become spaces.
func grubQuote(s string) string {
	return "'" + strings.ReplaceAll(oneLine(s), "'", `'\''`) + "'"
}

// grubConfig serves GET /grub/grub.cfg: the loader configuration of a
// grub loaded by UEFI HTTP boot (grubLoaderConfigHTTP).
func (h *Handler) grubConfig(w http.ResponseWriter, r *http.Request) {
	h.log.Info("grub configuration sent", "file", GrubConfigName, "client", hostOf(r.RemoteAddr))
	noStore(w, contentTypeIPXE)
	io.WriteString(w, grubLoaderConfigHTTP(h.baseFor(hostOf(r.RemoteAddr))))
}

// grubScript serves GET /boot.grub?mac=: the machine's grub entry, chosen
// as the iPXE script is, for a grub with the http module.
func (h *Handler) grubScript(w http.ResponseWriter, r *http.Request) {
	noStore(w, contentTypeIPXE)
	s, err := h.grubEntry(r.Context(), hostOf(r.RemoteAddr), r.URL.Query().Get("mac"))
	if err != nil {
		h.log.Error("cannot choose a grub entry", "err", err)
		http.Error(w, "cannot decide the boot entry; see the server log", http.StatusInternalServerError)
		return
	}
	io.WriteString(w, GrubScript(s))
}

// TFTPFile serves, for the window's TFTP server, what the Secure Boot
// chain's grub reads beside the TFTP root: its machine's entry
// (<grubEntryDir>/<mac>.cfg, chosen as the iPXE script is, recorded in
// the timeline) and the release's kernel and initrd
// (assets/<release>/<file>). Other names are not its own (ok false).
func (h *Handler) TFTPFile(ctx context.Context, name string, peer netip.AddrPort) (data []byte, f *os.File, ok bool, err error) {
	ip := ""
	if peer.IsValid() {
		ip = peer.Addr().String()
	}
	if rest, found := strings.CutPrefix(name, grubEntryDir+"/"); found {
		mac, isCfg := strings.CutSuffix(rest, ".cfg")
		if !isCfg {
			return nil, nil, false, nil
		}
		s, err := h.grubEntry(ctx, ip, mac)
		if err != nil {
			h.log.Error("cannot choose a grub entry", "err", err)
			return nil, nil, true, errors.New("cannot decide the boot entry; see the server log")
		}
		s.GrubDevice = h.entryDevice(ctx, s.BaseURL, s.Release)
		return []byte(GrubScript(s)), nil, true, nil
	}
	rest, found := strings.CutPrefix(name, assetsPath+"/")
	if !found || h.cfg.AssetsDir == "" {
		return nil, nil, false, nil
	}
	release, file, _ := strings.Cut(rest, "/")
	if !assetNameRE.MatchString(release) || (file != bootassets.AssetKernel && file != bootassets.AssetNetbootInitrd) {
		return nil, nil, false, nil
	}
	root, err := os.OpenRoot(h.cfg.AssetsDir)
	if err != nil {
		return nil, nil, true, errors.New("file not found")
	}
	defer root.Close()
	// Opened without blocking, so that a FIFO under the name cannot hold
	// the transfer; anything but a regular file is refused.
	f, err = root.OpenFile(release+"/"+file, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, true, errors.New("file not found")
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, true, errors.New("access violation: not a regular file")
	}
	return nil, f, true, nil
}

// grubEntry chooses a machine's grub entry and records it.
func (h *Handler) grubEntry(ctx context.Context, ip, rawMAC string) (BootScript, error) {
	s, err := h.choose(ctx, h.baseFor(ip), rawMAC)
	if err != nil {
		return s, err
	}
	install := s.Node != ""
	h.cfg.Metrics.scriptServed(install)
	detail := "grub exit: " + s.Reason
	if install {
		detail = fmt.Sprintf("grub install release %s (%s)", s.Release, s.Reason)
		h.log.Info("grub entry: install", "node", s.Node, "mac", s.MAC, "release", s.Release, "match", s.Reason)
		s.Reason = ""
	} else {
		h.log.Info("grub entry: exit", "mac", s.MAC, "reason", s.Reason)
	}
	h.cfg.Timeline.RecordFrom(ip, s.MAC, s.Node, events.Script, detail)
	return s, nil
}

// entryDevice is where the entry a grub read by TFTP fetches the
// release's kernel and initrd from: the window's HTTP server through
// grub's http module when the release's manifest says its grub carries
// it (the window at base), else "(tftp)", the server grub was loaded
// from.
func (h *Handler) entryDevice(ctx context.Context, base, release string) string {
	if release == "" || h.cfg.AssetsDir == "" || !assetNameRE.MatchString(release) {
		return "(tftp)"
	}
	rel, err := bootassets.ReadRelease(ctx, filepath.Join(h.cfg.AssetsDir, release))
	if err != nil || rel.SecureBoot == nil || !rel.SecureBoot.GrubHTTP {
		return "(tftp)"
	}
	return GrubDevice(base)
}
