package plasmanode

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/tofu"
)

type fakePrompter struct {
	answers []string
	err     error
	asked   []string
}

func (f *fakePrompter) Prompt(_ context.Context, q string) (string, error) {
	f.asked = append(f.asked, q)
	if f.err != nil {
		return "", f.err
	}
	if len(f.answers) == 0 {
		return "", nil
	}
	a := f.answers[0]
	f.answers = f.answers[1:]
	return a, nil
}

var errPromptBroken = errors.New("terminal gone")

// TestGate reproduces the ten cases of plasmactl-node's confirm_test.go.
func TestGate(t *testing.T) {
	clean := tofu.Summary{Imports: []tofu.Change{{Address: "hcloud_server.demo_web_001", ImportID: "1"}}}
	del := tofu.Summary{Deletes: []tofu.Change{{Address: "hcloud_server.demo_web_002", Type: "hcloud_server"}}}
	repl := tofu.Summary{Replacements: []tofu.Change{{Address: "hcloud_server.demo_web_003", Type: "hcloud_server", ChangedAttrs: []string{"image"}}}}
	destr := tofu.Summary{DestructiveUpdates: []tofu.Change{{Address: "ovh_dedicated_server.demo_web_001", Type: "ovh_dedicated_server",
		ChangedAttrs: []string{"display_name", "os"}, DestructiveAttrs: []string{"os"}}}}
	tests := map[string]struct {
		sum         tofu.Summary
		auto, allow bool
		deletes     []string // planned on purpose (a lowered count)
		allowDelete bool
		answers     []string
		promptErr   error
		want        bool
		wantErr     error
		wantInErr   []string
		wantAsked   []string
	}{
		"a no-op plan under auto-approve proceeds without prompts": {sum: clean, auto: true, want: true},
		"a no-op plan interactively asks y/N once":                 {sum: clean, answers: []string{"y"}, want: true, wantAsked: []string{PromptYN}},
		"a no-op plan interactively declined does not proceed":     {sum: clean, answers: []string{"n"}, wantAsked: []string{PromptYN}},
		"a delete is refused outright without prompts": {sum: del, auto: true, allow: true, wantErr: ErrDestructivePlan,
			wantInErr: []string{"refused", "delete", "hcloud_server.demo_web_002", "use destroy"}},
		"a replacement is refused outright without prompts": {sum: repl, answers: []string{"yes"}, wantErr: ErrDestructivePlan,
			wantInErr: []string{"refused", "replace", "hcloud_server.demo_web_003", "use destroy"}},
		"a destructive update under auto-approve without the flag is refused": {sum: destr, auto: true, wantErr: ErrDestructivePlan,
			wantInErr: []string{"allow destructive updates", "ovh_dedicated_server.demo_web_001 (os)"}},
		"a destructive update under auto-approve with the flag proceeds without prompts": {sum: destr, auto: true, allow: true, want: true},
		"a destructive update interactively needs a typed yes":                           {sum: destr, answers: []string{"yes"}, want: true, wantAsked: []string{PromptTyped}},
		"a destructive update interactively is blocked by a typed no":                    {sum: destr, answers: []string{"y"}, wantAsked: []string{PromptTyped}},
		"a destructive update interactively passes a prompt error through": {sum: destr, promptErr: errPromptBroken, wantErr: errPromptBroken,
			wantAsked: []string{PromptTyped}},
	}
	// Deletes planned on purpose, as provision plans them for a lowered
	// count.
	planned := []string{"hcloud_server.demo_web_002"}
	delDestr := tofu.Summary{Deletes: del.Deletes, DestructiveUpdates: destr.DestructiveUpdates}
	for name, tc := range map[string]struct {
		sum         tofu.Summary
		auto, allow bool
		deletes     []string
		allowDelete bool
		answers     []string
		promptErr   error
		want        bool
		wantErr     error
		wantInErr   []string
		wantAsked   []string
	}{
		"a planned delete under auto-approve alone is refused asking to allow deletes": {sum: del, auto: true, allow: true, deletes: planned,
			wantErr: ErrDestructivePlan, wantInErr: []string{"allow deletes as well as auto-approval", "hcloud_server.demo_web_002 (action: delete)"}},
		"a planned delete under auto-approve with --allow-delete proceeds":  {sum: del, auto: true, deletes: planned, allowDelete: true, want: true},
		"a planned delete interactively needs a typed yes":                  {sum: del, deletes: planned, answers: []string{"yes"}, want: true, wantAsked: []string{PromptTyped}},
		"a planned delete interactively is blocked by y":                    {sum: del, deletes: planned, answers: []string{"y"}, wantAsked: []string{PromptTyped}},
		"--allow-delete without --auto-approve still asks":                  {sum: del, deletes: planned, allowDelete: true, answers: []string{"no"}, wantAsked: []string{PromptTyped}},
		"a delete not planned is refused outright even with --allow-delete": {sum: del, auto: true, deletes: []string{"hcloud_server.other"}, allowDelete: true, wantErr: ErrDestructivePlan, wantInErr: []string{"use destroy"}},
		"a planned delete with destructive updates needs both flags":        {sum: delDestr, auto: true, deletes: planned, allowDelete: true, wantErr: ErrDestructivePlan, wantInErr: []string{"allow destructive updates"}},
		"a planned delete with destructive updates and both flags proceeds": {sum: delDestr, auto: true, allow: true, deletes: planned, allowDelete: true, want: true},
		"a planned delete with destructive updates interactively asks once": {sum: delDestr, deletes: planned, answers: []string{"yes"}, want: true, wantAsked: []string{PromptTyped}},
		"a replacement is refused outright even beside a planned delete":    {sum: tofu.Summary{Deletes: del.Deletes, Replacements: repl.Replacements}, auto: true, deletes: planned, allowDelete: true, wantErr: ErrDestructivePlan, wantInErr: []string{"replace"}},
	} {
		tests[name] = tc
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			fp := &fakePrompter{answers: tc.answers, err: tc.promptErr}
			got, err := Gate(context.Background(), tc.sum, GateOptions{Command: "join", AutoApprove: tc.auto, AllowDestructive: tc.allow, Prompter: fp,
				Deletes: tc.deletes, AllowDelete: tc.allowDelete})
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Gate() error = %v, want %v", err, tc.wantErr)
			}
			for _, s := range tc.wantInErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
			if got != tc.want {
				t.Errorf("Gate() = %v, want %v", got, tc.want)
			}
			if diff := cmp.Diff(tc.wantAsked, fp.asked); diff != "" {
				t.Errorf("prompts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGateWithoutPrompterRefuses(t *testing.T) {
	_, err := Gate(context.Background(), tofu.Summary{}, GateOptions{})
	if !errors.Is(err, ErrNoPrompter) {
		t.Errorf("Gate() error = %v, want ErrNoPrompter", err)
	}
}

// waitingPrompter waits for an answer that never comes, until ctx ends.
type waitingPrompter struct{}

func (waitingPrompter) Prompt(ctx context.Context, _ string) (string, error) {
	<-ctx.Done()
	return "", ctx.Err()
}

func TestGateEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ok, err := Gate(ctx, tofu.Summary{}, GateOptions{Prompter: waitingPrompter{}})
	if ok || !errors.Is(err, context.Canceled) {
		t.Errorf("Gate() = %v, %v; want false and an error wrapping context.Canceled", ok, err)
	}
}
