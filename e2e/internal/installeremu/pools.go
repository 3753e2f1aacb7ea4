package main

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// poolLabel starts what the emulator writes at the head of a data disk
// for a pool it creates, followed by the pool's name and a newline: its
// stand-in for a ZFS label. The e2e test reads it from the disk image.
const poolLabel = "PLASMA-EMU-ZPOOL "

// poolWipe is how much of a disk a created pool overwrites, from its
// start: what the disk held there is gone, as zpool create -f loses it.
const poolWipe = 1 << 20

var (
	poolLineRE = regexp.MustCompile(`(?m)^\tpool ('[^']*'(?: '[^']*')*) \|\| rc=1$`)
	quotedRE   = regexp.MustCompile(`'([^']*)'`)
)

// actPools acts out, on the machine's own disks, what the node's
// first-boot script decides for each data pool it declares (pxe/registry
// FirstBootScript), as zpool would on a real node: with WIPE_DATA=0 a
// pool whose disks all carry its label is imported (its disks left as
// they are), a disk that carries another pool's label is refused (the
// script creates nothing), and disks with no label get the pool created
// (the label written over the first MiB); with WIPE_DATA=1 every pool is
// created. It does not run the script: the emulator's initramfs has no
// shell. It returns NAME:imported|created|refused for each pool, joined
// by commas, or "none".
func actPools(script []byte, disks []emuDisk) (string, error) {
	wipe := bytes.Contains(script, []byte("\nWIPE_DATA=1\n"))
	if !wipe && !bytes.Contains(script, []byte("\nWIPE_DATA=0\n")) {
		return "", fmt.Errorf("first-boot script sets no WIPE_DATA")
	}
	var out []string
	for _, m := range poolLineRE.FindAllSubmatch(script, -1) {
		var args []string
		for _, q := range quotedRE.FindAllSubmatch(m[1], -1) {
			args = append(args, string(q[1]))
		}
		name, devs := args[0], []string{}
		for _, spec := range args[2:] {
			dev, err := poolDisk(spec, disks)
			if err != nil {
				return "", fmt.Errorf("pool %s: %w", name, err)
			}
			devs = append(devs, dev)
		}
		what, err := actPool(name, devs, wipe)
		if err != nil {
			return "", fmt.Errorf("pool %s: %w", name, err)
		}
		step("first-boot: pool %s %s on %s (wipe data %t)", name, what, strings.Join(devs, " "), wipe)
		out = append(out, name+":"+what)
	}
	if len(out) == 0 {
		return "none", nil
	}
	return strings.Join(out, ","), nil
}

// poolDisk finds the device of a pool disk spec (serial:ID or name:NAME).
func poolDisk(spec string, disks []emuDisk) (string, error) {
	kind, id, _ := strings.Cut(spec, ":")
	for _, d := range disks {
		if (kind == "name" && d.name == id) || (kind == "serial" && d.udev["ID_SERIAL_SHORT"] == id) {
			return "/dev/" + d.name, nil
		}
	}
	return "", fmt.Errorf("disk %s not found", spec)
}

// actPool imports, refuses or creates the pool name on devs.
func actPool(name string, devs []string, wipe bool) (string, error) {
	if !wipe {
		held := 0
		for _, dev := range devs {
			label, err := readLabel(dev)
			if err != nil {
				return "", err
			}
			switch label {
			case name:
				held++
			case "":
			default:
				return "refused", nil
			}
		}
		if held == len(devs) {
			return "imported", nil
		}
		if held > 0 {
			return "refused", nil
		}
	}
	head := make([]byte, poolWipe)
	copy(head, poolLabel+name+"\n")
	for _, dev := range devs {
		f, err := os.OpenFile(dev, os.O_WRONLY, 0)
		if err != nil {
			return "", err
		}
		_, err = f.WriteAt(head, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return "", fmt.Errorf("write %s: %w", dev, err)
		}
	}
	return "created", nil
}

// readLabel returns the pool name of dev's label, or "" for none.
func readLabel(dev string) (string, error) {
	f, err := os.Open(dev)
	if err != nil {
		return "", err
	}
	defer f.Close()
	buf := make([]byte, 512)
	if _, err := f.ReadAt(buf, 0); err != nil {
		return "", fmt.Errorf("read %s: %w", dev, err)
	}
	rest, ok := bytes.CutPrefix(buf, []byte(poolLabel))
	if !ok {
		return "", nil
	}
	name, _, _ := bytes.Cut(rest, []byte("\n"))
	return string(name), nil
}

var reportURLRE = regexp.MustCompile(`(?m)^REPORT_URL='([^']+)'$`)

// reportPools posts, as the first-boot script's report step does, what
// actPools did (its NAME:OUTCOME list) to the script's REPORT_URL, one
// "pool NAME OUTCOME" line each (a pool created with WIPE_DATA=1 is
// "wiped"). A script without a report URL posts nothing; a post that
// fails is a step of the log, as it is the script's warning.
func reportPools(script []byte, pools, fp string) {
	m := reportURLRE.FindSubmatch(script)
	if m == nil {
		return
	}
	wipe := bytes.Contains(script, []byte("\nWIPE_DATA=1\n"))
	var body strings.Builder
	for p := range strings.SplitSeq(pools, ",") {
		name, what, ok := strings.Cut(p, ":")
		if !ok {
			continue
		}
		switch {
		case what == "created" && wipe:
			what = "wiped"
		case what == "refused":
			what = "refused a disk holds another pool's label"
		}
		fmt.Fprintf(&body, "pool %s %s\n", name, what)
	}
	resp, err := client(fp).Post(string(m[1]), "text/plain", strings.NewReader(body.String()))
	if err != nil {
		step("first-boot: could not report to the window: %v", err)
		return
	}
	resp.Body.Close()
	step("first-boot: reported to the window: %d", resp.StatusCode)
}
