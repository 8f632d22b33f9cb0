package web

import (
	"fmt"
	"strconv"
	"strings"
)

// A side-by-side view of a unified diff (git diff output). The diff is a
// candidate's, so its text is untrusted: it is only split into rows here
// and escaped by the template. Anything the parser does not recognise is
// kept as a note row, never dropped, so the side-by-side view never shows
// less than the diff says; the unified text is on the page too.

// diffFile is one file of a diff.
type diffFile struct {
	Old, New string
	// Notes are the file's header lines that are not paths or hunks
	// (mode changes, renames, "Binary files differ").
	Notes          []string
	Hunks          []diffHunk
	Added, Deleted int
}

// Name is what the page calls the file.
func (f diffFile) Name() string {
	switch {
	case f.New == "" || f.New == "/dev/null":
		return f.Old
	case f.Old != "" && f.Old != "/dev/null" && f.Old != f.New:
		return f.Old + " → " + f.New
	}
	return f.New
}

// diffHunk is one @@ hunk.
type diffHunk struct {
	Header string
	Rows   []diffRow
}

// diffRow is one line of the side-by-side table. Kind is "same" (context
// on both sides), "change" (a deleted line beside an added one), "del"
// (left only), "add" (right only) or "note" (a line the format adds, such
// as "\ No newline at end of file").
type diffRow struct {
	Kind            string
	LeftNo, RightNo int
	Left, Right     string
}

// maxDiffRows bounds the lines of a diff the side-by-side view reads
// (every line: content, headers, notes), so that a huge candidate cannot
// make a huge page; the unified text stays whole.
const maxDiffRows = 20000

// sideBySide parses a unified diff into files, hunks and paired rows:
// within a hunk, a run of deleted lines is paired with the run of added
// lines that follows it, row by row.
func sideBySide(diff string) []diffFile {
	var (
		files    []diffFile
		f        *diffFile
		h        *diffHunk
		left     int
		right    int
		dels     []string
		adds     []string
		delStart int
		addStart int
		rows     int
		// remL and remR are the lines the current hunk still has on
		// each side: its header's counts, so a deleted line that reads
		// "--- x" is content, not the next file's header.
		remL, remR int
	)
	flush := func() {
		if h == nil {
			dels, adds = nil, nil
			return
		}
		n := max(len(dels), len(adds))
		for i := 0; i < n; i++ {
			row := diffRow{}
			switch {
			case i < len(dels) && i < len(adds):
				row = diffRow{Kind: "change", LeftNo: delStart + i, RightNo: addStart + i, Left: dels[i], Right: adds[i]}
			case i < len(dels):
				row = diffRow{Kind: "del", LeftNo: delStart + i, Left: dels[i]}
			default:
				row = diffRow{Kind: "add", RightNo: addStart + i, Right: adds[i]}
			}
			h.Rows = append(h.Rows, row)
		}
		dels, adds = nil, nil
	}
	newFile := func() {
		flush()
		files = append(files, diffFile{})
		f, h = &files[len(files)-1], nil
	}
	for line := range strings.SplitSeq(strings.TrimSuffix(diff, "\n"), "\n") {
		if rows++; rows > maxDiffRows {
			flush()
			if f != nil {
				f.Notes = append(f.Notes, fmt.Sprintf("The side-by-side view stops after %d lines of the diff: the unified diff below is complete.", maxDiffRows))
			}
			break
		}
		inHunk := h != nil && (remL > 0 || remR > 0)
		if !inHunk {
			switch {
			case strings.HasPrefix(line, "diff --git "):
				newFile()
				if a, b, ok := gitPaths(line[len("diff --git "):]); ok {
					f.Old, f.New = a, b
				}
				continue
			case strings.HasPrefix(line, "--- "):
				if f == nil || len(f.Hunks) > 0 { // a plain unified diff's next file
					newFile()
				}
				f.Old = stripPrefix(line[4:], "a/")
				continue
			case f != nil && strings.HasPrefix(line, "+++ "):
				f.New = stripPrefix(line[4:], "b/")
				continue
			case strings.HasPrefix(line, "@@"):
				if f == nil {
					newFile()
				}
				flush()
				l, lc, r, rc, ok := hunkRange(line)
				if !ok {
					f.Notes = append(f.Notes, line)
					h = nil
					continue
				}
				f.Hunks = append(f.Hunks, diffHunk{Header: line})
				h, left, right, remL, remR = &f.Hunks[len(f.Hunks)-1], l, r, lc, rc
				continue
			case h != nil && strings.HasPrefix(line, "\\"):
				flush()
				h.Rows = append(h.Rows, diffRow{Kind: "note", Left: line})
				continue
			}
			if line == "" {
				continue
			}
			if f == nil {
				newFile()
			}
			flush()
			f.Notes = append(f.Notes, line)
			continue
		}
		switch {
		case strings.HasPrefix(line, "-"):
			if len(adds) > 0 { // a deletion after additions starts a new run
				flush()
			}
			if len(dels) == 0 {
				delStart = left
			}
			dels = append(dels, line[1:])
			left++
			remL--
			f.Deleted++
		case strings.HasPrefix(line, "+"):
			if len(adds) == 0 {
				addStart = right
			}
			adds = append(adds, line[1:])
			right++
			remR--
			f.Added++
		case strings.HasPrefix(line, " ") || line == "":
			flush()
			text := ""
			if line != "" {
				text = line[1:]
			}
			h.Rows = append(h.Rows, diffRow{Kind: "same", LeftNo: left, RightNo: right, Left: text, Right: text})
			left++
			right++
			remL--
			remR--
		default: // "\ No newline at end of file", or text the format does not have
			flush()
			h.Rows = append(h.Rows, diffRow{Kind: "note", Left: line})
		}
	}
	flush()
	return files
}

// gitPaths splits "a/x b/x" from a diff --git line. Paths with spaces are
// ambiguous there; the ---/+++ lines that follow set them exactly.
func gitPaths(s string) (string, string, bool) {
	if !strings.HasPrefix(s, "a/") {
		return "", "", false
	}
	i := strings.Index(s, " b/")
	if i < 0 {
		return "", "", false
	}
	return s[2:i], s[i+3:], true
}

func stripPrefix(p, prefix string) string {
	if i := strings.IndexByte(p, '\t'); i >= 0 { // "--- a/x\t2024-01-01 ..."
		p = p[:i]
	}
	if p == "/dev/null" {
		return p
	}
	return strings.TrimPrefix(p, prefix)
}

// hunkRange reads "@@ -l,n +r,m @@": the starting line and the line
// count of each side (a count left out is 1).
func hunkRange(line string) (l, lc, r, rc int, ok bool) {
	fields := strings.Fields(line)
	if len(fields) < 4 || fields[0] != "@@" || !strings.HasPrefix(fields[1], "-") || !strings.HasPrefix(fields[2], "+") {
		return 0, 0, 0, 0, false
	}
	rng := func(s string) (int, int, bool) {
		start, count, found := strings.Cut(s, ",")
		n, err := strconv.Atoi(start)
		if err != nil || n < 0 {
			return 0, 0, false
		}
		c := 1
		if found {
			if c, err = strconv.Atoi(count); err != nil || c < 0 {
				return 0, 0, false
			}
		}
		return n, c, true
	}
	l, lc, ok1 := rng(fields[1][1:])
	r, rc, ok2 := rng(fields[2][1:])
	return l, lc, r, rc, ok1 && ok2
}
