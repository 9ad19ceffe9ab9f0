package builtin

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/cadre-dev/cadre/tool"
)

//go:embed read.md
var readDescription string

// ReadInput is Read's input, as Claude Code names it.
type ReadInput struct {
	FilePath string `json:"file_path" jsonschema:"The absolute path to the file to read"`
	Offset   int    `json:"offset,omitempty" jsonschema:"The line number to start reading from (1-based). Only provide if the file is too large to read at once"`
	Limit    int    `json:"limit,omitempty" jsonschema:"The number of lines to read. Only provide if the file is too large to read at once"`
}

// ReadMeta is the Meta of a Read result, shaped like Claude Code's.
type ReadMeta struct {
	Type string       `json:"type"` // "text"
	File ReadFileMeta `json:"file"`
}

// ReadFileMeta describes the lines a Read call showed.
type ReadFileMeta struct {
	FilePath   string `json:"filePath"`
	Content    string `json:"content"`
	NumLines   int    `json:"numLines"`
	StartLine  int    `json:"startLine"`
	TotalLines int    `json:"totalLines"`
}

// Read returns the Read tool.
func Read(opts Options) tool.Tool {
	o := opts.withDefaults()
	t := tool.New(tool.Info{
		Name:            "Read",
		Description:     describe("Read", readDescription, o),
		InputSchema:     schema("read"),
		Access:          tool.AccessRead,
		ConcurrencySafe: true,
	}, func(ctx context.Context, env tool.Env, in ReadInput) (tool.Result, error) {
		return runRead(ctx, o, env, in)
	})
	t.TargetOf = func(env tool.Env, in ReadInput) string { return resolve(o, env, in.FilePath) }
	return t
}

// sniffLen is how much of a file decides whether it is text.
const sniffLen = 8 << 10

func runRead(ctx context.Context, o Options, env tool.Env, in ReadInput) (tool.Result, error) {
	if in.FilePath == "" {
		return tool.Errorf("file_path is empty: give the absolute path of the file to read."), nil
	}
	if in.Offset < 0 || in.Limit < 0 {
		return tool.Errorf("offset and limit must not be negative (got offset %d, limit %d); offset is the 1-based line to start at.", in.Offset, in.Limit), nil
	}
	path := resolve(o, env, in.FilePath)
	f, res, err := openForRead(path)
	if f == nil {
		return res, err
	}
	defer f.Close()

	head := make([]byte, sniffLen)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return tool.Result{}, fmt.Errorf("read %s: %w", path, err)
	}
	head = head[:n]
	if n == 0 {
		return tool.Result{
			Content: tool.Text(fmt.Sprintf("The file %s exists but is empty.", path)).Content,
			Meta:    ReadMeta{Type: "text", File: ReadFileMeta{FilePath: path, StartLine: 1}},
		}, nil
	}
	if kind, mime := classify(path, head); kind != "" {
		if kind == "image" {
			return tool.Errorf("Read cannot show images: %s is %s. Read only shows text files; use Bash (for example `file %s`) if you need facts about the image.", filepath.Base(path), mime, path), nil
		}
		return tool.Errorf("Read cannot show binary files: %s is %s. Use Bash with a suitable tool (file, strings, xxd, unzip -l, …) to inspect it.", filepath.Base(path), mime), nil
	}

	start := max(in.Offset, 1)
	limit := in.Limit
	if limit == 0 {
		limit = o.ReadLineLimit
	}
	br := bufio.NewReaderSize(io.MultiReader(bytes.NewReader(head), f), 64<<10)
	var (
		out, content strings.Builder
		total, shown int
		capped       bool
		lr           = lineReader{br: br}
	)
	for {
		if total%4096 == 0 && ctx.Err() != nil {
			return tool.Result{}, cancelled(ctx, "Read")
		}
		want := total+1 >= start && shown < limit && !capped
		keep := 0
		if want {
			keep = o.ReadLineMaxChars*utf8.UTFMax + 1
		}
		line, dropped, ok, err := lr.next(keep)
		if err != nil {
			return tool.Result{}, fmt.Errorf("read %s: %w", path, err)
		}
		if !ok {
			break
		}
		total++
		if !want {
			continue
		}
		text, cut := truncateRunes(string(line), o.ReadLineMaxChars)
		cut += dropped
		entry := fmt.Sprintf("%6d\t%s", total, text)
		if cut > 0 {
			entry += fmt.Sprintf("… [%d characters truncated]", cut)
		}
		if shown > 0 && out.Len()+len(entry)+1 > o.ReadMaxBytes {
			capped = true
			continue
		}
		out.WriteString(entry)
		out.WriteByte('\n')
		content.WriteString(text)
		content.WriteByte('\n')
		shown++
	}

	meta := ReadMeta{Type: "text", File: ReadFileMeta{
		FilePath: path, Content: content.String(), NumLines: shown, StartLine: start, TotalLines: total,
	}}
	if shown == 0 {
		return tool.Result{
			Content: tool.Text(fmt.Sprintf("The file %s has only %s, so there is nothing to show from offset %d. Use an offset between 1 and %d.", path, plural(total, "line"), start, total)).Content,
			Meta:    meta,
		}, nil
	}
	text := strings.TrimSuffix(out.String(), "\n")
	if last := start + shown - 1; last < total {
		text += fmt.Sprintf("\n\n(Showing lines %d-%d of %d", start, last, total)
		if capped {
			text += fmt.Sprintf("; output capped at %d bytes", o.ReadMaxBytes)
		}
		text += fmt.Sprintf(". Use offset=%d to read more.)", last+1)
	}
	return tool.Result{Content: tool.Text(text).Content, Meta: meta}, nil
}

// openForRead opens a regular file for reading, or explains why not in a
// result (f nil).
func openForRead(path string) (*os.File, tool.Result, error) {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, tool.Errorf("File does not exist: %s. Check the path, or use Glob to find the file.", path), nil
	case errors.Is(err, fs.ErrPermission):
		return nil, tool.Errorf("Permission denied: cannot read %s.", path), nil
	case err != nil:
		return nil, tool.Result{}, fmt.Errorf("stat %s: %w", path, err)
	case fi.IsDir():
		return nil, tool.Errorf("%s is a directory, not a file; use LS to list it.", path), nil
	case !fi.Mode().IsRegular():
		return nil, tool.Errorf("%s is not a regular file (it is a device, pipe or socket); Read only reads files.", path), nil
	}
	f, err := os.Open(path)
	switch {
	case errors.Is(err, fs.ErrPermission):
		return nil, tool.Errorf("Permission denied: cannot read %s.", path), nil
	case err != nil:
		return nil, tool.Result{}, fmt.Errorf("open %s: %w", path, err)
	}
	return f, tool.Result{}, nil
}

// lineReader yields lines without their line ending, keeping at most a
// given number of bytes of each so that a huge single-line file costs no
// more memory than a short one.
type lineReader struct {
	br  *bufio.Reader
	buf []byte
}

// next returns the next line (at most keep bytes of it), how many
// characters beyond keep were dropped, and false at the end of input.
func (r *lineReader) next(keep int) (line []byte, dropped int, ok bool, err error) {
	r.buf = r.buf[:0]
	for {
		chunk, err := r.br.ReadSlice('\n')
		if len(chunk) > 0 {
			ok = true
		}
		room := max(keep-len(r.buf), 0)
		if room >= len(chunk) {
			r.buf = append(r.buf, chunk...)
		} else {
			for room > 0 && !utf8.RuneStart(chunk[room]) {
				room-- // keep whole characters only
			}
			r.buf = append(r.buf, chunk[:room]...)
			dropped += runeStarts(bytes.TrimRight(chunk[room:], "\r\n"))
		}
		switch {
		case err == nil, errors.Is(err, io.EOF):
			line = bytes.TrimSuffix(r.buf, []byte("\n"))
			line = bytes.TrimSuffix(line, []byte("\r"))
			return line, dropped, ok, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return nil, 0, false, err
		}
	}
}

// runeStarts counts the characters in b, which may begin or end in the
// middle of one (chunks split lines anywhere).
func runeStarts(b []byte) int {
	n := 0
	for _, c := range b {
		if utf8.RuneStart(c) {
			n++
		}
	}
	return n
}

// classify says whether a file is an "image", other "binary" data, or text
// (""), with its media type, from its name and first bytes.
func classify(path string, head []byte) (kind, mime string) {
	ext := strings.ToLower(filepath.Ext(path))
	if m, ok := imageType(ext); ok {
		return "image", m
	}
	sniffed := http.DetectContentType(head)
	base, _, _ := strings.Cut(sniffed, ";")
	switch {
	case strings.HasPrefix(base, "image/") && base != "image/svg+xml":
		return "image", base
	case ext == ".pdf" || base == "application/pdf":
		return "binary", "application/pdf"
	case strings.HasPrefix(base, "audio/"), strings.HasPrefix(base, "video/"), strings.HasPrefix(base, "font/"),
		base == "application/zip", base == "application/x-gzip", base == "application/wasm",
		base == "application/x-rar-compressed", base == "application/ogg", base == "application/vnd.ms-fontobject":
		return "binary", base
	case bytes.IndexByte(head, 0) >= 0:
		return "binary", "binary data (application/octet-stream)"
	}
	return "", ""
}

// imageType maps an image file extension to its media type; content
// sniffing catches images with other names.
func imageType(ext string) (string, bool) {
	switch ext {
	case ".png":
		return "image/png", true
	case ".jpg", ".jpeg":
		return "image/jpeg", true
	case ".gif":
		return "image/gif", true
	case ".webp":
		return "image/webp", true
	case ".bmp":
		return "image/bmp", true
	case ".ico":
		return "image/x-icon", true
	case ".tif", ".tiff":
		return "image/tiff", true
	case ".heic", ".heif":
		return "image/" + ext[1:], true
	case ".avif":
		return "image/avif", true
	}
	return "", false
}
