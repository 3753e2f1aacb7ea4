package pxe

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/plasmactl/plasma-node/internal/atomicfile"
	"github.com/plasmactl/plasma-node/pxe/bootassets"
	"github.com/plasmactl/plasma-node/pxe/netboot"
	"github.com/plasmactl/plasma-node/pxe/proxydhcp"
)

// stageSecureBoot puts the Secure Boot chain of the release the window
// boots into the TFTP root (which UEFI HTTP boot reads too, under
// /ipxe/): the shim and the grub prepare staged in the release folder
// ([bootassets.AssetShim], [bootassets.AssetGrub]), and grub's loader configuration, which
// sources each machine's entry from the window by TFTP. It reports whether a chain was
// staged. A window with SecureBoot on refuses to open without one.
func (s *Server) stageSecureBoot(ctx context.Context, tftpRoot string) (bool, error) {
	cfg := &s.cfg
	refuse := func(reason string) (bool, error) {
		if cfg.SecureBoot {
			return false, &ConfigError{Field: "SecureBoot", Reason: reason}
		}
		return false, nil
	}
	rel := cfg.Release
	if rel == "" {
		rs, err := bootassets.StagedReleases(ctx, cfg.StateDir)
		if err != nil || len(rs) != 1 {
			return refuse("the Secure Boot chain comes from the release booted: stage one with prepare, or choose one")
		}
		rel = rs[0]
	}
	src := filepath.Join(cfg.StateDir, bootassets.AssetsDir, rel)
	for _, n := range []string{proxydhcp.ShimBinary, proxydhcp.GrubBinary} {
		if fi, err := os.Stat(filepath.Join(src, n)); err != nil || !fi.Mode().IsRegular() {
			return refuse(fmt.Sprintf("release %s has no Secure Boot chain (%s): prepare it from an ISO whose grub netboots, or with a chain folder holding a signed shim and a network grub", rel, n))
		}
	}
	if err := bootassets.StageIPXE(src, tftpRoot, []string{proxydhcp.ShimBinary, proxydhcp.GrubBinary}); err != nil {
		return false, fmt.Errorf("stage the Secure Boot chain: %w", err)
	}
	cfgPath := filepath.Join(tftpRoot, filepath.FromSlash(netboot.GrubConfigName))
	if err := os.MkdirAll(filepath.Dir(cfgPath), 0o755); err != nil {
		return false, fmt.Errorf("stage the Secure Boot chain: %w", err)
	}
	if err := atomicfile.WriteFile(cfgPath, []byte(netboot.GrubLoaderConfig()), 0o644); err != nil {
		return false, fmt.Errorf("stage the Secure Boot chain: %w", err)
	}
	s.log.Info("Secure Boot chain staged", "release", rel, "window", cfg.SecureBoot)
	return true, nil
}
