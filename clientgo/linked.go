package clientgo

import (
	"bytes"
	"debug/elf"
	"debug/macho"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/informersim/informersim/clientgo/internal/crhooks"
)

// Reading every goroutine's stack (bubbleRuns) stops the whole process while the runtime formats
// them: about 0.4 ms a read, once or twice a run, during which a run going on in parallel stops
// too (in a 2-run sweep the stop was a tenth of the wall time). The frames it looks for are all
// controller-runtime's, and no goroutine can be in a function the binary does not contain: a test
// binary that does not link controller-runtime (package clientgo does not; a client-go
// controller's tests do not) never needs the read. Whether it does is read from the binary's own
// function table, its .gopclntab section, which holds every function's name: once per process,
// after 32 reads (about 16 runs; the scan, ~10-15 ms, costs about what 25 reads do), so that a
// process of a few runs never pays for it.

// crFunctionPrefix begins the name of every function of controller-runtime.
const crFunctionPrefix = "sigs.k8s.io/controller-runtime/"

// stackReadsBeforeScan is how many stack reads a process makes before it looks into its binary.
const stackReadsBeforeScan = 32

var (
	stackReads    atomic.Int64
	scanOnce      sync.Once
	crNotInBinary atomic.Bool // set once the scan found no function of controller-runtime
)

// controllerRuntimeMayRun reports whether a goroutine of the process may be running
// controller-runtime's code: false only when the binary was read and holds none of it.
func controllerRuntimeMayRun() bool {
	if crNotInBinary.Load() {
		return false
	}
	if stackReads.Add(1) <= stackReadsBeforeScan {
		return true
	}
	scanOnce.Do(func() {
		if crhooks.ControllerNames != nil {
			return // clientgo/controllerruntime is linked, and controller-runtime with it
		}
		has, known := binaryHasFunctions(crFunctionPrefix)
		crNotInBinary.Store(known && !has)
	})
	return !crNotInBinary.Load()
}

// binaryHasFunctions reports whether the running binary has a function whose name contains
// prefix; known is false when its function table could not be read (a format other than ELF
// and Mach-O, or no such section), and the caller must then assume it has.
func binaryHasFunctions(prefix string) (has, known bool) {
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
