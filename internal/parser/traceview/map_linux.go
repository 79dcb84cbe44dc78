package traceview

import (
	"os"
	"syscall"
)

const canMap = true

var pageSize = os.Getpagesize()

// mapAt maps length bytes of f from off (a multiple of the page size),
// read-only, with the pages already read in (MAP_POPULATE: one fault-free
// pass instead of a fault per few pages).
func mapAt(f mapFile, off int64, length int) ([]byte, error) {
	return syscall.Mmap(int(f.Fd()), off, length, syscall.PROT_READ, syscall.MAP_PRIVATE|syscall.MAP_POPULATE)
}

func unmap(b []byte) { _ = syscall.Munmap(b) }
