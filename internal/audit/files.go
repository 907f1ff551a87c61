package audit

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// On disk, next to the active file <file>:
//
//	<file>.lock                                   the cross-process lock (never deleted)
//	<file>.segment-<first:20>-<last:20>-<uuid>    a rotated segment: sequences first..last, segmentId uuid
//	<file>.checkpoint-<next:20>-<uuid>.json       a retention checkpoint: the chain resumes at sequence next
//	.<file>.checkpoint-<uuid>.tmp                 a checkpoint being written (renamed into place)

const (
	segmentInfix    = ".segment-"
	checkpointInfix = ".checkpoint-"
	// maxDirMatches bounds the ledger files one directory scan collects.
	maxDirMatches = 4096
	// maxCheckpoints and maxCheckpointBytes bound retention checkpoints.
	maxCheckpoints     = 16
	maxCheckpointBytes = 16 << 10
)

// segmentFile is a rotated segment, decoded from its name.
type segmentFile struct {
	name        string // base name
	first, last uint64
	segmentID   string
}

// checkpointFile is a retention checkpoint, decoded from its name.
type checkpointFile struct {
	name string
	next uint64
	uuid string
}

func segmentName(base string, first, last uint64, segID string) string {
	return fmt.Sprintf("%s%s%020d-%020d-%s", base, segmentInfix, first, last, segID)
}

func checkpointName(base string, next uint64, id string) string {
	return fmt.Sprintf("%s%s%020d-%s.json", base, checkpointInfix, next, id)
}

func checkpointTempPrefix(base string) string { return "." + base + checkpointInfix }

func parseSeq20(s string) (uint64, bool) {
	if len(s) != 20 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	u, err := strconv.ParseUint(s, 10, 64)
	return u, err == nil
}

func parseSegmentName(base, name string) (segmentFile, bool) {
	rest, ok := strings.CutPrefix(name, base+segmentInfix)
	if !ok || len(rest) != 20+1+20+1+36 || rest[20] != '-' || rest[41] != '-' {
		return segmentFile{}, false
	}
	first, ok1 := parseSeq20(rest[:20])
	last, ok2 := parseSeq20(rest[21:41])
	id := rest[42:]
	if !ok1 || !ok2 || first == 0 || last < first || !uuidRE.MatchString(id) {
		return segmentFile{}, false
	}
	return segmentFile{name: name, first: first, last: last, segmentID: id}, true
}

func parseCheckpointName(base, name string) (checkpointFile, bool) {
	rest, ok := strings.CutPrefix(name, base+checkpointInfix)
	if !ok {
		return checkpointFile{}, false
	}
	rest, ok = strings.CutSuffix(rest, ".json")
	if !ok || len(rest) != 20+1+36 || rest[20] != '-' {
		return checkpointFile{}, false
	}
	next, ok := parseSeq20(rest[:20])
	if !ok || next < 2 || !uuidRE.MatchString(rest[21:]) {
		return checkpointFile{}, false
	}
	return checkpointFile{name: name, next: next, uuid: rest[21:]}, true
}

// ledgerFiles is what a directory scan found for one ledger.
type ledgerFiles struct {
	segments    []segmentFile // sorted by first sequence
	checkpoints []checkpointFile
	temps       []string // abandoned checkpoint temp files
	// bad names a file that carries the ledger's prefix but no valid name.
	bad string
}

// scanDir lists the ledger's rotated segments and checkpoints without
// holding more than the matching names in memory.
func scanDir(dir, base string) (ledgerFiles, error) {
	var lf ledgerFiles
	d, err := os.Open(dir)
	if err != nil {
		return lf, err
	}
	defer d.Close()
	matches := 0
	tmpPrefix := checkpointTempPrefix(base)
	for {
		names, err := d.Readdirnames(256)
		for _, n := range names {
			switch {
			case strings.HasPrefix(n, base+segmentInfix):
				matches++
				if s, ok := parseSegmentName(base, n); ok {
					lf.segments = append(lf.segments, s)
				} else if lf.bad == "" {
					lf.bad = n
				}
			case strings.HasPrefix(n, base+checkpointInfix):
				matches++
				if c, ok := parseCheckpointName(base, n); ok {
					lf.checkpoints = append(lf.checkpoints, c)
				} else if lf.bad == "" {
					lf.bad = n
				}
			case strings.HasPrefix(n, tmpPrefix) && strings.HasSuffix(n, ".tmp"):
				matches++
				lf.temps = append(lf.temps, n)
			default:
				continue
			}
			if matches > maxDirMatches {
				return lf, fmt.Errorf("more than %d ledger files in %s", maxDirMatches, dir)
			}
		}
		if errors.Is(err, io.EOF) || (err == nil && len(names) == 0) {
			break
		}
		if err != nil {
			return lf, err
		}
	}
	sort.Slice(lf.segments, func(i, j int) bool {
		if lf.segments[i].first != lf.segments[j].first {
			return lf.segments[i].first < lf.segments[j].first
		}
		return lf.segments[i].name < lf.segments[j].name
	})
	sort.Slice(lf.checkpoints, func(i, j int) bool {
		if lf.checkpoints[i].next != lf.checkpoints[j].next {
			return lf.checkpoints[i].next < lf.checkpoints[j].next
		}
		return lf.checkpoints[i].name < lf.checkpoints[j].name
	})
	return lf, nil
}

// splitPath returns the directory and base name of a ledger path.
func splitPath(path string) (dir, base string) {
	return filepath.Dir(path), filepath.Base(path)
}
