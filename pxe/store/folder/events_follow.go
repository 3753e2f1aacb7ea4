package folder

import (
	"context"
	"time"

	"github.com/plasmactl/plasma-node/pxe/events"
)

// Read returns up to max events after the event of id ("" from the
// oldest kept, [events.FromNow] none), oldest first. An id whose file
// the rotation removed reads from the oldest event kept.
func (s *Events) Read(_ context.Context, after string, max int) ([]events.Record, error) {
	t, err := openTail(s.path, after)
	if err != nil {
		return nil, err
	}
	defer t.close()
	var out []events.Record
	for {
		recs, err := t.next()
		if err != nil {
			return out, err
		}
		if len(recs) == 0 {
			return out, nil
		}
		out = append(out, recs...)
		if max > 0 && len(out) >= max {
			return out[:max], nil
		}
	}
}

// Follow calls fn with each event after the event of id, then with each
// one appended later: at once for this Events's own appends, within the
// poll interval for other processes'. It returns ctx's error when ctx
// ends, or fn's error.
func (s *Events) Follow(ctx context.Context, after string, fn func(events.Record) error) error {
	return follow(ctx, s.path, after, nil, s.poll, s.appended, fn)
}

func follow(ctx context.Context, path, after string, kinds []events.Kind, poll time.Duration, appended func() <-chan struct{}, fn func(events.Record) error) error {
	t, err := openTail(path, after)
	if err != nil {
		return err
	}
	t.kinds = kinds
	defer t.close()
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		var woken <-chan struct{}
		if appended != nil {
			woken = appended() // before reading, so no append is missed
		}
		recs, err := t.next()
		if err != nil {
			return err
		}
		for _, r := range recs {
			if err := fn(r); err != nil {
				return err
			}
		}
		if len(recs) > 0 {
			continue
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-woken:
		case <-tick.C:
		}
	}
}
