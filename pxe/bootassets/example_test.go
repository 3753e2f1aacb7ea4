package bootassets_test

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/plasmactl/plasma-node/pxe/bootassets"
)

// Stage a Proxmox VE ISO as netboot assets, with the console boot-disk
// prompt, and check them the way serve does. (The ISO here is a tiny
// stand-in in the Proxmox layout.)
func ExamplePrepare() {
	dir, err := os.MkdirTemp("", "prepare-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	iso := filepath.Join(dir, "proxmox-ve_9.2-1.iso")
	if err := gunzip("testdata/pve-tiny.iso.gz", iso); err != nil {
		fmt.Println(err)
		return
	}

	ctx := context.Background()
	rel, err := bootassets.Prepare(ctx, bootassets.PrepareOptions{
		ISO:      iso,
		StateDir: filepath.Join(dir, "state"),
		PatchAsk: true,
		// AnswerURL: "http://192.0.2.10:8090/answer" would bake the URL into
		// a copy of the ISO (needs xorriso).
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rel.Name, rel.ProductLong, "patched:", rel.AskPatched)
	for _, a := range rel.Assets {
		fmt.Println(" ", a.Name)
	}
	if _, err := bootassets.VerifyRelease(ctx, rel.Dir); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("verified")
	// Output:
	// 9.2-1 Proxmox VE patched: true
	//   linux26
	//   initrd.img
	//   proxmox.iso
	//   initrd-netboot.img
	//   ask-overlay.cpio
	// verified
}

func gunzip(from, to string) error {
	f, err := os.Open(from)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, zr); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
