package registry

import (
	"errors"
	"fmt"
	"strings"
)

// MaxFirstBootReport bounds the body of a first-boot hook's report: a
// line for each data pool fits many times over.
const MaxFirstBootReport = 8 << 10

// maxReportWhy bounds the reason of one refused pool in a report.
const maxReportWhy = 300

// ErrInvalidFirstBootReport is what [ParseFirstBootReport] returns for a
// body that is not a first-boot hook's report.
var ErrInvalidFirstBootReport = errors.New("invalid first-boot report")

// What a node's first-boot hook did with one data pool, as its report
// says ([FirstBootScript]).
const (
	// PoolExists: the pool was imported already; it was left alone.
	PoolExists = "exists"
	// PoolImported: the pool was found on its disks and imported, its
	// data kept (a reinstall that keeps data).
	PoolImported = "imported"
	// PoolCreated: the pool was created on disks that held no pool.
	PoolCreated = "created"
	// PoolWiped: the pool was created anew over what its disks held
	// (a reinstall wiping the data pools).
	PoolWiped = "wiped"
	// PoolRefused: the hook did not create the pool; Why says why.
	PoolRefused = "refused"
)

// PoolFinding is one line of a first-boot hook's report.
type PoolFinding struct {
	// Pool is the data pool's name.
	Pool string
	// Outcome is [PoolExists], [PoolImported], [PoolCreated],
	// [PoolWiped] or [PoolRefused].
	Outcome string
	// Why says, for a refused pool, why.
	Why string
}

// FirstBootReport is what a node's first-boot hook found and did with
// its data pools, in the order it went through them.
type FirstBootReport []PoolFinding

// ParseFirstBootReport reads the body a first-boot hook posts: at most
// [MaxFirstBootReport] bytes of printable ASCII, one line per pool,
// "pool NAME OUTCOME", with a reason after a refused one's outcome. An
// empty body is a node without data pools. Errors wrap
// [ErrInvalidFirstBootReport] and quote nothing of the body.
func ParseFirstBootReport(body []byte) (FirstBootReport, error) {
	if len(body) > MaxFirstBootReport {
		return nil, fmt.Errorf("%w: over %d bytes", ErrInvalidFirstBootReport, MaxFirstBootReport)
	}
	var out FirstBootReport
	for i, line := range strings.Split(strings.TrimRight(string(body), "\n"), "\n") {
		if line == "" && i == 0 {
			break
		}
		for _, c := range line {
			if c < 0x20 || c > 0x7e {
				return nil, fmt.Errorf("%w: line %d holds a character that is not printable ASCII", ErrInvalidFirstBootReport, i+1)
			}
		}
		f := strings.SplitN(line, " ", 4)
		if len(f) < 3 || f[0] != "pool" {
			return nil, fmt.Errorf("%w: line %d is not \"pool NAME OUTCOME\"", ErrInvalidFirstBootReport, i+1)
		}
		if err := validatePoolName(f[1]); err != nil {
			return nil, fmt.Errorf("%w: line %d names no valid pool", ErrInvalidFirstBootReport, i+1)
		}
		p := PoolFinding{Pool: f[1], Outcome: f[2]}
		switch p.Outcome {
		case PoolExists, PoolImported, PoolCreated, PoolWiped:
			if len(f) == 4 {
				return nil, fmt.Errorf("%w: line %d: only a refused pool has a reason", ErrInvalidFirstBootReport, i+1)
			}
		case PoolRefused:
			if len(f) < 4 || len(f[3]) > maxReportWhy {
				return nil, fmt.Errorf("%w: line %d: a refused pool needs a reason of at most %d characters", ErrInvalidFirstBootReport, i+1, maxReportWhy)
			}
			p.Why = f[3]
		default:
			return nil, fmt.Errorf("%w: line %d: outcome is not one of exists, imported, created, wiped, refused", ErrInvalidFirstBootReport, i+1)
		}
		out = append(out, p)
	}
	return out, nil
}

// String says what the hook did, for the node's timeline: "pool tank
// found and imported, its data kept; pool fast created", or "no data
// pools".
func (r FirstBootReport) String() string {
	if len(r) == 0 {
		return "no data pools"
	}
	parts := make([]string, len(r))
	for i, p := range r {
		s := "pool " + p.Pool + " "
		switch p.Outcome {
		case PoolExists:
			s += "already imported, left alone"
		case PoolImported:
			s += "found and imported, its data kept"
		case PoolCreated:
			s += "created"
		case PoolWiped:
			s += "created anew, its disks wiped"
		case PoolRefused:
			s += "refused: " + p.Why
		}
		parts[i] = s
	}
	return strings.Join(parts, "; ")
}
