package introspect

import (
	"bytes"
	"debug/elf"
	"debug/macho"
	"io"
	"os"
	"runtime"
)

// BinaryHasFunctions reports whether the running binary has a function whose name contains
// prefix; known is false when its function table could not be read (a format other than ELF
// and Mach-O, or no such section), and the caller must then assume it has.
func BinaryHasFunctions(prefix string) (has, known bool) {
	table, closeTable, ok := functionTable()
	if !ok {
		return false, false
	}
	defer closeTable()
	has, err := readerContains(table, []byte(prefix))
	return has, err == nil
}

// readerContains reports whether r's bytes contain s, reading them a megabyte at a time (the
// table is tens of megabytes: read whole, it would be garbage the size of a run's heap many
// times over).
func readerContains(r io.Reader, s []byte) (bool, error) {
	buf := make([]byte, 1<<20)
	kept := 0 // the end of the last chunk, which s may straddle
	for {
		n, err := io.ReadFull(r, buf[kept:])
		window := buf[:kept+n]
		if bytes.Contains(window, s) {
			return true, nil
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		kept = min(len(s)-1, len(window))
		copy(buf, window[len(window)-kept:])
	}
}

// functionTable opens the running binary's .gopclntab section, the table of its functions.
func functionTable() (io.Reader, func(), bool) {
	path := "/proc/self/exe" // the running binary even if its file was replaced since
	if runtime.GOOS != "linux" {
		p, err := os.Executable()
		if err != nil {
			return nil, nil, false
		}
		path = p
	}
	if f, err := elf.Open(path); err == nil {
		if s := f.Section(".gopclntab"); s != nil && s.Type != elf.SHT_NOBITS {
			return s.Open(), func() { f.Close() }, true
		}
		f.Close()
		return nil, nil, false
	}
	if f, err := macho.Open(path); err == nil {
		if s := f.Section("__gopclntab"); s != nil {
			return s.Open(), func() { f.Close() }, true
		}
		f.Close()
	}
	return nil, nil, false
}
