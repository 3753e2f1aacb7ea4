package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/e2e/internal/answerclient"
)

// initrdISO is where a network boot's initrd carries the ISO (prepare
// appends it); a machine booted from the CD has none.
const initrdISO = "/proxmox.iso"

// findMedium returns the installer's medium: /proxmox.iso in the initrd,
// else, as the installer's init looks for its CD, the first block device
// holding an ISO 9660 image with the Proxmox .cd-info file. The BMC's
// virtual CD reaches the emulator's kernel as a read-only virtio disk
// (the test kernel has no CD-ROM drivers).
func findMedium() (string, error) {
	if _, err := os.Stat(initrdISO); err == nil {
		return initrdISO, nil
	}
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		names, _ := filepath.Glob("/sys/block/*")
		sort.Strings(names)
		for _, n := range names {
			dev := "/dev/" + filepath.Base(n)
			f, err := os.Open(dev)
			if err != nil {
				continue
			}
			_, err = isoFile(f, ".cd-info")
			f.Close()
			if err == nil {
				step("the installer's CD is %s", dev)
				return dev, nil
			}
		}
		if time.Now().After(end) {
			return "", errors.New("no installer medium: no /proxmox.iso in the initrd and no block device holds the installer's ISO")
		}
	}
}

// answerFromMedium reads /answer.toml from the medium, as
// proxmox-fetch-answer's iso mode reads /cdrom/answer.toml, and takes it
// with installer v's parser.
func answerFromMedium(medium string, v answer.Version) (*answerclient.Reply, error) {
	f, err := os.Open(medium)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	raw, err := isoFile(f, "answer.toml")
	if err != nil {
		return nil, fmt.Errorf("%s: %w (an iso-mode medium carries the answer)", medium, err)
	}
	a, err := answer.Decode(bytes.TrimSpace(raw), v)
	if err != nil {
		return nil, fmt.Errorf("answer.toml on the medium refused by the %s parser: %w", v, err)
	}
	step("answer from the medium's /answer.toml")
	return &answerclient.Reply{Answer: a, Raw: raw, ContentType: "iso"}, nil
}

// scheme is where the answer came from, for the marker line: the answer
// URL's scheme, or "iso" for the medium's file.
func scheme(m modeFile) string {
	if m.Mode == "iso" {
		return "iso"
	}
	return strings.SplitN(m.HTTP.URL, ":", 2)[0]
}

// mediumDisk is the block device name of a medium that is a device ("vdb"
// for /dev/vdb), "" for the initrd's file: the installer never counts
// its own CD among the disks.
func mediumDisk(medium string) string {
	if strings.HasPrefix(medium, "/dev/") {
		return strings.TrimPrefix(medium, "/dev/")
	}
	return ""
}
