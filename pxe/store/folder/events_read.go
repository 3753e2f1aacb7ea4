package folder

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/plasmactl/plasma-node/internal/regularfile"
	"github.com/plasmactl/plasma-node/pxe/events"
)

// ReadEventsFile returns the events in the one file at path, in file order. A
// line that is not a JSON event, which only a writer killed mid-write
// leaves (the last line, or an earlier one that a later writer closed
// off), is skipped. A missing file gives no events and no error.
func ReadEventsFile(path string) ([]events.Event, error) {
	f, err := regularfile.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("read events %s: %w", path, err)
	}
	defer f.Close()
	var out []events.Event
	br := bufio.NewReader(f)
	for {
		line, err := br.ReadBytes('\n')
		if t := bytes.TrimSpace(line); len(t) > 0 {
			var e events.Event
			if json.Unmarshal(t, &e) == nil {
				out = append(out, e)
			}
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read events %s: %w", path, err)
		}
	}
}
