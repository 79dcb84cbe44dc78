//go:build !linux

package traceview

import "errors"

// Mapping is used on Linux only (where npuprof's users run); elsewhere the
// file is read.
const canMap = false

var pageSize = 4096

func mapAt(mapFile, int64, int) ([]byte, error) { return nil, errors.New("no mapping") }

func unmap([]byte) {}
