package main

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plasmactl/plasma-node/internal/cli"
	"github.com/plasmactl/plasma-node/pxe/bootassets"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/sbchain"
	"github.com/plasmactl/plasma-node/pxe/tlscert"
)

func (a *app) tlsCmd() *cobra.Command {
	c := &cobra.Command{Use: "tls", Short: "The HTTPS certificate of serve --tls and the daemon's API", Example: "  node-provisioner tls fingerprint"}
	var certFile string
	fpCmd := &cobra.Command{
		Use:   "fingerprint [--cert FILE]",
		Short: "Print the certificate's SHA-256 fingerprint in the installer's format (creating the state folder's certificate if needed)",
		Long: "Print the SHA-256 fingerprint of the state folder's certificate (made on first use), or with --cert of that\n" +
			"PEM file's first certificate, such as the site certificate the daemon serves with --tls-cert: clients pin it.",
		Example: "  node-provisioner --state-dir /var/lib/node-provisioner tls fingerprint\n  node-provisioner tls fingerprint --cert /etc/ssl/provisioner.pem",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if certFile != "" {
				fp, err := tlscert.FileFingerprint(certFile)
				if err != nil {
					return usageError(fmt.Errorf("--cert: %w", err))
				}
				fmt.Fprintln(a.out, fp)
				return nil
			}
			_, fp, err := tlscert.EnsureCertificate(cmd.Context(), a.stateDir, nil)
			if err != nil {
				return err
			}
			fmt.Fprintln(a.out, fp)
			return nil
		},
	}
	fpCmd.Flags().StringVar(&certFile, "cert", "", "print the fingerprint of this PEM certificate file instead")
	c.AddCommand(fpCmd)
	return c
}

func (a *app) prepareCmd() *cobra.Command {
	var o bootassets.PrepareOptions
	var patchAsk, discover bool
	c := &cobra.Command{
		Use:   "prepare --iso FILE [--answer-url URL | --generic] [--cert-fingerprint FP|auto] [--answer-auth-token NAME:SECRET|auto] [--release NAME]",
		Short: "Stage a Proxmox VE installer ISO as boot assets (no root, no loop mount)",
		Example: `  node-provisioner prepare --iso proxmox-ve_9.2-1.iso
  node-provisioner prepare --iso proxmox-ve_9.2-1.iso --answer-url https://10.0.0.2:8090/answer --cert-fingerprint auto
  node-provisioner prepare --iso proxmox-ve_9.2-1.iso --generic`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.ISO == "" {
				return usageError(errors.New("--iso is required: the Proxmox VE installer ISO to stage"))
			}
			if o.Generic && (o.AnswerURL != "" || o.CertFingerprint != "") {
				return usageError(errors.New("--generic with --answer-url or --cert-fingerprint: a generic ISO takes both from the site's DHCP options 250 and 251 or DNS TXT records, and one baked in would win over them; give --generic alone"))
			}
			if _, err := os.Stat(o.ISO); err != nil {
				return usageError(fmt.Errorf("--iso: %w", err))
			}
			bar := cli.NewProgress(a.errw)
			// The progress says each warning (bar.Line below); the log
			// would say it again.
			o.StateDir, o.Logger = a.stateDir, a.logging.Reported(a.log)
			o.Progress = func(p bootassets.Progress) {
				switch p.Kind {
				case bootassets.ProgressCopy:
					bar.Copy(p.Step, p.Done, p.Total, p.Finished)
				case bootassets.ProgressWarning:
					bar.Line("node-provisioner: warning: " + p.Step)
				default:
					bar.Line(p.Step)
				}
			}
			o.FingerprintFunc = func() (string, error) {
				// A certificate made now names the answer URL's host, so
				// that a client checking names (not only the pin) accepts it.
				var hosts []string
				if u, err := url.Parse(o.AnswerURL); err == nil && u.Hostname() != "" {
					hosts = []string{u.Hostname()}
				}
				_, fp, err := tlscert.EnsureCertificate(cmd.Context(), a.stateDir, hosts)
				return fp, err
			}
			if discover {
				// The discovery initrd's /init is this binary (runAgent).
				exe, err := os.Executable()
				if err != nil {
					return fmt.Errorf("--discovery: %w", err)
				}
				o.DiscoveryAgent = exe
			}
			o.PatchAsk = patchAsk
			if st, err := a.stores(cmd.Context()); err == nil {
				ask, err := registry.AsksForBootDisk(cmd.Context(), st.Registrations())
				o.PatchAsk = o.PatchAsk || (err == nil && ask)
			}
			rel, err := bootassets.Prepare(cmd.Context(), o)
			var broken *sbchain.PieceError
			if errors.Is(err, bootassets.ErrNotAutoInstallISO) || errors.As(err, &broken) {
				return usageError(err)
			}
			if errors.Is(err, bootassets.ErrNotStatic) {
				return usageError(fmt.Errorf("--discovery: %w", err))
			}
			if o.SecureBootDir != "" && errors.Is(err, fs.ErrNotExist) {
				return usageError(fmt.Errorf("--secure-boot-dir: %w", err))
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(a.out, "Staged %s in %s (%d assets", rel.Name, rel.Dir, len(rel.Assets))
			if rel.AskPatched {
				fmt.Fprint(a.out, ", console boot-disk prompt patched in")
			}
			if discover {
				fmt.Fprint(a.out, ", discovery initrd built")
			}
			if rel.Generic() {
				fmt.Fprint(a.out, ", generic: the installer takes its answer URL from the site's DHCP option 250 or DNS (node-provisioner publish prints them)")
			}
			if rel.AnswerAuth {
				fmt.Fprint(a.out, ", answer requests need the ISO's token")
			}
			if sb := rel.SecureBoot; sb != nil {
				fmt.Fprintf(a.out, ", Secure Boot chain from the %s", sb.Source)
				if len(sb.MOKNeeded) > 0 {
					fmt.Fprintf(a.out, " (MOK needed for the %s)", strings.Join(sb.MOKNeeded, " and "))
				}
			}
			fmt.Fprintln(a.out, ")")
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&o.ISO, "iso", "", "the Proxmox VE installer ISO (auto-install capable, 8.2 or later)")
	f.BoolVar(&o.Generic, "generic", false, "stage a generic ISO, as prepare-iso --fetch-from http without --url does (needs xorriso): the installer finds the answer URL by the site's DHCP option 250 or DNS TXT record (see publish); the release is <release>-generic, beside a baked one")
	f.StringVar(&o.AnswerURL, "answer-url", "", "bake this answer URL into a copy of the ISO, as prepare-iso --fetch-from http does (needs xorriso)")
	f.StringVar(&o.CertFingerprint, "cert-fingerprint", "", "TLS fingerprint the installer pins for the answer URL, or auto for serve --tls's certificate")
	f.StringVar(&o.AnswerAuthToken, "answer-auth-token", "", "bake this answer token (NAME:SECRET) into the ISO, or auto to generate one, as prepare-iso --answer-auth-token does (9.2 ISOs); serve then refuses answer requests without it")
	f.StringVar(&o.Release, "release", "", "name of the release folder (default: from the ISO)")
	f.StringVar(&o.SecureBootDir, "secure-boot-dir", "", "stage the Secure Boot chain from this folder (a Microsoft-signed shimx64.efi and a signed network grubx64.efi, such as /usr/lib/shim and /usr/lib/grub/x86_64-efi-signed's files copied together) instead of the ISO's EFI boot files")
	f.BoolVar(&discover, "discovery", false, "build the discovery initrd (this binary as its /init, with the storage and network modules of the ISO's squashfs; needs a node-provisioner built with CGO_ENABLED=0 and unsquashfs) for serve --discover")
	f.BoolVar(&patchAsk, "patch-ask", false, "patch the console boot-disk prompt in even when no registration asks for it")
	return c
}
