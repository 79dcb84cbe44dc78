package parquetio

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/parquet-go/parquet-go"

	"github.com/npuprof/npuprof/internal/infile"
)

// colFile reads the columns of one partition file page by page, from the
// pages' decoded data: no per-row reflection, and a dictionary-encoded
// string column costs one interned string per dictionary entry. The big
// tables (device_tasks, hccl_ops, framework_ops, links) are read this way;
// row structs (parquet.GenericReader) took longer than parsing the JSON.
//
// Each page's values go straight into the model's rows (fn(off, values)):
// nothing holds a whole column, so reading a table costs the model's own
// arrays plus one decoded page (docs/performance.md, "The Parquet read-back").
type colFile struct {
	path string
	f    *os.File
	pf   *parquet.File
}

func openCols(dir, table string, rank int) (*colFile, error) {
	p := PartFile(dir, table, rank)
	if err := infile.Check(p, infile.Opts{Root: dir}); err != nil && errkindOf(err) {
		return nil, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (an incomplete export? run npuprof export again)", p, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	pf, err := parquet.OpenFile(f, st.Size(), fileOptions...)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: not a Parquet file: %w", p, err)
	}
	return &colFile{path: p, f: f, pf: pf}, nil
}

// fileOptions: the reader needs neither the page index nor bloom filters
// (it reads every page in order), so they are not loaded.
var fileOptions = []parquet.FileOption{parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true)}

func (c *colFile) Close() error { return c.f.Close() }

func (c *colFile) rows() int { return int(c.pf.NumRows()) }

// pages calls fn with every page of the named column, in row order, and
// the row of the page's first value. A column must have one value per row:
// more values than the file has rows, or fewer, is an error naming it, and
// fn never sees a value past the last row.
func (c *colFile) pages(name string, fn func(off int, p parquet.Page) error) error {
	leaf, ok := c.pf.Schema().Lookup(name)
	if !ok {
		return fmt.Errorf("%s: no column %q", c.path, name)
	}
	n, off := c.rows(), 0
	for _, rg := range c.pf.RowGroups() {
		pages := rg.ColumnChunks()[leaf.ColumnIndex].Pages()
		for {
			p, err := pages.ReadPage()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				pages.Close()
				return fmt.Errorf("%s: column %s: %w", c.path, name, err)
			}
			k := int(p.NumValues())
			switch {
			case p.NumNulls() > 0:
				err = fmt.Errorf("%s: column %s has nulls", c.path, name)
			case k > n-off:
				err = fmt.Errorf("%s: column %s has more values than the file's %d rows", c.path, name, n)
			default:
				err = fn(off, p)
			}
			parquet.Release(p)
			if err != nil {
				pages.Close()
				return err
			}
			off += k
		}
		pages.Close()
	}
	if off != n {
		return fmt.Errorf("%s: column %s has %d values for %d rows", c.path, name, off, n)
	}
	return nil
}

func (c *colFile) kindErr(name string, p parquet.Page, want string) error {
	return fmt.Errorf("%s: column %s is %v, expected %s", c.path, name, p.Type(), want)
}

// checkLen guards against a page whose decoded data does not hold as many
// values as its header says.
func (c *colFile) checkLen(name string, p parquet.Page, got int) error {
	if int64(got) != p.NumValues() {
		return fmt.Errorf("%s: column %s: a page of %d values decoded to %d", c.path, name, p.NumValues(), got)
	}
	return nil
}

// number is the Go type of a fixed-size column: INT32, INT64 or DOUBLE.
type number interface{ int32 | int64 | float64 }

// kindOf is the physical kind of a column of V.
func kindOf[V number]() parquet.Kind {
	switch any(*new(V)).(type) {
	case int32:
		return parquet.Int32
	case int64:
		return parquet.Int64
	}
	return parquet.Double
}

// numbers reads an INT32, INT64 or DOUBLE column (V's kind, plain, no
// dictionary): fn gets each page's values and the row of the first.
func numbers[V number](c *colFile, name string, fn func(off int, vs []V)) error {
	kind := kindOf[V]()
	return c.pages(name, func(off int, p parquet.Page) error {
		if p.Type().Kind() != kind || p.Dictionary() != nil {
			return c.kindErr(name, p, kind.String())
		}
		d := p.Data()
		var vs []V
		switch kind {
		case parquet.Int32:
			vs = any(d.Int32()).([]V)
		case parquet.Int64:
			vs = any(d.Int64()).([]V)
		default:
			vs = any(d.Double()).([]V)
		}
		if err := c.checkLen(name, p, len(vs)); err != nil {
			return err
		}
		fn(off, vs)
		return nil
	})
}

// byteArrays reads a BYTE_ARRAY column, plain or dictionary-encoded,
// turning each value into a T with in (once per dictionary entry); fn gets
// the values chunk by chunk in one small buffer (a page holds up to 64k
// values; a page-sized []string would be a megabyte of garbage per page).
func byteArrays[T any](c *colFile, name string, in func([]byte) T, fn func(off int, vs []T)) error {
	const chunk = 1024
	var dict parquet.Dictionary
	var cache []T
	vals := make([]T, 0, chunk)
	return c.pages(name, func(off int, p parquet.Page) error {
		if p.Type().Kind() != parquet.ByteArray {
			return c.kindErr(name, p, "BYTE_ARRAY")
		}
		d := p.Data()
		if pd := p.Dictionary(); pd != nil {
			if pd != dict {
				dict = pd
				cache = make([]T, pd.Len())
				for i := range cache {
					cache[i] = in(pd.Index(int32(i)).ByteArray())
				}
			}
			ixs := d.Int32()
			if err := c.checkLen(name, p, len(ixs)); err != nil {
				return err
			}
			for len(ixs) > 0 {
				vals = vals[:0]
				for _, ix := range ixs[:min(chunk, len(ixs))] {
					if ix < 0 || int(ix) >= len(cache) {
						return fmt.Errorf("%s: column %s: dictionary index %d out of range", c.path, name, ix)
					}
					vals = append(vals, cache[ix])
				}
				fn(off, vals)
				off += len(vals)
				ixs = ixs[len(vals):]
			}
			return nil
		}
		data, offs := d.ByteArray()
		if err := c.checkLen(name, p, max(0, len(offs)-1)); err != nil {
			return err
		}
		vals = vals[:0]
		for i := 0; i+1 < len(offs); i++ {
			vals = append(vals, in(data[offs[i]:offs[i+1]]))
			if len(vals) == chunk {
				fn(off, vals)
				off += chunk
				vals = vals[:0]
			}
		}
		if len(vals) > 0 {
			fn(off, vals)
		}
		return nil
	})
}
